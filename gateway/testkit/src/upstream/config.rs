//! What the demo upstream serves and how: builder-style configuration.

use std::time::Duration;

use serde_json::Value;

use super::identity::DemoIdentity;
use super::tools;

/// How answers to requests are framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseMode {
    /// `Content-Type: application/json`, one JSON-RPC response.
    Json,
    /// `Content-Type: text/event-stream`: a priming event, any pending
    /// `notifications/tools/list_changed`, then the response, then the stream ends.
    Sse,
}

/// How `server/discover` is refused when the stateless generation is off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiscoverRefusal {
    /// HTTP 200 with JSON-RPC error -32601 (method not found).
    MethodNotFound,
    /// HTTP 400 with JSON-RPC error -32000 "Bad Request: Server not initialized", as the
    /// TypeScript SDK's Streamable HTTP server answers any first request that is not
    /// `initialize`.
    BadRequest,
}

/// Configuration of a [`super::DemoUpstream`]: `new()` gives the defaults, setters take
/// `&mut self`, and [`super::DemoUpstream::start`] takes a reference.
#[derive(Debug, Clone)]
pub struct DemoUpstreamConfig {
    pub(super) tools: Vec<Value>,
    pub(super) page_size: usize,
    pub(super) stateless: bool,
    pub(super) sessions: bool,
    pub(super) discover_refusal: DiscoverRefusal,
    pub(super) response_mode: ResponseMode,
    pub(super) identity: Option<DemoIdentity>,
    pub(super) path: String,
    pub(super) max_request_bytes: usize,
    pub(super) delay: Option<Duration>,
    pub(super) close_after_answer: bool,
    pub(super) http2: bool,
    pub(super) page_padding: usize,
    pub(super) repeat_cursor: bool,
    pub(super) page_delay: Option<Duration>,
}

impl Default for DemoUpstreamConfig {
    fn default() -> Self {
        DemoUpstreamConfig::new()
    }
}

impl DemoUpstreamConfig {
    /// The defaults: the tools `echo`, `add` and `get_time`; one page; both protocol
    /// generations; JSON answers; a freshly generated identity; path `/mcp`.
    pub fn new() -> DemoUpstreamConfig {
        DemoUpstreamConfig {
            tools: tools::default_tools(),
            page_size: 0,
            stateless: true,
            sessions: true,
            discover_refusal: DiscoverRefusal::MethodNotFound,
            response_mode: ResponseMode::Json,
            identity: None,
            path: "/mcp".to_owned(),
            max_request_bytes: 1024 * 1024,
            delay: None,
            close_after_answer: false,
            http2: false,
            page_padding: 0,
            repeat_cursor: false,
            page_delay: None,
        }
    }

    /// Replaces the tool definitions served by `tools/list`. Calls to tools other than `echo`,
    /// `add` and `get_time` answer with the arguments echoed as structured content.
    pub fn tools(&mut self, tools: Vec<Value>) -> &mut Self {
        self.tools = tools;
        self
    }

    /// Adds `tools` after the others (their calls answer as [`tools`](Self::tools) says).
    pub fn append_tools(&mut self, tools: impl IntoIterator<Item = Value>) -> &mut Self {
        self.tools.extend(tools);
        self
    }

    /// Adds `count` filler tools (`filler_01`, …) after the others, so that pagination has
    /// something to page through.
    pub fn filler_tools(&mut self, count: usize) -> &mut Self {
        for index in 1..=count {
            self.tools.push(tools::filler_tool(index));
        }
        self
    }

    /// Tools per `tools/list` page; 0 (the default) serves every tool on one page.
    pub fn page_size(&mut self, page_size: usize) -> &mut Self {
        self.page_size = page_size;
        self
    }

    /// Serve the 2026-07-28 generation (`server/discover`, stateless requests). Default on.
    pub fn stateless(&mut self, enabled: bool) -> &mut Self {
        self.stateless = enabled;
        self
    }

    /// Serve the session generation (`initialize`, `Mcp-Session-Id`). Default on.
    pub fn sessions(&mut self, enabled: bool) -> &mut Self {
        self.sessions = enabled;
        self
    }

    /// How `server/discover` is refused when [`stateless`](Self::stateless) is off.
    pub fn discover_refusal(&mut self, refusal: DiscoverRefusal) -> &mut Self {
        self.discover_refusal = refusal;
        self
    }

    /// JSON (default) or SSE answers.
    pub fn response_mode(&mut self, mode: ResponseMode) -> &mut Self {
        self.response_mode = mode;
        self
    }

    /// Presents this identity instead of a freshly generated one (to restart with the same
    /// key, or to share a CA).
    pub fn identity(&mut self, identity: DemoIdentity) -> &mut Self {
        self.identity = Some(identity);
        self
    }

    /// The endpoint path. Default `/mcp`.
    pub fn path(&mut self, path: &str) -> &mut Self {
        self.path = path.to_owned();
        self
    }

    /// Closes every connection after one answer (`Connection: close`), as some servers and
    /// proxies do: every request then needs a new connection and a new handshake (HTTP/1.1).
    pub fn close_after_answer(&mut self, enabled: bool) -> &mut Self {
        self.close_after_answer = enabled;
        self
    }

    /// Offers HTTP/2 in ALPN (`h2`, then `http/1.1`) and serves it to a client that selects
    /// it: one connection then carries concurrent requests as streams. Default off (ALPN
    /// `http/1.1` only). Over HTTP/2, [`close_after_answer`](Self::close_after_answer) does not
    /// apply, and `Fault::Reset` drops the whole connection (every stream on it), not only
    /// the request's stream.
    pub fn http2(&mut self, enabled: bool) -> &mut Self {
        self.http2 = enabled;
        self
    }

    /// Pads every `tools/list` page with a `_meta` member of this many bytes (a bloated
    /// listing, to exercise the gateway's listing budget).
    pub fn page_padding(&mut self, bytes: usize) -> &mut Self {
        self.page_padding = bytes;
        self
    }

    /// Makes `tools/list` answer every page with `nextCursor` `page-1`, so a listing never
    /// ends (a cursor loop).
    pub fn repeat_cursor(&mut self, enabled: bool) -> &mut Self {
        self.repeat_cursor = enabled;
        self
    }

    /// Delays every `tools/list` page by `delay` (a slow listing: each page within the
    /// request timeout, the whole listing beyond it).
    pub fn page_delay(&mut self, delay: Duration) -> &mut Self {
        self.page_delay = Some(delay);
        self
    }

    /// Delays every answer from the start (see also `DemoControls::set_delay`).
    pub fn delay(&mut self, delay: Duration) -> &mut Self {
        self.delay = Some(delay);
        self
    }
}
