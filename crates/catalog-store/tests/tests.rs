//! Integration tests for `catalog-store`.
