//! Limits and choices of a local (stdio) upstream, each with a name and a default.

use std::time::Duration;

use crate::upstream::UpstreamOptions;

/// Options of a [`super::LocalUpstream`]. `Default` gives the values documented per field;
/// [`LocalOptions::from_upstream`] takes the protocol limits the network upstreams use, so one
/// `--upstream-timeout` bounds both kinds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalOptions {
    /// Starting the process and completing the handshake (`server/discover` or `initialize`).
    /// Default 30 s (an interpreter loading its packages, or `npx` fetching one, is slow).
    pub start_timeout: Duration,
    /// How long a `server/discover` probe may go unanswered before `initialize` is tried (a
    /// server of the session generation may ignore it). Default 10 s. A server that answers the
    /// probe late, and then refuses `initialize` with -32022 naming 2026-07-28, is spoken to in
    /// 2026-07-28.
    pub discover_timeout: Duration,
    /// Each request after the handshake, from writing it to its answer. Default 30 s.
    pub request_timeout: Duration,
    /// The longest line accepted on the child's stdout (one JSON-RPC message). A longer line is
    /// read and discarded in bounded memory, and every request in flight fails. Default 16 MiB.
    pub max_response_bytes: usize,
    /// The most `tools/list` pages followed for one listing. Default 100.
    pub max_list_pages: usize,
    /// `None` (default): try 2026-07-28 (`server/discover`) first, fall back to `initialize`.
    /// `Some(generation)`: speak only that generation.
    pub generation: Option<crate::mcp::Generation>,
    /// The first delay before starting again after a failed start. Default 100 ms.
    pub restart_backoff: Duration,
    /// The longest delay between failed starts (the delay doubles up to it). Default 30 s.
    pub max_restart_backoff: Duration,
    /// On stop: how long to wait after closing stdin before SIGTERM, and after SIGTERM before
    /// SIGKILL. Default 2 s.
    pub stop_grace: Duration,
    /// The longest stderr line logged; the rest of a longer line is cut. Default 4 KiB.
    pub max_stderr_line_bytes: usize,
    /// Stderr lines logged per second at most; more are dropped and counted. Default 100.
    pub stderr_lines_per_second: u32,
}

impl Default for LocalOptions {
    fn default() -> Self {
        LocalOptions {
            start_timeout: Duration::from_secs(30),
            discover_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            max_response_bytes: 16 * 1024 * 1024,
            max_list_pages: 100,
            generation: None,
            restart_backoff: Duration::from_millis(100),
            max_restart_backoff: Duration::from_secs(30),
            stop_grace: Duration::from_secs(2),
            max_stderr_line_bytes: 4096,
            stderr_lines_per_second: 100,
        }
    }
}

impl LocalOptions {
    /// The defaults, with the request timeout, response limit, page limit and generation of
    /// `upstream`.
    pub fn from_upstream(upstream: &UpstreamOptions) -> LocalOptions {
        LocalOptions {
            request_timeout: upstream.request_timeout,
            max_response_bytes: upstream.max_response_bytes,
            max_list_pages: upstream.max_list_pages,
            generation: upstream.generation,
            ..LocalOptions::default()
        }
    }
}
