//! DNS-rebinding protection: the Host and Origin headers must name this gateway.
//!
//! A web page on an attacker's domain can make a browser send requests to a loopback port once
//! its DNS name resolves to 127.0.0.1; such requests carry the attacker's name in `Host` and its
//! origin in `Origin`. Both are checked against allow-lists before anything else is read
//! (MCP Streamable HTTP, "Security Warning"; docs/design.md §5 "Clients").

use super::options::{ServerOptions, split_host_port};

/// Why a request was refused before its body was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RebindingRefusal {
    /// No Host header (HTTP/1.1 requires one; HTTP/2 carries it as `:authority`).
    MissingHost,
    /// A Host that is not on the allow-list.
    Host(String),
    /// An Origin that is not on the allow-list.
    Origin(String),
}

impl RebindingRefusal {
    pub(crate) fn message(&self) -> String {
        match self {
            RebindingRefusal::MissingHost => {
                "Forbidden: the request has no Host header; send the gateway's address as Host"
                    .into()
            }
            RebindingRefusal::Host(host) => format!(
                "Forbidden: Host {host:?} is not allowed (DNS-rebinding protection); \
                 connect by an allowed name or add it with --allowed-host"
            ),
            RebindingRefusal::Origin(origin) => format!(
                "Forbidden: Origin {origin:?} is not allowed (DNS-rebinding protection); \
                 add it with --allowed-origin if this web origin may use the gateway"
            ),
        }
    }
}

/// Checks `host` (the Host header or the URI authority) and `origin` (when sent).
pub(crate) fn check(
    options: &ServerOptions,
    host: Option<&str>,
    origin: Option<&str>,
) -> Result<(), RebindingRefusal> {
    let host = host.ok_or(RebindingRefusal::MissingHost)?;
    let allowed = split_host_port(host).is_some_and(|(name, port)| {
        options
            .allowed_hosts
            .iter()
            .any(|pattern| pattern.matches(name, port))
    });
    if !allowed {
        return Err(RebindingRefusal::Host(host.to_owned()));
    }
    if let Some(origin) = origin {
        if !origin_allowed(options, origin) {
            return Err(RebindingRefusal::Origin(origin.to_owned()));
        }
    }
    Ok(())
}

fn origin_allowed(options: &ServerOptions, origin: &str) -> bool {
    let lowered = origin.to_ascii_lowercase();
    if options.allowed_origins.contains(&lowered) {
        return true;
    }
    // `Origin: null` (sandboxed frames, file: pages) never matches: it names no host.
    let Some((scheme, authority)) = lowered.split_once("://") else {
        return false;
    };
    if scheme != "http" && scheme != "https" {
        return false;
    }
    split_host_port(authority).is_some_and(|(name, _)| {
        options
            .allowed_hosts
            .iter()
            .any(|pattern| pattern.port.is_none() && pattern.matches(name, None))
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn options() -> ServerOptions {
        ServerOptions::for_listen_address(([127, 0, 0, 1], 8080).into())
    }

    #[test]
    fn loopback_names_pass() {
        let options = options();
        for host in [
            "localhost:8080",
            "127.0.0.1:8080",
            "[::1]:8080",
            "LOCALHOST:1",
            "localhost",
        ] {
            assert_eq!(check(&options, Some(host), None), Ok(()), "{host}");
        }
        assert_eq!(
            check(
                &options,
                Some("localhost:8080"),
                Some("http://localhost:3000")
            ),
            Ok(())
        );
    }

    #[test]
    fn foreign_names_are_refused() {
        let options = options();
        assert_eq!(
            check(&options, Some("evil.example:8080"), None),
            Err(RebindingRefusal::Host("evil.example:8080".into()))
        );
        assert_eq!(
            check(
                &options,
                Some("localhost:8080"),
                Some("http://evil.example")
            ),
            Err(RebindingRefusal::Origin("http://evil.example".into()))
        );
        assert_eq!(
            check(&options, Some("localhost:8080"), Some("null")),
            Err(RebindingRefusal::Origin("null".into()))
        );
        assert_eq!(
            check(&options, None, None),
            Err(RebindingRefusal::MissingHost)
        );
        assert_eq!(
            check(&options, Some("localhost.evil.example"), None),
            Err(RebindingRefusal::Host("localhost.evil.example".into()))
        );
    }

    #[test]
    fn configured_entries_pass() {
        let mut options = options();
        options.allow_host("gateway.internal:8443").unwrap();
        options.allow_origin("https://app.example").unwrap();
        assert_eq!(
            check(
                &options,
                Some("gateway.internal:8443"),
                Some("https://app.example")
            ),
            Ok(())
        );
        assert!(check(&options, Some("gateway.internal:8444"), None).is_err());
    }
}
