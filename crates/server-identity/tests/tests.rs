//! Integration tests for `server-identity`.
