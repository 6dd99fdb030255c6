//! The parts of an upstream URL the client needs: where to connect, which name to verify, what
//! to put in `Host` and the request line. The URL is parsed once, by `catalog_store::UpstreamUrl`.

use catalog_store::UpstreamUrl;
use http::{HeaderValue, Uri};
use rustls_pki_types::ServerName;

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
    /// [`Endpoint::path_and_query`] as a request line's target, made once (every request clones
    /// it without copying); `None` when `http` refuses it, so that a request names the reason.
    pub(super) target: Option<Uri>,
    /// [`Endpoint::authority`] as a `Host` value, made once; `None` as for `target`.
    pub(super) host_header: Option<HeaderValue>,
}

impl Endpoint {
    /// The parts of a URL the catalog (or the command line) has already validated: nothing is
    /// parsed here.
    pub(super) fn new(url: &UpstreamUrl) -> Endpoint {
        let path_and_query = url.request_target();
        let authority = url.authority().to_owned();
        Endpoint {
            url: url.as_str().to_owned(),
            host: url.host().to_string(),
            port: url.port(),
            server_name: url.server_name(),
            target: Uri::try_from(path_and_query.as_str()).ok(),
            host_header: HeaderValue::from_str(&authority).ok(),
            authority,
            path_and_query,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_into_connect_address_name_and_target() {
        let endpoint = Endpoint::new(&"https://127.0.0.1:8443/mcp?x=1".parse().unwrap());
        assert_eq!((endpoint.host.as_str(), endpoint.port), ("127.0.0.1", 8443));
        assert_eq!(endpoint.authority, "127.0.0.1:8443");
        assert_eq!(endpoint.path_and_query, "/mcp?x=1");
        assert_eq!(endpoint.target, Some(Uri::from_static("/mcp?x=1")));
        assert_eq!(
            endpoint.host_header,
            Some(HeaderValue::from_static("127.0.0.1:8443"))
        );
        assert_eq!(endpoint.url, "https://127.0.0.1:8443/mcp?x=1");
        let endpoint = Endpoint::new(&"https://[::1]".parse().unwrap());
        assert_eq!((endpoint.host.as_str(), endpoint.port), ("::1", 443));
        assert_eq!(endpoint.authority, "[::1]");
        assert_eq!(endpoint.path_and_query, "/");
        assert_eq!(endpoint.server_name, ServerName::try_from("::1").unwrap());
    }
}
