//! `demo` (in progress).
