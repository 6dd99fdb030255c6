//! The two kinds of upstream behind one surface: the network client (pinned TLS) and the local
//! (stdio) process. The router and the definition check see only this.

use serde_json::Value;
use tokio::sync::watch;

use crate::local::LocalUpstream;
use crate::upstream::{UpstreamClient, UpstreamError};

/// One upstream of the catalog. Cheap to clone.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Upstream {
    /// Reached over pinned TLS at a URL.
    Network(UpstreamClient),
    /// A local process spoken to on stdin and stdout.
    Local(LocalUpstream),
}

impl Upstream {
    /// The URL, or `stdio:` and the argv of a local server.
    pub fn url(&self) -> &str {
        match self {
            Upstream::Network(client) => client.url(),
            Upstream::Local(local) => local.url(),
        }
    }

    /// Every tool the upstream lists, every page followed.
    ///
    /// # Errors
    ///
    /// [`UpstreamError`]; see [`UpstreamError::reason`].
    pub async fn list_tools(&self) -> Result<Vec<Value>, UpstreamError> {
        match self {
            Upstream::Network(client) => client.list_tools().await,
            Upstream::Local(local) => local.list_tools().await,
        }
    }

    /// Calls tool `name`; `checked_generation` is the [`Upstream::invalidations`] value read
    /// before its definition was checked (a local upstream delivers only to the process that
    /// was checked; see [`LocalUpstream::call_tool`]).
    ///
    /// # Errors
    ///
    /// [`UpstreamError`]; see [`UpstreamError::reason`].
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Option<Value>,
        meta: Option<Value>,
        checked_generation: u64,
    ) -> Result<Value, UpstreamError> {
        match self {
            Upstream::Network(client) => client.call_tool(name, arguments, meta).await,
            Upstream::Local(local) => {
                local
                    .call_tool(name, arguments, meta, checked_generation)
                    .await
            }
        }
    }

    /// A counter that increases whenever what was learned from the upstream may be stale.
    pub fn invalidations(&self) -> watch::Receiver<u64> {
        match self {
            Upstream::Network(client) => client.invalidations(),
            Upstream::Local(local) => local.invalidations(),
        }
    }

    /// The network client, for a network upstream.
    pub fn network(&self) -> Option<&UpstreamClient> {
        match self {
            Upstream::Network(client) => Some(client),
            Upstream::Local(_) => None,
        }
    }

    /// The local upstream, for a local one.
    pub fn local(&self) -> Option<&LocalUpstream> {
        match self {
            Upstream::Network(_) => None,
            Upstream::Local(local) => Some(local),
        }
    }

    /// Stops what the upstream runs (a local server's process); nothing for a network one.
    pub async fn shutdown(&self) {
        if let Upstream::Local(local) = self {
            let _ = local.shutdown().await;
        }
    }
}
