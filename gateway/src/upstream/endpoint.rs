//! The parts of an upstream URL the client needs: where to connect, which name to verify, what
//! to put in `Host` and the request line.

use rustls_pki_types::ServerName;

use super::error::UpstreamError;

/// A parsed `https` upstream URL.
#[derive(Debug, Clone)]
pub(super) struct Endpoint {
    /// The URL as given (for messages and the audit log).
    pub(super) url: String,
    /// Host for the TCP connection (an IPv6 literal without brackets).
    pub(super) host: String,
    /// Port (443 when the URL has none).
    pub(super) port: u16,
    /// The name the TLS verifier checks (a DNS name or an IP address).
    pub(super) server_name: ServerName<'static>,
    /// The `Host` header value: the URL's authority.
    pub(super) authority: String,
    /// The request target: path and query (`/` when empty).
    pub(super) path_and_query: String,
}

impl Endpoint {
    pub(super) fn parse(url: &str) -> Result<Endpoint, UpstreamError> {
        let invalid = |detail: &str| UpstreamError::InvalidUrl {
            url: url.to_owned(),
            detail: detail.to_owned(),
        };
        let uri: http::Uri = url
            .parse()
            .map_err(|error: http::uri::InvalidUri| invalid(&error.to_string()))?;
        if uri.scheme_str() != Some("https") {
            return Err(invalid(
                "the scheme must be https (upstreams are always reached over TLS)",
            ));
        }
        let authority = uri.authority().ok_or_else(|| invalid("it has no host"))?;
        if authority.as_str().contains('@') {
            return Err(invalid("user information in the URL is not supported"));
        }
        let host = authority.host();
        let bare_host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        if bare_host.is_empty() {
            return Err(invalid("it has no host"));
        }
        let server_name = ServerName::try_from(bare_host.clone())
            .map_err(|_| invalid("the host is neither a DNS name nor an IP address"))?;
        let path_and_query = uri
            .path_and_query()
            .map_or_else(|| "/".to_owned(), |path| path.as_str().to_owned());
        let path_and_query = if path_and_query.is_empty() {
            "/".to_owned()
        } else {
            path_and_query
        };
        Ok(Endpoint {
            url: url.to_owned(),
            host: bare_host,
            port: authority.port_u16().unwrap_or(443),
            server_name,
            authority: authority.as_str().to_owned(),
            path_and_query,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_into_connect_address_name_and_target() {
        let endpoint = Endpoint::parse("https://127.0.0.1:8443/mcp?x=1").unwrap();
        assert_eq!((endpoint.host.as_str(), endpoint.port), ("127.0.0.1", 8443));
        assert_eq!(endpoint.authority, "127.0.0.1:8443");
        assert_eq!(endpoint.path_and_query, "/mcp?x=1");
        let endpoint = Endpoint::parse("https://[::1]/").unwrap();
        assert_eq!((endpoint.host.as_str(), endpoint.port), ("::1", 443));
        assert!(matches!(
            Endpoint::parse("http://127.0.0.1/mcp"),
            Err(UpstreamError::InvalidUrl { .. })
        ));
        assert!(matches!(
            Endpoint::parse("https:///x"),
            Err(UpstreamError::InvalidUrl { .. })
        ));
    }
}
