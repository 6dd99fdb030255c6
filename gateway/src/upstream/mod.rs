//! An MCP Streamable HTTP client for one pinned upstream (docs/design.md §5 "Upstreams").
//!
//! Every TLS connection is verified by the pinning verifier of `server-identity` inside the
//! handshake, so an impostor is refused before a single application byte is sent; connections
//! are reused across calls. Both protocol generations are spoken: 2026-07-28 (`server/discover`,
//! stateless requests) first, `initialize` with a session as the fallback.
//!
//! ```no_run
//! # async fn example(tls: std::sync::Arc<rustls::ClientConfig>) -> Result<(), Box<dyn std::error::Error>> {
//! use catalog_store::UpstreamUrl;
//! use toolgate::upstream::{UpstreamClient, UpstreamOptions};
//!
//! // The URL is read once, by the catalog's parser; the client takes the parsed value.
//! let url: UpstreamUrl = "https://127.0.0.1:8443/mcp".parse()?;
//! let upstream = UpstreamClient::new(&url, tls, UpstreamOptions::default());
//! let tools = upstream.list_tools().await?;
//! let result = upstream
//!     .call_tool("echo", Some(serde_json::json!({"text": "hi"})), None)
//!     .await?;
//! # let _ = (tools, result);
//! # Ok(())
//! # }
//! ```

mod answer_memo;
mod client;
mod connection;
mod endpoint;
mod error;
mod identity;
mod listener;
mod names;
mod observe_tools;
mod options;
pub(crate) mod request_body;
mod transport;

#[cfg(fuzzing)]
#[doc(hidden)]
pub use self::answer_memo::AnswerMemo;
pub use self::client::{CallPath, UpstreamClient};
pub use self::error::{
    REASON_IDENTITY_MISMATCH, REASON_UPSTREAM_ERROR, REASON_UPSTREAM_UNAVAILABLE, TimeoutPhase,
    UpstreamError,
};
pub use self::identity::ObservedIdentity;
pub use self::observe_tools::observe_tools;
pub use self::options::UpstreamOptions;
