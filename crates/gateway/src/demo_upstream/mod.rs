//! `demo_upstream` (in progress).
