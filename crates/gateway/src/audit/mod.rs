//! `audit` (in progress).
