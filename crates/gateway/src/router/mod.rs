//! `router` (in progress).
