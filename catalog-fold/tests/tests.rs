//! Integration tests for `catalog-fold`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

// Shared helpers: reading the pinned catalogs, hashing hand-written text with sha2.
mod support;
// `read_tools_document`: the three accepted shapes and every `DocumentError`.
mod documents;
// `CatalogDigest::compute` refusals: every `ToolErrorReason` and the `CatalogError` message.
mod catalog_errors;
// The duplicate and overflow rules (seed 000 §5), checked against text hashed by hand.
mod edge_rules;
// The properties seed 000 §8 claims, and `CatalogDiff`.
mod properties;
// The pinned deepwiki and everything catalogs against digests computed independently in Python.
mod pinned;
// The conformance corpus (corpus/): every value of digests.json and COMP-MCP-004..006 recomputed
// from the catalog bytes through the libraries, and the seed 000 §8 properties on those bytes.
mod corpus;
// `DefinitionDiff`: exact output for text, schema and member changes; agreement with the digest.
mod definition_diff;
// Random spellings of a value (whitespace, member order, escapes, number forms), from jcs-digest.
#[path = "../../jcs-digest/tests/spelling.rs"]
mod spelling;
// The streaming document path (`stream_tools_document`, `CatalogDigest::from_document`) against
// the tree path on generated catalogs of every shape; `support::read_both` does the same for
// every document the other modules read.
mod stream;
// `digest_in_chunks` (a document read a window at a time): the depth limit in every shape,
// tools arrays the shape does not pick, a file, a cut source, read errors.
mod chunked;
