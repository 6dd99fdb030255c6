//! Integration tests for the `toolgate` program, run as a real process.

#![allow(clippy::unwrap_used, clippy::expect_used)]

// Running the binary and reading its output; fixture paths.
mod util;

// `toolgate digest`: exact output in both forms, labels, input shapes, exit codes.
mod digest;

// `toolgate key`, `toolgate jcs` and `toolgate diff`.
mod key_jcs_diff;
