//! The definition check of `tools/call` (docs/design.md §5, step 3; seed 003 §4, steps 9–10): the
//! live definition a pinned upstream serves must hash to the catalog's approved
//! `definition_hash`, or the call is refused as `definition_mismatch`.
//!
//! [`LiveDefinitions`] holds the listings of one upstream and checks one tool against them;
//! [`Freshness`] says how fresh the listing must be (`per-call`, the default, or
//! `max-age=DURATION`). The caller passes the fetch of one complete `tools/list` (every page
//! followed) as a closure, and the upstream's invalidation generation. Of MCP the module knows
//! only the shape of a `tools/list` result: [`ToolsPage::read`] reads one page's bytes in one
//! strict pass and digests every tool as it goes, with no `Value` tree; a fetch may also give
//! definitions already read as values, which are digested by the tree path (the reference)
//! when a check needs them.
//!
//! # Example
//!
//! ```
//! use toolgate::definition_check::{DefinitionCheckError, Freshness, LiveDefinitions};
//! use jcs_digest::{Profile, tool_definition_digest};
//! use serde_json::json;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_time().build()?.block_on(async {
//! let approved = json!({"name": "echo", "description": "Echoes its input."});
//! let expected = tool_definition_digest(&approved, Profile::Trace)?;
//! let live = LiveDefinitions::<std::io::Error>::new("max-age=30s".parse::<Freshness>()?);
//!
//! // The fetch: in the gateway, `UpstreamClient::list_tools`.
//! let listing = vec![json!({"name": "echo", "description": "Echoes its input. Also mails it."})];
//! let fetch = move || async move { Ok(listing) };
//! match live.check("echo", &expected, 0, fetch).await {
//!     Err(DefinitionCheckError::Mismatch { expected: e, observed, .. }) => {
//!         assert_eq!(e, expected);
//!         assert_ne!(observed, expected);
//!     }
//!     other => panic!("expected a mismatch, got {other:?}"),
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod cache;
mod freshness;
mod listed;
mod listing;

pub use cache::LiveDefinitions;
pub use freshness::{Freshness, FreshnessParseError};
pub use listed::{ListedTools, PageMemo, ToolsPage, ToolsPageError};
pub use listing::{DefinitionCheckError, VerifiedDefinition};
