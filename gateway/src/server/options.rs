//! What the client-facing side may accept and send: sizes, page size, Host and Origin lists.

use std::net::SocketAddr;

/// Limits and allow-lists for the client-facing side (DESIGN.md §5 "Clients").
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
        }
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

    /// Live sessions kept for the 2025 protocol versions (at least 1).
    pub fn max_sessions(&mut self, sessions: usize) -> &mut Self {
        self.max_sessions = sessions.max(1);
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
