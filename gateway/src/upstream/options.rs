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
    /// The most bytes of all `tools/list` pages of one listing together (each page's body is
    /// read with the remaining budget as its limit, so memory stays bounded). Default 32 MiB.
    pub max_listing_bytes: usize,
    /// The deadline of one whole listing, every page together; `None` (default): the
    /// [`request_timeout`](Self::request_timeout).
    pub listing_timeout: Option<Duration>,
    /// The most idle HTTP/1.1 connections kept for reuse. Default 64. With 0 no connection is
    /// kept, not even a shared HTTP/2 one: every exchange makes its own connection.
    pub max_idle_connections: usize,
    /// `None` (default): try 2026-07-28 (`server/discover`) first, fall back to `initialize`.
    /// `Some(generation)`: speak only that generation.
    pub generation: Option<Generation>,
    /// Offer HTTP/2 (ALPN `h2` before `http/1.1`). Default `true`. When the upstream selects
    /// it, one connection carries every exchange as concurrent streams (as many as the
    /// server's `SETTINGS_MAX_CONCURRENT_STREAMS` allows); `false` speaks HTTP/1.1 only, one
    /// exchange per connection at a time.
    pub offer_http2: bool,
    /// Open the session generation's `GET` event stream to hear
    /// `notifications/tools/list_changed` between requests. Default `true`.
    pub listen_for_notifications: bool,
}

impl UpstreamOptions {
    /// The deadline of one listing: [`listing_timeout`](Self::listing_timeout), or the request
    /// timeout.
    pub fn listing_deadline(&self) -> Duration {
        self.listing_timeout.unwrap_or(self.request_timeout)
    }
}

impl Default for UpstreamOptions {
    fn default() -> Self {
        UpstreamOptions {
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(30),
            max_response_bytes: 16 * 1024 * 1024,
            max_list_pages: 100,
            max_listing_bytes: 32 * 1024 * 1024,
            listing_timeout: None,
            max_idle_connections: 64,
            generation: None,
            offer_http2: true,
            listen_for_notifications: true,
        }
    }
}
