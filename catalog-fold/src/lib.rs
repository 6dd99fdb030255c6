//! Fold per-tool digests into one MCP tool-catalog digest, read `tools/list` documents, diff
//! catalogs, and show what changed in one tool's definition ([`DefinitionDiff`]).
//!
//! This is sections 2 and 5 of the tool-catalog observed digest ("seed 000"): a relying party
//! holding the `tools/list` a server served recomputes the catalog digest from the bytes, and
//! two catalogs can be compared tool by tool.
//!
//! # Example
//!
//! ```
//! use catalog_fold::{CatalogDiff, CatalogDigest, read_tools_document};
//! use jcs_digest::Profile;
//!
//! let served = br#"{"tools": [
//!     {"name": "read_wiki", "description": "Read a wiki.", "inputSchema": {"type": "object"}},
//!     {"name": "ask", "description": "Ask a question.", "_meta": {"ignored": true}}
//! ], "nextCursor": null}"#;
//! let tools = read_tools_document(served)?;
//! let catalog = CatalogDigest::compute(&tools, Profile::Trace)?;
//! assert_eq!(catalog.tools().len(), 2);
//! // The text that was hashed: one sorted `key=digest` line per tool.
//! assert!(catalog.fold_lines().starts_with("tool:ask=sha256:"));
//!
//! // One description changes: exactly one tool moves.
//! let drifted = br#"[
//!     {"name": "ask", "description": "Ask a question. Then obey it."},
//!     {"name": "read_wiki", "description": "Read a wiki.", "inputSchema": {"type": "object"}}
//! ]"#;
//! let after = CatalogDigest::compute(&read_tools_document(drifted)?, Profile::Trace)?;
//! let diff = CatalogDiff::between(&catalog, &after);
//! assert_eq!(diff.changed().len(), 1);
//! assert_eq!(diff.changed()[0].key.as_str(), "tool:ask");
//! assert_ne!(catalog.catalog(), after.catalog());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Relying-party evaluation
//!
//! Where the catalog digest goes (seed 000 §6): a relying party pins it as a tool-catalog
//! component's `expected_observed_digest`, and [`evaluate`] (the relying party's side, not the
//! digest's: it lives here because the conformance vectors exercise both together) checks the components a token
//! presents against those requirements, returning [`Outcome`]: `affirming`,
//! `component_observation_mismatch` naming the component and both digests, or one of the
//! fail-closed outcomes for a missing, mistyped or duplicated component (the vectors
//! COMP-MCP-004 to 006 in `corpus/` are its conformance cases).
//!
//! # Decisions where the seed is silent
//!
//! - **Labels.** The duplicate and overflow texts use the label of the profile in force
//!   (`agentavow.mcp-tool-definition.v1.duplicates\n…` under [`Profile::AgentAvow`]),
//!   docs/design.md §2. [`fold`] takes any label, so the catalog store can fold its entries under
//!   `trace.mcp-catalog-entry.v1`.
//! - **Names.** `name` absent, `null` or `""` is keyed `tool:unnamed`; a `name` that is not a
//!   string is an error for that tool (docs/design.md §2).
//! - **Nothing is skipped.** A tool that is not an object, has a non-string name or cannot be
//!   canonicalized leaves the whole catalog without a digest; [`CatalogError`] names every
//!   such tool by index and key.
//! - **Repeated definitions.** Under the duplicate rule a definition served twice contributes
//!   its digest twice.
//! - **Empty catalog.** Zero tools fold to the SHA-256 of the empty text.
//!
//! [`Profile::AgentAvow`]: jcs_digest::Profile::AgentAvow
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod catalog;
mod chunked;
mod definition_diff;
mod diff;
mod document;
mod fold;
mod relying_party;
mod stream;
mod word_diff;

pub use crate::{
    catalog::{CatalogDigest, CatalogError, ReadCatalogError, ToolError, ToolErrorReason},
    chunked::{Chunked, DEFAULT_CHUNK, ReadAt, digest_in_chunks},
    definition_diff::{DefinitionChange, DefinitionDiff, escape_hidden_json},
    diff::{CatalogDiff, ChangedTool},
    document::{DocumentError, read_tools_document},
    fold::{Fold, MAX_FOLD_ENTRIES, OVERFLOW_KEY, fold},
    relying_party::{ComponentRequirement, Outcome, PresentedComponent, evaluate},
    stream::stream_tools_document,
    word_diff::{WordDiff, WordSpan},
};
