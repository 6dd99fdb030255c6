//! The client's credentials on the HTTP transport (docs/design.md §7): the bearer token checked on
//! every `/mcp` request, the 401 challenge of RFC 6750 §3 with RFC 9728's `resource_metadata`,
//! and the protected-resource metadata document itself.

use bytes::Bytes;
use http::StatusCode;
use http::header::{self, HeaderMap, HeaderValue};
use http_body_util::Full;
use serde_json::json;

use crate::auth::{BearerRefusal, Principal, RESOURCE_METADATA_PATH};

use super::Gateway;
use super::http::MCP_PATH;

type HttpResponse = http::Response<Full<Bytes>>;

/// What the connection itself established about the client.
#[derive(Clone, Debug)]
pub(crate) struct ClientConnection {
    /// The connection is TLS (the scheme of the default resource URL).
    pub(crate) tls: bool,
    /// The principal of the client certificate, when one was required and presented.
    pub(crate) certificate: Option<Principal>,
}

/// The resource URL the metadata names: `--resource-url`, or the request's scheme and Host.
fn resource_url(gateway: &Gateway, host: Option<&str>, connection: &ClientConnection) -> String {
    if let Some(url) = &gateway.options.resource_url {
        return url.clone();
    }
    let scheme = if connection.tls { "https" } else { "http" };
    format!("{scheme}://{}{MCP_PATH}", host.unwrap_or("localhost"))
}

/// The metadata document's URL: `/.well-known/oauth-protected-resource` inserted before the
/// resource's path (RFC 9728 §3.1).
fn metadata_url(resource: &str) -> String {
    let after_scheme = resource.find("://").map_or(0, |at| at + 3);
    let path_at = resource[after_scheme..]
        .find('/')
        .map_or(resource.len(), |at| after_scheme + at);
    let (origin, path) = resource.split_at(path_at);
    let path = if path == "/" { "" } else { path };
    format!("{origin}/.well-known/oauth-protected-resource{path}")
}

/// `GET /.well-known/oauth-protected-resource/mcp` (RFC 9728 §3.2), or `None` when the path is
/// another or no bearer tokens are configured.
pub(crate) fn metadata(
    gateway: &Gateway,
    path: &str,
    host: Option<&str>,
    connection: &ClientConnection,
) -> Option<HttpResponse> {
    let auth = gateway.options.bearer.as_ref()?;
    if path != RESOURCE_METADATA_PATH {
        return None;
    }
    let document = json!({
        "resource": resource_url(gateway, host, connection),
        "authorization_servers": [auth.issuer()],
        "bearer_methods_supported": ["header"],
        "resource_name": "toolgate",
    });
    let mut response =
        http::Response::new(Full::new(Bytes::from(jcs_digest::order::to_vec(&document))));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Some(response)
}

/// The principal of a request to `/mcp`, or the 401 that refuses it. Waits only when the token
/// names a `kid` the JWKS fetched from a URL lacks (one bounded refetch, shared).
pub(crate) async fn authenticate(
    gateway: &Gateway,
    headers: &HeaderMap,
    host: Option<&str>,
    connection: &ClientConnection,
) -> Result<Principal, Box<HttpResponse>> {
    let Some(auth) = gateway.options.bearer.as_ref() else {
        return Ok(connection
            .certificate
            .clone()
            .unwrap_or(Principal::Anonymous));
    };
    let values = headers
        .get_all(header::AUTHORIZATION)
        .iter()
        .map(HeaderValue::as_bytes);
    auth.authenticate(values).await.map_err(|refusal| {
        let resource = resource_url(gateway, host, connection);
        tracing::info!(host = ?host, "refused a request: {refusal}");
        Box::new(unauthorized(&metadata_url(&resource), &refusal))
    })
}

/// HTTP 401 with `WWW-Authenticate: Bearer resource_metadata="…"` (RFC 9728 §5.1), and
/// `error="invalid_token"` when a token was sent (RFC 6750 §3.1).
fn unauthorized(metadata: &str, refusal: &BearerRefusal) -> HttpResponse {
    let challenge = if refusal.is_missing() {
        format!("Bearer resource_metadata=\"{metadata}\"")
    } else {
        format!("Bearer resource_metadata=\"{metadata}\", error=\"invalid_token\"")
    };
    let text = format!("Unauthorized: {refusal}");
    let mut response = http::Response::new(Full::new(Bytes::from(text)));
    *response.status_mut() = StatusCode::UNAUTHORIZED;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    // The URL came from Host, which the rebinding check has accepted (visible ASCII).
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metadata_path_is_inserted_before_the_resource_path() {
        assert_eq!(
            metadata_url("https://gw.example:8443/mcp"),
            "https://gw.example:8443/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            metadata_url("https://gw.example"),
            "https://gw.example/.well-known/oauth-protected-resource"
        );
        assert_eq!(
            metadata_url("https://gw.example/"),
            "https://gw.example/.well-known/oauth-protected-resource"
        );
    }
}
