//! Load and validate a tool-identity catalog: each MCP tool name bound to one upstream server
//! identity and one approved definition, with collision detection, a lookup index and the
//! catalog measurement.
//!
//! # Example
//!
//! ```
//! use catalog_store::Catalog;
//!
//! let catalog = Catalog::from_slice(br#"[{
//!     "tool_name": "crm.query",
//!     "upstream_name": "query",
//!     "server": {
//!         "url": "https://crm.example.com/mcp",
//!         "tls_fingerprint": "SHA256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"
//!     },
//!     "approved_definition": {"description": "Query CRM records", "input_schema": {"type": "object"}},
//!     "definition_hash": "sha256:d27e33c778705256484428f8af088870389f4e23b9cd2265971c03d9142f38d8",
//!     "added_at": "2026-06-01T00:00:00Z",
//!     "approved_by": "security@example.com"
//! }]"#)?;
//!
//! // The gateway looks a call up by its catalog name, and forwards it under the upstream name.
//! let entry = catalog.lookup("crm.query").ok_or("not in catalog")?;
//! assert_eq!(entry.upstream_name(), "query");
//! // The server is a network one, reached at a URL parsed once, at load.
//! let server = entry.server().network().ok_or("not a network server")?;
//! assert_eq!(server.url().as_str(), "https://crm.example.com/mcp");
//! assert_eq!((server.url().authority(), server.url().port()), ("crm.example.com", 443));
//! // The definition is normalized to MCP member names, with "name" = upstream_name.
//! assert_eq!(entry.approved_definition()["inputSchema"]["type"], "object");
//! assert_eq!(entry.approved_definition()["name"], "query");
//! assert!(catalog.lookup("crm.Query").is_none());
//!
//! // One digest over every binding: the gateway's audit log starts from it.
//! assert!(catalog.measurement().digest().to_string().starts_with("sha256:"));
//!
//! // A duplicate tool name refuses the whole catalog, with seed 003 §3's message.
//! let entry_text = r#"{"tool_name": "t", "server": {"url": "https://a.example/mcp",
//!     "spiffe_id": "spiffe://corp.example/a"}, "approved_definition": {"inputSchema": {}},
//!     "definition_hash": "sha256:6a80b2f617de5a98e8b34d2797d416341e2cac9953bb8104375e4e1a0c27d492",
//!     "added_at": "2026-06-01T00:00:00Z", "approved_by": "me"}"#;
//! let twice = format!("[{entry_text}, {entry_text}]");
//! let error = Catalog::from_slice(twice.as_bytes()).unwrap_err();
//! assert_eq!(error.errors().len(), 1);
//! assert_eq!(
//!     error.errors()[0].to_string(),
//!     "Duplicate tool name in catalog: \"t\" is registered by two different servers:\n  \
//!      - https://a.example/mcp (spiffe_id: spiffe://corp.example/a)\n  \
//!      - https://a.example/mcp (spiffe_id: spiffe://corp.example/a)\n\
//!      Each tool name must map to exactly one upstream server."
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # What is checked
//!
//! Every problem is reported, not only the first, each naming the entry (index and
//! `tool_name`), the field (a JSON Pointer) and the fix: strict JSON (docs/design.md §2); unknown
//! members anywhere; missing members; an identity anchor on every server; `https` URLs with a
//! host and no user info or fragment; for local (stdio) servers, a `command` whose program is
//! absolute or found on `PATH` and listed in `entrypoint_digests`, an absolute `cwd`, `env` and
//! `inherit_env` variable names; fingerprints, SPIFFE IDs, `rotation_mode` and
//! `tls_trust` as `server-identity` parses them; RFC 3339 `added_at`; a `definition_hash` that
//! recomputes; one identity per server (entries whose URLs reach the same `https` host and
//! port must carry the same anchors); and unique tool names (seed 003 §3); names without
//! control characters. Names outside MCP's recommended form, lookalike names across servers,
//! names equal after NFC, and invisible or direction-changing characters in approved
//! definitions ([`invisible_text`], public for checking live definitions too) are
//! [`CatalogWarning`]s. The crate's
//! README describes the file format field by field.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod added_at;
mod binding;
mod catalog;
mod code_points;
mod definition;
mod document;
mod endpoint;
mod entry;
mod error;
mod halves;
mod invisible;
mod local;
mod location;
mod measurement;
mod members;
mod printable;
#[cfg(any(test, feature = "reference-loader"))]
pub mod reference;
mod schema;
mod server;
mod small;
mod upstream_url;
mod warning;

pub use crate::{
    binding::{LocalServer, NetworkServer, ServerBinding},
    catalog::{Catalog, UpstreamServer},
    code_points::{CodePoints, is_invisible},
    entry::CatalogEntry,
    error::{CatalogError, CatalogLoadError, CollidingEntry},
    invisible::{InvisibleText, invisible_text},
    local::{ProgramResolution, resolve_program},
    location::{EntryRef, Location},
    measurement::{CATALOG_ENTRY_LABEL, CatalogMeasurement},
    upstream_url::{Host, UpstreamUrl, UrlProblem},
    warning::{CatalogWarning, LookalikeRule},
};
