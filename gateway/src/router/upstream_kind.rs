//! The two kinds of upstream behind one surface: the network client (pinned TLS) and the local
//! (stdio) process. The router and the definition check see only this.

use serde_json::{Map, Value};
use tokio::sync::watch;

use crate::definition_check::{ListedTools, PageMemo};
use crate::local::LocalUpstream;
use crate::mcp::RawJson;
use crate::upstream::{UpstreamClient, UpstreamError};

/// What a call is sent on, established before its definition is checked (docs/design.md §5, "A
/// check is never outrun").
pub(crate) enum CallPath {
    /// A network upstream's connection and session, through the pinning verifier.
    Network(Box<crate::upstream::CallPath>),
    /// A local upstream: the call goes to the process whose tools are checked under the
    /// generation read after this (see [`LocalUpstream::call_tool`]).
    Local,
}

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

    /// Every tool the upstream lists, every page followed (the pages, bounds and errors of
    /// [`list_tools`](Self::list_tools)), each digested from the bytes served
    /// ([`ToolsPage::read`](crate::definition_check::ToolsPage::read): one strict pass per
    /// page, no `Value` tree): what the definition check compares with the approved digests.
    /// A page whose bytes `memo` holds from an earlier listing is taken from it
    /// ([`ListedTools::read_page_remembered`]).
    ///
    /// # Errors
    ///
    /// As [`list_tools`](Self::list_tools).
    pub async fn list_tool_definitions(
        &self,
        memo: &PageMemo,
    ) -> Result<ListedTools, UpstreamError> {
        let mut tools = ListedTools::new();
        let page = |result: &[u8]| tools.read_page_remembered(result, memo);
        match self {
            Upstream::Network(client) => client.list(page).await?,
            Upstream::Local(local) => local.list(page).await?,
        }
        Ok(tools)
    }

    /// The path a call will take, before its definition is checked.
    pub(crate) async fn call_path(&self) -> Result<CallPath, UpstreamError> {
        match self {
            Upstream::Network(client) => client
                .call_path()
                .await
                .map(|path| CallPath::Network(Box::new(path))),
            Upstream::Local(_) => Ok(CallPath::Local),
        }
    }

    /// Calls tool `name` on `path`; `checked_generation` is the [`Upstream::invalidations`]
    /// value read before its definition was checked (a local upstream delivers only to the
    /// process that was checked; see [`LocalUpstream::call_tool`]). Arguments and result are
    /// carried as bytes.
    ///
    /// # Errors
    ///
    /// [`UpstreamError`]; see [`UpstreamError::reason`].
    pub(crate) async fn call_tool_on(
        &self,
        path: CallPath,
        name: &str,
        arguments: Option<RawJson>,
        meta: Option<&Map<String, Value>>,
        checked_generation: u64,
    ) -> Result<RawJson, UpstreamError> {
        match (self, path) {
            (Upstream::Network(client), CallPath::Network(path)) => {
                client.call_tool_on(*path, name, arguments, meta).await
            }
            (Upstream::Local(local), _) => {
                local
                    .call_tool(name, arguments, meta, checked_generation)
                    .await
            }
            // `call_path` makes a network path for a network upstream; a mismatched pair is
            // never sent (the router checks again on a new path).
            (Upstream::Network(client), CallPath::Local) => Err(UpstreamError::CallNotSent {
                url: client.url().to_owned(),
                detail: "no connection was established for this call".to_owned(),
            }),
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
