//! `upstream` (in progress).
