//! Integration tests for `catalog-key`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

// Every case seed 000 §4 names, with expected keys written by hand from the rules.
mod rules;
// Reading key text back with `FromStr`: accepted keys and every `ToolKeyParseError`.
mod parse;
// Property tests: printable output, bounded length, injectivity of uncut bodies, cut shape,
// determinism, and that `FromStr` accepts every produced key.
mod properties;
