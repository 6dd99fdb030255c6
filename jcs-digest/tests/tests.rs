//! Integration tests for `jcs-digest`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

// Locating and reading the committed test material in `corpus/` (fails clearly when it is missing).
mod material;

// Byte-exact agreement with corpus/jcs: the six cyberphone input/output pairs,
// RFC 8785 Appendix B (including the refused NaN and Infinity rows) and 10,000 ES6 numbers.
mod vectors;

// Every refusal of the strict reader: kind, JSON Pointer, offset, line, column and Display.
mod strict_errors;

// What the strict reader accepts, and the values it produces (number kinds, escapes, depth).
mod strict_values;

// The canonicalizer on values built in code: escaping, UTF-16 member order, numbers, errors.
mod canonical;

// The `sha256:` digest type: hashing, text form, parse errors, equality, order.
mod digest;

// The deterministic generated catalogs the bench uses (shared with other crates; not edited here).
#[path = "../../bench/catalog_gen.rs"]
mod catalog_gen;

// The per-tool definition digest: pinned deepwiki digests, member restriction, profiles.
mod tool;

// The streaming path against the tree path: vectors and ES6 numbers as text, tool digests,
// the walk API, depth; its `agreed` helper checks every input of strict_errors and strict_values.
mod stream;

// Random spellings of a value (whitespace, member order, escapes, number forms); shared with
// catalog-fold's tests.
mod spelling;

// Property tests of the streaming path: random spellings of values and catalogs, arbitrary and
// mutated bytes, the same bytes, digests or errors as the tree path.
mod stream_properties;

// Property tests: serde_jcs 0.2 as an oracle, round trip through the strict reader,
// idempotence, and no panic on arbitrary bytes.
mod properties;
