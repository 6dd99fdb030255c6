//! Integration tests for `jcs-digest`.
