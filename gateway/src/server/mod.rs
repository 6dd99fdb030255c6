//! The client-facing side of the gateway: MCP Streamable HTTP on `/mcp` and newline-delimited
//! JSON-RPC on stdio (docs/design.md §5 "Clients").
//!
//! Both protocol generations are served. The session generation (2025-03-26, 2025-06-18,
//! 2025-11-25): `initialize` negotiates the version and issues a random `Mcp-Session-Id`, which
//! every later request must carry (unknown → 404; `DELETE /mcp` ends it). The stateless
//! generation (2026-07-28): `server/discover`, no session, and the `MCP-Protocol-Version`,
//! `Mcp-Method` and `Mcp-Name` headers checked against the body (-32020 on a mismatch).
//!
//! Offered methods: `initialize`, `ping`, `server/discover`, `tools/list` (the catalog's
//! approved definitions under their catalog names, paginated) and `tools/call` (through the
//! [`Router`]). Anything else is -32601. Host and Origin are checked against allow-lists before
//! a request is read (403); bodies are bounded (413) and so are responses.
//!
//! # Decisions
//!
//! - **Batches** (JSON arrays) are refused with -32600 and HTTP 400: MCP removed them in
//!   2025-06-18, and one request per POST keeps one audit decision per exchange.
//! - **Answers are JSON**, never SSE: each request has exactly one response and the gateway sends
//!   clients no notifications. `GET /mcp` (the server-to-client stream) is 405.
//! - **HTTP statuses of errors**: in the session generation a JSON-RPC error is HTTP 200; in
//!   2026-07-28 the statuses of the Python reference apply (400 for -32700, -32600, -32602,
//!   -32020, -32021, -32022; 404 for -32601; 200 otherwise, including the gateway's denials
//!   other than `tool_not_in_catalog`).
//! - **Sessions** are 128-bit random hex ids, kept in memory, owned by the client address that
//!   opened them: at most [`DEFAULT_MAX_SESSIONS_PER_ADDRESS`] per address by default (past it
//!   that address's least recently used is dropped) and [`DEFAULT_MAX_SESSIONS`] in all (past it
//!   the address holding the most loses its least recently used).
//! - **Client-side limits** ([`ServerOptions`]): a header timeout from the first byte (TLS
//!   handshake, HTTP/1.1 headers, HTTP/2 preface), an idle timeout, HTTP/2 keep-alive, connection
//!   caps in total and per client address, and a budget of request-body bytes in flight (503).
//! - **Timer wake-ups**: while serving, a timer renewed every second keeps the Tokio time
//!   driver's next wake-up near, so that arming a call's timeouts does not interrupt the parked
//!   driver (one eventfd write and one early `epoll_wait` per call before; `wake_anchor.rs`).
//! - **Busy polling** (off unless [`ServerOptions::busy_poll`] sets a window): after each
//!   request, one task keeps a worker polling for I/O instead of sleeping, so that on a VM whose
//!   idle vCPUs are slow to wake, neither the next request nor the upstream's answer waits for a
//!   wake-up; it costs up to a CPU while it spins (`busy_poll.rs`).
//! - **Self-wakes**: a connection's task polls hyper again at once when hyper woke that same task
//!   during its poll (the request body's hand-off to the service does), instead of yielding to
//!   the scheduler, which would wake an idle worker for it (`self_wake.rs`).
//! - **Host**: two `Host` headers, or an absolute-form target whose authority is not the `Host`,
//!   are 400. An unsupported `MCP-Protocol-Version` is answered with the supported list.
//! - **2026-07-28 results** gain `resultType: "complete"` when the upstream's result lacks it
//!   (that version requires it); listings also carry `cacheScope: "private"` and `ttlMs: 0`.
//!   Nothing else of an upstream result is changed.
//! - **`_meta` of a call** is forwarded without the client's reserved
//!   `io.modelcontextprotocol/*` keys, which describe the client's exchange with the gateway.
//! - **Host** must name an allowed host (default: `localhost`, `127.0.0.1`, `[::1]` and the
//!   listen IP, any port); **Origin**, when sent, must be `http`/`https` on such a host or one of
//!   the configured origins. A missing Origin (a non-browser client) is allowed.

mod busy_poll;
mod client_auth;
mod dispatch;
mod http;
mod listen;
mod listing;
mod options;
mod rebinding;
mod self_wake;
mod session;
mod stdio;
mod wake_anchor;

use std::future::Future;
use std::io;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;

use crate::router::Router;

pub use self::busy_poll::MAX_BUSY_POLL;
pub use self::http::MCP_PATH;
pub use self::options::{
    DEFAULT_HEADER_TIMEOUT, DEFAULT_HTTP2_KEEP_ALIVE_INTERVAL, DEFAULT_HTTP2_KEEP_ALIVE_TIMEOUT,
    DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
    DEFAULT_MAX_REQUEST_BYTES, DEFAULT_MAX_REQUEST_BYTES_IN_FLIGHT, DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_MAX_SESSIONS, DEFAULT_MAX_SESSIONS_PER_ADDRESS, DEFAULT_PAGE_SIZE,
    InvalidAllowListEntry, ServerOptions,
};

use self::listing::ToolListing;
use self::session::SessionTable;

/// The gateway as MCP clients see it: a [`Router`] behind the MCP transports.
#[derive(Debug)]
pub struct Gateway {
    /// The router and its listing, replaced together by a reload; a call holds the `Arc` it
    /// started with, so calls in flight finish on the catalog they were checked under.
    served: std::sync::RwLock<Arc<Served>>,
    options: ServerOptions,
    sessions: SessionTable,
    /// Request-body bytes all requests in flight may hold together (one permit a byte).
    request_budget: tokio::sync::Semaphore,
    /// Requests as the busy-polling task sees them, and its window, when it is on
    /// (`ServerOptions::busy_poll`).
    activity: Option<Arc<busy_poll::Activity>>,
}

impl Gateway {
    /// Puts `router` behind the client-facing transports with `options`.
    pub fn new(router: Arc<Router>, options: ServerOptions) -> Arc<Gateway> {
        let served = Served::new(router, options.page_size);
        let sessions = SessionTable::new(options.max_sessions, options.max_sessions_per_address);
        let budget = options
            .max_request_bytes_in_flight
            .min(tokio::sync::Semaphore::MAX_PERMITS);
        let activity = options
            .busy_poll
            .map(|window| Arc::new(busy_poll::Activity::new(window)));
        Arc::new(Gateway {
            served: std::sync::RwLock::new(Arc::new(served)),
            options,
            sessions,
            request_budget: tokio::sync::Semaphore::new(budget),
            activity,
        })
    }

    /// The router calls go through now.
    pub fn router(&self) -> Arc<Router> {
        Arc::clone(&self.served().router)
    }

    /// Puts `router` (a reloaded catalog) in force for every later request, atomically with
    /// its tools/list; returns the router it replaced, which calls in flight still use.
    pub fn replace_router(&self, router: Arc<Router>) -> Arc<Router> {
        let served = Arc::new(Served::new(router, self.options.page_size));
        let mut current = self
            .served
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let old = std::mem::replace(&mut *current, served);
        Arc::clone(&old.router)
    }

    pub(crate) fn served(&self) -> Arc<Served> {
        Arc::clone(
            &self
                .served
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// Serves MCP Streamable HTTP on `listener` (TLS when `tls` is given, HTTP/1.1 and HTTP/2)
    /// until `shutdown` completes; then stops accepting, lets in-flight exchanges finish
    /// (bounded by 30 s) and returns. While it serves, one task of its own on the runtime keeps
    /// a timer wake-up at most a second away (the module's "Timer wake-ups").
    ///
    /// # Errors
    ///
    /// None today; the `io::Result` leaves room for listener failures that end serving.
    pub async fn serve_http(
        self: Arc<Self>,
        listener: TcpListener,
        tls: Option<Arc<rustls::ServerConfig>>,
        shutdown: impl Future<Output = ()> + Send,
    ) -> io::Result<()> {
        let _anchor = wake_anchor::WakeAnchor::start();
        let _busy_poll = self.start_busy_poll();
        listen::serve(self, listener, tls, shutdown).await
    }

    /// Serves newline-delimited JSON-RPC from `input` to `output` until `input` ends or
    /// `shutdown` completes, then answers what is in flight and returns. While it serves, one
    /// task of its own on the runtime keeps a timer wake-up at most a second away (the module's
    /// "Timer wake-ups").
    ///
    /// # Errors
    ///
    /// Reading `input` or writing `output` failed.
    pub async fn serve_stdio<R, W>(
        self: Arc<Self>,
        input: R,
        output: W,
        shutdown: impl Future<Output = ()> + Send,
    ) -> io::Result<()>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let _anchor = wake_anchor::WakeAnchor::start();
        let _busy_poll = self.start_busy_poll();
        stdio::serve(self, input, output, shutdown).await
    }

    /// The busy-polling task while serving, when it is on.
    fn start_busy_poll(&self) -> Option<busy_poll::BusyPoll> {
        let activity = Arc::clone(self.activity.as_ref()?);
        Some(busy_poll::BusyPoll::start(activity))
    }

    /// A client request arrived (the busy-polling task's window starts again).
    pub(crate) fn request_started(&self) {
        if let Some(activity) = &self.activity {
            activity.request_started();
        }
    }
}

/// A router and the tools/list pages of its catalog.
#[derive(Debug)]
pub(crate) struct Served {
    pub(crate) router: Arc<Router>,
    pub(crate) listing: ToolListing,
}

impl Served {
    fn new(router: Arc<Router>, page_size: usize) -> Served {
        let measurement = router.catalog().measurement().digest().to_string();
        let tag = measurement.strip_prefix("sha256:").unwrap_or(&measurement);
        let listing = ToolListing::new(router.listed_tools(), page_size, tag);
        Served { router, listing }
    }
}
