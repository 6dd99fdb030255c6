//! `server` (in progress).
