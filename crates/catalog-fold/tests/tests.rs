//! Integration tests for `catalog-fold`.
