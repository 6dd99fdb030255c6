//! Limits and choices for one upstream client.

use std::time::Duration;

use crate::mcp::Generation;

/// Options of an [`super::UpstreamClient`]. `Default` gives the values documented per field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamOptions {
    /// TCP connect plus TLS handshake. Default 5 s.
    pub connect_timeout: Duration,
    /// Sending one request and reading its whole response. Default 30 s.
    pub request_timeout: Duration,
    /// The largest response body (JSON, or the whole SSE stream of one request). Default 16 MiB.
    pub max_response_bytes: usize,
    /// The most `tools/list` pages followed for one listing. Default 100.
    pub max_list_pages: usize,
    /// The most idle connections kept for reuse. Default 64.
    pub max_idle_connections: usize,
    /// `None` (default): try 2026-07-28 (`server/discover`) first, fall back to `initialize`.
    /// `Some(generation)`: speak only that generation.
    pub generation: Option<Generation>,
    /// Open the session generation's `GET` event stream to hear
    /// `notifications/tools/list_changed` between requests. Default `true`.
    pub listen_for_notifications: bool,
}

impl Default for UpstreamOptions {
    fn default() -> Self {
        UpstreamOptions {
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(30),
            max_response_bytes: 16 * 1024 * 1024,
            max_list_pages: 100,
            max_idle_connections: 64,
            generation: None,
            listen_for_notifications: true,
        }
    }
}
