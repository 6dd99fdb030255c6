//! Integration tests for `catalog-store`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

// Shared fixtures and independently computed digests.
mod support;

// Valid catalogs: both file shapes, lookup, normalization, servers, examples/catalog.json.
mod valid;
// One fixture per validation rule, each asserting the exact message.
mod validation;
// Duplicate tool names: seed 003 §3's message, word for word.
mod collision;
// One server, one identity: a URL (host and port) bound to two anchor sets refuses the catalog.
mod one_identity;
// Local (stdio) servers: command, cwd, env, inherit_env, entrypoint_digests.
mod local;
// Warnings that do not refuse: unrecommended names and lookalikes across servers.
mod warnings;
// The catalog measurement: independent values, sensitivity to each binding, order invariance.
mod measurement;
// Hostile input: arbitrary and mutated bytes never panic; deep nesting is an error.
mod hostile;
// The loader against its own past: a corpus digested as the tree loader of 6b7f472 loaded it.
mod as_before;
