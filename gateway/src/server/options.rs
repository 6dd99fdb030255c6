//! What the client-facing side may accept and send: sizes, page size, Host and Origin lists,
//! and the limits that keep one client from exhausting the gateway (docs/design.md §5, "Client-side
//! limits").

use std::net::SocketAddr;
use std::time::Duration;

/// Limits and allow-lists for the client-facing side (docs/design.md §5 "Clients").
///
/// Built with [`ServerOptions::for_listen_address`], which fills in the DNS-rebinding defaults
/// for the address the gateway listens on; the setters tighten or widen them.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    pub(crate) max_request_bytes: usize,
    pub(crate) max_response_bytes: usize,
    pub(crate) page_size: usize,
    pub(crate) allowed_hosts: Vec<HostPattern>,
    pub(crate) allowed_origins: Vec<String>,
    pub(crate) max_sessions: usize,
    pub(crate) max_sessions_per_address: usize,
    pub(crate) max_connections: usize,
    pub(crate) max_connections_per_address: usize,
    pub(crate) header_timeout: Duration,
    pub(crate) idle_timeout: Duration,
    pub(crate) http2_keep_alive_interval: Duration,
    pub(crate) http2_keep_alive_timeout: Duration,
    pub(crate) max_request_bytes_in_flight: usize,
    /// Bearer tokens required on `/mcp` (docs/design.md §7), with the resource URL the metadata
    /// document names (`None`: the request's scheme and Host, then `/mcp`).
    pub(crate) bearer: Option<std::sync::Arc<crate::auth::BearerAuth>>,
    pub(crate) resource_url: Option<String>,
    /// How long a worker keeps polling for I/O after each request (`None`: it sleeps at once).
    pub(crate) busy_poll: Option<Duration>,
}

/// The default bound on one request body: 4 MiB.
pub const DEFAULT_MAX_REQUEST_BYTES: usize = 4 * 1024 * 1024;
/// The default bound on one response body: 16 MiB.
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 16 * 1024 * 1024;
/// The default number of tools on one `tools/list` page.
pub const DEFAULT_PAGE_SIZE: usize = 100;
/// The default number of live sessions (protocol versions up to 2025-11-25); the session used
/// least recently is dropped when a new one would exceed it.
pub const DEFAULT_MAX_SESSIONS: usize = 4096;
/// The default number of live sessions one client address may hold; its own least recently used
/// session is dropped when it opens one more, so one address cannot evict everyone else's.
pub const DEFAULT_MAX_SESSIONS_PER_ADDRESS: usize = 256;
/// The default number of client connections served at once; past it the gateway stops
/// accepting until one closes (the kernel's backlog holds the rest).
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;
/// The default number of connections one client address may hold open; more are closed at once.
/// A client address is an IPv4 address or an IPv6 /64 (one host commonly holds a whole /64).
pub const DEFAULT_MAX_CONNECTIONS_PER_ADDRESS: usize = 256;
/// The default time a new connection has to complete its TLS handshake and to send its first
/// request's headers (HTTP/1.1) or its connection preface (HTTP/2); also the time an HTTP/1.1
/// keep-alive connection may wait for its next request's headers.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// The default time a connection may stay open with no request in flight.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// The default interval of HTTP/2 keep-alive pings on an otherwise quiet connection.
pub const DEFAULT_HTTP2_KEEP_ALIVE_INTERVAL: Duration = Duration::from_secs(20);
/// The default time an HTTP/2 keep-alive ping may go unanswered before the connection closes.
pub const DEFAULT_HTTP2_KEEP_ALIVE_TIMEOUT: Duration = Duration::from_secs(20);
/// The default budget of request-body bytes held by all requests in flight together: 64 MiB.
pub const DEFAULT_MAX_REQUEST_BYTES_IN_FLIGHT: usize = 64 * 1024 * 1024;

/// One entry of the Host allow-list: a host name or IP literal (IPv6 in brackets), with a
/// port, or with any port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HostPattern {
    pub(crate) host: String,
    pub(crate) port: Option<u16>,
}

impl HostPattern {
    /// Parses `name`, `name:port`, `[v6]` or `[v6]:port` (case-insensitive host names).
    pub(crate) fn parse(text: &str) -> Option<HostPattern> {
        let (host, port) = split_host_port(text)?;
        Some(HostPattern {
            host: host.to_ascii_lowercase(),
            port,
        })
    }

    pub(crate) fn matches(&self, host: &str, port: Option<u16>) -> bool {
        self.host.eq_ignore_ascii_case(host) && (self.port.is_none() || self.port == port)
    }
}

/// Splits `host[:port]` (IPv6 literals in brackets). `None` when the text is not of that form.
pub(crate) fn split_host_port(text: &str) -> Option<(&str, Option<u16>)> {
    if text.is_empty() {
        return None;
    }
    let (host, rest) = if text.starts_with('[') {
        let end = text.find(']')?;
        (&text[..=end], &text[end + 1..])
    } else {
        match text.rfind(':') {
            Some(colon) => (&text[..colon], &text[colon..]),
            None => (text, ""),
        }
    };
    if host.is_empty() || host.contains(['/', '@', ' ', '\\']) {
        return None;
    }
    let port = match rest {
        "" => None,
        _ => {
            let digits = rest.strip_prefix(':')?;
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            Some(digits.parse::<u16>().ok()?)
        }
    };
    Some((host, port))
}

impl ServerOptions {
    /// The defaults for a gateway listening on `listen`: the Host allow-list holds `localhost`,
    /// `127.0.0.1`, `[::1]` and the listen IP (any port); Origins are allowed when they are
    /// `http` or `https` on one of those hosts (any port). A request without `Origin` (a
    /// non-browser client) is allowed.
    pub fn for_listen_address(listen: SocketAddr) -> ServerOptions {
        let mut allowed_hosts = vec![
            HostPattern {
                host: "localhost".into(),
                port: None,
            },
            HostPattern {
                host: "127.0.0.1".into(),
                port: None,
            },
            HostPattern {
                host: "[::1]".into(),
                port: None,
            },
        ];
        let listen_host = match listen {
            SocketAddr::V4(v4) => v4.ip().to_string(),
            SocketAddr::V6(v6) => format!("[{}]", v6.ip()),
        };
        if !allowed_hosts
            .iter()
            .any(|pattern| pattern.host == listen_host)
        {
            allowed_hosts.push(HostPattern {
                host: listen_host,
                port: None,
            });
        }
        ServerOptions {
            max_request_bytes: DEFAULT_MAX_REQUEST_BYTES,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            page_size: DEFAULT_PAGE_SIZE,
            allowed_hosts,
            allowed_origins: Vec::new(),
            max_sessions: DEFAULT_MAX_SESSIONS,
            max_sessions_per_address: DEFAULT_MAX_SESSIONS_PER_ADDRESS,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_connections_per_address: DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            http2_keep_alive_interval: DEFAULT_HTTP2_KEEP_ALIVE_INTERVAL,
            http2_keep_alive_timeout: DEFAULT_HTTP2_KEEP_ALIVE_TIMEOUT,
            max_request_bytes_in_flight: DEFAULT_MAX_REQUEST_BYTES_IN_FLIGHT,
            bearer: None,
            resource_url: None,
            busy_poll: None,
        }
    }

    /// Every request to `/mcp` must carry a bearer token that `auth` accepts; without one the
    /// answer is HTTP 401 pointing at the RFC 9728 metadata document, which is then served.
    pub fn bearer_auth(&mut self, auth: std::sync::Arc<crate::auth::BearerAuth>) -> &mut Self {
        self.bearer = Some(auth);
        self
    }

    /// The gateway's own URL as clients reach it (`https://gateway.example/mcp`), for the
    /// metadata document's `resource`; by default the request's scheme and Host, then `/mcp`.
    pub fn resource_url(&mut self, url: &str) -> &mut Self {
        self.resource_url = Some(url.to_owned());
        self
    }

    /// Requests with a larger body are refused with HTTP 413 (stdio: a line longer than this
    /// is refused with a JSON-RPC parse error).
    pub fn max_request_bytes(&mut self, bytes: usize) -> &mut Self {
        self.max_request_bytes = bytes.max(1);
        self
    }

    /// A response larger than this is replaced by a JSON-RPC error (-32603) naming the limit.
    pub fn max_response_bytes(&mut self, bytes: usize) -> &mut Self {
        self.max_response_bytes = bytes.max(1);
        self
    }

    /// Tools per `tools/list` page (at least 1).
    pub fn page_size(&mut self, tools: usize) -> &mut Self {
        self.page_size = tools.max(1);
        self
    }

    /// Live sessions kept for the 2025 protocol versions (at least 1); past it the least
    /// recently used is dropped.
    pub fn max_sessions(&mut self, sessions: usize) -> &mut Self {
        self.max_sessions = sessions.max(1);
        self
    }

    /// Live sessions one client address may hold (at least 1); past it that address's own
    /// least recently used session is dropped, never another address's.
    pub fn max_sessions_per_address(&mut self, sessions: usize) -> &mut Self {
        self.max_sessions_per_address = sessions.max(1);
        self
    }

    /// Client connections served at once (at least 1); past it the gateway accepts no more
    /// until one closes.
    pub fn max_connections(&mut self, connections: usize) -> &mut Self {
        self.max_connections = connections.max(1);
        self
    }

    /// Connections one client address may hold open (at least 1); one more is closed as soon
    /// as it is accepted.
    pub fn max_connections_per_address(&mut self, connections: usize) -> &mut Self {
        self.max_connections_per_address = connections.max(1);
        self
    }

    /// The time a connection has for its TLS handshake and its first request's headers (or
    /// HTTP/2 preface), and an HTTP/1.1 keep-alive connection for its next request's headers;
    /// a connection that is silent longer is closed.
    pub fn header_timeout(&mut self, timeout: Duration) -> &mut Self {
        self.header_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// Busy polling (off by default): after each request, one task keeps a worker of the runtime
    /// polling for I/O instead of sleeping, for `window` (at most [`MAX_BUSY_POLL`](super::MAX_BUSY_POLL)).
    ///
    /// This trades CPU for latency. Where an idle CPU is slow to wake (a VM whose idle vCPUs
    /// halt at once), the next request and the upstream's answer then find the worker awake:
    /// BENCHMARKS.md ("Busy polling") measured a lone caller's added latency going from 132–137
    /// to 44–46 µs on a VM. The worker spins through each window, so a gateway that is seldom
    /// called spends up to one CPU after each call, and one that is called all the time spends
    /// one CPU for good. It keeps one worker awake: use it with one worker thread, and so not
    /// with the audit log on disk under concurrent calls, where each `fdatasync` would hold the
    /// only worker and no call could join another's group commit. `None` or a zero window turns
    /// it off.
    pub fn busy_poll(&mut self, window: Option<Duration>) -> &mut Self {
        self.busy_poll = window
            .filter(|window| !window.is_zero())
            .map(|window| window.min(super::MAX_BUSY_POLL));
        self
    }

    /// The time a connection may stay open with no request in flight (HTTP/1.1 and HTTP/2).
    pub fn idle_timeout(&mut self, timeout: Duration) -> &mut Self {
        self.idle_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// HTTP/2 keep-alive: a ping after `interval` of quiet, and the connection closed when it
    /// is not answered within `timeout`.
    pub fn http2_keep_alive(&mut self, interval: Duration, timeout: Duration) -> &mut Self {
        self.http2_keep_alive_interval = interval.max(Duration::from_millis(1));
        self.http2_keep_alive_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// The request-body bytes all requests in flight may hold together (at least 1). A request
    /// that would exceed it is answered 503 at once, before its body is read; a request counts
    /// its `Content-Length`, or `--max-request-bytes` when it sends none.
    pub fn max_request_bytes_in_flight(&mut self, bytes: usize) -> &mut Self {
        self.max_request_bytes_in_flight = bytes.max(1);
        self
    }

    /// Adds a Host header value to accept: `name` (any port) or `name:port`, IPv6 in brackets.
    pub fn allow_host(&mut self, host: &str) -> Result<&mut Self, InvalidAllowListEntry> {
        let pattern = HostPattern::parse(host).ok_or_else(|| InvalidAllowListEntry {
            kind: "--allowed-host",
            value: host.to_owned(),
            expected: "a host name or IP literal with an optional :port (IPv6 in brackets)",
        })?;
        if !self.allowed_hosts.contains(&pattern) {
            self.allowed_hosts.push(pattern);
        }
        Ok(self)
    }

    /// Adds an exact Origin to accept, such as `https://app.example`.
    pub fn allow_origin(&mut self, origin: &str) -> Result<&mut Self, InvalidAllowListEntry> {
        let valid = origin.split_once("://").is_some_and(|(scheme, rest)| {
            !scheme.is_empty()
                && !rest.is_empty()
                && !rest.contains('/')
                && split_host_port(rest).is_some()
        });
        if !valid {
            return Err(InvalidAllowListEntry {
                kind: "--allowed-origin",
                value: origin.to_owned(),
                expected: "an origin such as https://app.example or http://localhost:3000 (no path)",
            });
        }
        let origin = origin.to_ascii_lowercase();
        if !self.allowed_origins.contains(&origin) {
            self.allowed_origins.push(origin);
        }
        Ok(self)
    }
}

/// An `--allowed-host` or `--allowed-origin` value that is not a host or an origin.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} {value:?} is not valid: expected {expected}")]
#[non_exhaustive]
pub struct InvalidAllowListEntry {
    /// The option the value was given to.
    pub kind: &'static str,
    /// The value given.
    pub value: String,
    /// What would have been accepted.
    pub expected: &'static str,
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn host_port_forms() {
        assert_eq!(
            split_host_port("localhost:8080"),
            Some(("localhost", Some(8080)))
        );
        assert_eq!(split_host_port("[::1]:9"), Some(("[::1]", Some(9))));
        assert_eq!(split_host_port("[::1]"), Some(("[::1]", None)));
        assert_eq!(split_host_port("example.com"), Some(("example.com", None)));
        assert_eq!(split_host_port("example.com:"), None);
        assert_eq!(split_host_port("example.com:99999"), None);
        assert_eq!(split_host_port("a@b:1"), None);
        assert_eq!(split_host_port(""), None);
    }

    #[test]
    fn allow_list_entries_are_validated() {
        let mut options = ServerOptions::for_listen_address(([127, 0, 0, 1], 80).into());
        assert!(options.allow_host("gateway.internal:8443").is_ok());
        assert!(options.allow_origin("https://app.example").is_ok());
        let error = options
            .allow_origin("https://app.example/path")
            .unwrap_err();
        assert_eq!(error.kind, "--allowed-origin");
        assert!(options.allow_host("bad host").is_err());
    }
}
