//! MCP Streamable HTTP on `/mcp` (docs/design.md §5 "Clients").
//!
//! `POST /mcp` carries one JSON-RPC message and is answered with `application/json` (the gateway
//! never streams: each call yields exactly one response). `DELETE /mcp` ends a session. `GET /mcp`
//! (the server-to-client stream) is not offered: 405. Batches are refused (-32600): MCP removed
//! them in 2025-06-18, and one request per POST keeps one audit decision per HTTP exchange.
//!
//! The order of checks: path, Host and Origin (DNS rebinding; 403), method, content type (415),
//! size (413), JSON-RPC shape (-32700/-32600, HTTP 400), then the generation:
//!
//! - **2026-07-28** (an `MCP-Protocol-Version` header naming a version outside the session
//!   generation, or a body carrying the `params._meta` envelope, or `server/discover`): no
//!   session; `params._meta` must carry the protocol version and client capabilities (-32602);
//!   `MCP-Protocol-Version`, `Mcp-Method` and, for `tools/call`, `Mcp-Name` must each appear
//!   once and equal the body (-32020); the version must be served (-32022). Errors use the HTTP
//!   statuses of the Python reference (400; 404 for -32601).
//! - **2025-03-26 … 2025-11-25**: `initialize` opens a session and returns `Mcp-Session-Id`;
//!   every other request must carry it (missing: 400, unknown or ended: 404).

use std::convert::Infallible;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderValue};
use http::{Method, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use jcs_digest::order::Sorted;
use serde_json::{Map, Value};

use crate::auth::Principal;
use crate::mcp::{
    ErrorObject, Generation, META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, Message,
    ProtocolVersion, Request, Response, decode_header_value, error_codes, headers as mcp_headers,
    methods, name_bearing_param,
};

use super::Gateway;
use super::client_auth::{self, ClientConnection};
use super::dispatch::{self, Exchange};
use super::rebinding;

/// The path the gateway serves MCP on.
pub const MCP_PATH: &str = "/mcp";

/// How long a client may take to send a request body once its headers arrived.
const BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);

type HttpResponse = http::Response<Full<Bytes>>;

/// Answers one HTTP request. Never fails: every problem is an HTTP status or a JSON-RPC error.
///
/// `peer` is the client's address as its caps count it (`listen::client_key`), which owns the
/// sessions it opens.
pub(crate) async fn handle(
    gateway: Arc<Gateway>,
    request: http::Request<Incoming>,
    peer: IpAddr,
    connection: &ClientConnection,
) -> Result<HttpResponse, Infallible> {
    gateway.request_started();
    Ok(route(&gateway, request, peer, connection).await)
}

async fn route(
    gateway: &Gateway,
    request: http::Request<Incoming>,
    peer: IpAddr,
    connection: &ClientConnection,
) -> HttpResponse {
    let path = request.uri().path();
    if path != MCP_PATH && path != crate::auth::RESOURCE_METADATA_PATH {
        return plain(StatusCode::NOT_FOUND, "Not Found: the MCP endpoint is /mcp");
    }
    let host = match request_host(&request) {
        Ok(host) => host,
        Err(response) => return *response,
    };
    let mut origins = request.headers().get_all(header::ORIGIN).iter();
    let origin = match (origins.next(), origins.next()) {
        (None, _) => None,
        (Some(one), None) => Some(one.to_str().unwrap_or("(not visible ASCII)")),
        (Some(_), Some(_)) => Some("(several Origin headers)"),
    };
    if let Err(refusal) = rebinding::check(&gateway.options, host, origin) {
        tracing::warn!(host = ?host, origin = ?origin, "refused a request: {}", refusal.message());
        return plain(StatusCode::FORBIDDEN, &refusal.message());
    }
    if path != MCP_PATH {
        return client_auth::metadata(gateway, path, host, connection).unwrap_or_else(|| {
            plain(StatusCode::NOT_FOUND, "Not Found: the MCP endpoint is /mcp")
        });
    }
    let principal =
        match client_auth::authenticate(gateway, request.headers(), host, connection).await {
            Ok(principal) => principal,
            Err(response) => return *response,
        };
    match *request.method() {
        Method::POST => post(gateway, request, peer, &principal).await,
        Method::DELETE => delete(gateway, request.headers()),
        _ => {
            let mut response = plain(
                StatusCode::METHOD_NOT_ALLOWED,
                "Method Not Allowed: POST a JSON-RPC message to /mcp (DELETE ends a session; \
                 this gateway offers no server-to-client stream)",
            );
            response
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("POST, DELETE"));
            response
        }
    }
}

/// The host the request names: its one `Host` header, or the authority of its target (HTTP/2's
/// `:authority`, HTTP/1.1's absolute form). Two `Host` headers, or a target whose authority is
/// not the `Host`, are refused (400): two parties could read two different hosts, and the
/// rebinding check must see the one the client meant.
fn request_host(request: &http::Request<Incoming>) -> Result<Option<&str>, Box<HttpResponse>> {
    let mut values = request.headers().get_all(header::HOST).iter();
    let header = match (values.next(), values.next()) {
        (None, _) => None,
        (Some(one), None) => Some(one.to_str().map_err(|_| {
            Box::new(plain(
                StatusCode::BAD_REQUEST,
                "Bad Request: the Host header is not visible ASCII",
            ))
        })?),
        (Some(_), Some(_)) => {
            return Err(Box::new(plain(
                StatusCode::BAD_REQUEST,
                "Bad Request: the request has more than one Host header; send exactly one",
            )));
        }
    };
    let authority = request
        .uri()
        .authority()
        .map(|authority| authority.as_str());
    match (header, authority) {
        (Some(header), Some(authority)) if !header.eq_ignore_ascii_case(authority) => {
            Err(Box::new(plain(
                StatusCode::BAD_REQUEST,
                &format!(
                    "Bad Request: the request target names {:?} but the Host header names {:?}; \
                     they must agree",
                    shown_text(authority),
                    shown_text(header)
                ),
            )))
        }
        (Some(host), _) | (None, Some(host)) => Ok(Some(host)),
        (None, None) => Ok(None),
    }
}

/// At most 100 characters of a client's text, for a message.
fn shown_text(text: &str) -> String {
    text.chars().take(100).collect()
}

fn delete(gateway: &Gateway, headers: &HeaderMap) -> HttpResponse {
    match session_header(headers) {
        SessionHeader::Missing => plain(
            StatusCode::BAD_REQUEST,
            "Bad Request: DELETE needs the Mcp-Session-Id header",
        ),
        SessionHeader::Invalid => plain(
            StatusCode::BAD_REQUEST,
            "Bad Request: Mcp-Session-Id must appear once, in visible ASCII",
        ),
        SessionHeader::Present(id) => {
            if gateway.sessions.close(&id) {
                plain(StatusCode::OK, "")
            } else {
                plain(
                    StatusCode::NOT_FOUND,
                    "Not Found: no such session (unknown or already ended)",
                )
            }
        }
    }
}

async fn post(
    gateway: &Gateway,
    request: http::Request<Incoming>,
    peer: IpAddr,
    principal: &Principal,
) -> HttpResponse {
    let (parts, body) = request.into_parts();
    let headers = &parts.headers;
    if !is_json_content_type(headers) {
        return plain(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Unsupported Media Type: POST the JSON-RPC message as Content-Type: application/json",
        );
    }
    let limit = gateway.options.max_request_bytes;
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|text| text.parse::<u64>().ok());
    if declared.is_some_and(|length| length > limit as u64) {
        return too_large(limit);
    }
    // Held until the answer is built: the body and what is made of it are in memory till then.
    let Some(_budget) = reserve_request_bytes(gateway, declared) else {
        return budget_exhausted(gateway);
    };
    let bytes =
        match tokio::time::timeout(BODY_READ_TIMEOUT, Limited::new(body, limit).collect()).await {
            Err(_) => {
                return plain(
                    StatusCode::REQUEST_TIMEOUT,
                    "Request Timeout: the body did not arrive in time",
                );
            }
            Ok(Err(error)) => {
                if error
                    .downcast_ref::<http_body_util::LengthLimitError>()
                    .is_some()
                {
                    return too_large(limit);
                }
                return plain(
                    StatusCode::BAD_REQUEST,
                    "Bad Request: the request body could not be read",
                );
            }
            Ok(Ok(collected)) => collected.to_bytes(),
        };

    let message = match Message::from_slice(&bytes) {
        Ok(message) => message,
        Err(error) => {
            return json_response(gateway, StatusCode::BAD_REQUEST, error.to_response(), None);
        }
    };
    match message {
        // The gateway sends clients no requests, so a response from one answers nothing; accept
        // it as the transport requires and drop it.
        Message::Response(_) => accepted(),
        Message::Notification(notification) => {
            if let Some(refusal) = unknown_version(headers, notification.params.as_ref()) {
                return refusal;
            }
            let stateless =
                is_stateless(headers, &notification.method, notification.params.as_ref());
            if stateless {
                match header_version(headers) {
                    Ok(Some(version)) if version.generation() == Generation::Stateless => {
                        accepted()
                    }
                    _ => plain(
                        StatusCode::BAD_REQUEST,
                        "Bad Request: a 2026-07-28 notification needs MCP-Protocol-Version: 2026-07-28",
                    ),
                }
            } else {
                match check_session(gateway, headers) {
                    Ok(_) => accepted(),
                    Err(response) => *response,
                }
            }
        }
        Message::Request(request) => {
            if let Some(refusal) = unknown_version(headers, request.params.as_ref()) {
                return refusal;
            }
            if is_stateless(headers, &request.method, request.params.as_ref()) {
                stateless_request(gateway, headers, request, principal).await
            } else {
                session_request(gateway, headers, request, peer, principal).await
            }
        }
    }
}

/// A 400 for an `MCP-Protocol-Version` header naming no version the gateway serves, on a
/// message without the 2026-07-28 envelope (whose own ladder answers -32022 with the list).
fn unknown_version(
    headers: &HeaderMap,
    params: Option<&Map<String, Value>>,
) -> Option<HttpResponse> {
    let envelope = params
        .and_then(|params| params.get("_meta"))
        .and_then(Value::as_object)
        .is_some_and(|meta| meta.contains_key(META_PROTOCOL_VERSION));
    let mut values = headers.get_all(mcp_headers::MCP_PROTOCOL_VERSION).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return None;
    };
    let text = String::from_utf8_lossy(value.as_bytes());
    if envelope || ProtocolVersion::from_wire(&text).is_some() {
        return None;
    }
    Some(rpc_status(
        StatusCode::BAD_REQUEST,
        &format!(
            "Bad Request: unsupported MCP-Protocol-Version {:?}; {}",
            shown_text(&text),
            dispatch::supported_versions()
        ),
    ))
}

/// Whether a message belongs to 2026-07-28: an `MCP-Protocol-Version` header outside the
/// session generation, the `params._meta` envelope, or `server/discover`.
fn is_stateless(headers: &HeaderMap, method: &str, params: Option<&Map<String, Value>>) -> bool {
    let header_says = headers
        .get(mcp_headers::MCP_PROTOCOL_VERSION)
        .is_some_and(|value| {
            !value
                .to_str()
                .ok()
                .and_then(ProtocolVersion::from_wire)
                .is_some_and(|v| v.generation() == Generation::Session)
        });
    let envelope = params
        .and_then(|params| params.get("_meta"))
        .and_then(Value::as_object)
        .is_some_and(|meta| meta.contains_key(META_PROTOCOL_VERSION));
    header_says || envelope || method == methods::SERVER_DISCOVER
}

async fn stateless_request(
    gateway: &Gateway,
    headers: &HeaderMap,
    request: Request,
    principal: &Principal,
) -> HttpResponse {
    let id = request.id.clone();
    let version = match check_envelope(headers, &request) {
        Ok(version) => version,
        Err(error) => {
            let status = stateless_status(error.code);
            return json_response(gateway, status, Response::error(Some(id), error), None);
        }
    };
    let (response, status) = match dispatch::answer(
        gateway,
        Exchange::Stateless(version),
        &request,
        None,
        principal,
    )
    .await
    {
        Ok(result) => (Response::result(id, result), StatusCode::OK),
        Err(refusal) => {
            let status = match refusal.denial {
                Some(reason) => reason.http_status(),
                None => stateless_status(refusal.error.code),
            };
            (Response::error(Some(id), refusal.error), status)
        }
    };
    json_response(gateway, status, response, None)
}

/// The HTTP status of a 2026-07-28 error response that is not a denial (the table of the
/// Python reference, `mcp.shared.inbound.ERROR_CODE_HTTP_STATUS`; other codes are 200). A
/// denial's status is its reason's ([`crate::denial::DenialReason::http_status`]).
fn stateless_status(code: i64) -> StatusCode {
    match code {
        error_codes::PARSE_ERROR
        | error_codes::INVALID_REQUEST
        | error_codes::INVALID_PARAMS
        | error_codes::HEADER_MISMATCH
        | error_codes::MISSING_REQUIRED_CLIENT_CAPABILITY
        | error_codes::UNSUPPORTED_PROTOCOL_VERSION => StatusCode::BAD_REQUEST,
        error_codes::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        _ => StatusCode::OK,
    }
}

/// The 2026-07-28 request ladder: envelope present, headers equal to the body, version served.
fn check_envelope(headers: &HeaderMap, request: &Request) -> Result<ProtocolVersion, ErrorObject> {
    let meta = request
        .params
        .as_ref()
        .and_then(|params| params.get("_meta"))
        .and_then(Value::as_object);
    let Some(meta) = meta else {
        return Err(ErrorObject::new(
            error_codes::INVALID_PARAMS,
            format!(
                "Invalid params: a 2026-07-28 request needs params._meta with \
                 {META_PROTOCOL_VERSION:?} and {META_CLIENT_CAPABILITIES:?}"
            ),
        ));
    };
    let missing: Vec<&str> = [META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES]
        .into_iter()
        .filter(|key| !meta.contains_key(*key))
        .collect();
    if !missing.is_empty() {
        return Err(ErrorObject::new(
            error_codes::INVALID_PARAMS,
            format!(
                "Invalid params: params._meta is missing the required key(s): {}",
                missing.join(", ")
            ),
        ));
    }
    for name in [
        mcp_headers::MCP_PROTOCOL_VERSION,
        mcp_headers::MCP_METHOD,
        mcp_headers::MCP_NAME,
    ] {
        if headers.get_all(name).iter().count() > 1 {
            return Err(mismatch(format!(
                "the {name} header appears more than once"
            )));
        }
    }
    let body_version = &meta[META_PROTOCOL_VERSION];
    let header_version = headers
        .get(mcp_headers::MCP_PROTOCOL_VERSION)
        .and_then(|value| value.to_str().ok());
    if header_version.is_none() || header_version != body_version.as_str() {
        return Err(mismatch(format!(
            "the MCP-Protocol-Version header ({}) does not match params._meta[{META_PROTOCOL_VERSION:?}] ({})",
            shown(header_version),
            Sorted(body_version)
        )));
    }
    let method_header = headers
        .get(mcp_headers::MCP_METHOD)
        .and_then(|value| value.to_str().ok());
    if method_header != Some(request.method.as_str()) {
        return Err(mismatch(format!(
            "the Mcp-Method header ({}) does not match the body's method {:?}",
            shown(method_header),
            request.method
        )));
    }
    if let Some(member) = name_bearing_param(&request.method) {
        if let Some(body_name) = request
            .params
            .as_ref()
            .and_then(|params| params.get(member))
        {
            let raw = headers.get(mcp_headers::MCP_NAME);
            let header_name = raw.and_then(|value| decode_header_value(value.as_bytes()));
            if raw.is_some() && header_name.is_none() {
                return Err(mismatch(
                    "the Mcp-Name header is malformed: a value outside printable ASCII (raw \
                     UTF-8, say) must travel as =?base64?<base64 of its UTF-8>?=, and a \
                     =?base64?…?= value must decode to UTF-8"
                        .to_owned(),
                ));
            }
            if header_name.as_deref() != body_name.as_str() {
                return Err(mismatch(format!(
                    "the Mcp-Name header ({}) does not match the body's params.{member} ({})",
                    shown(header_name.as_deref()),
                    Sorted(body_name)
                )));
            }
        }
    }
    let Some(version) = body_version.as_str() else {
        return Err(ErrorObject::new(
            error_codes::INVALID_PARAMS,
            "Invalid params: the protocol version must be a string",
        ));
    };
    match ProtocolVersion::from_wire(version)
        .filter(|version| version.generation() == Generation::Stateless)
    {
        Some(version) => Ok(version),
        None => Err(dispatch::unsupported_version(body_version)),
    }
}

fn shown(value: Option<&str>) -> String {
    match value {
        None => "absent".to_owned(),
        Some(text) => format!("{:?}", text.chars().take(100).collect::<String>()),
    }
}

fn mismatch(detail: String) -> ErrorObject {
    ErrorObject::new(
        error_codes::HEADER_MISMATCH,
        format!("Header mismatch: {detail}"),
    )
}

async fn session_request(
    gateway: &Gateway,
    headers: &HeaderMap,
    request: Request,
    peer: IpAddr,
    principal: &Principal,
) -> HttpResponse {
    let id = request.id.clone();
    if request.method == methods::INITIALIZE {
        let (version, result) = dispatch::initialize(request.params.as_ref());
        let session = match gateway.sessions.open(version, Some(peer)) {
            Ok(session) => session,
            Err(_) => {
                let error = ErrorObject::new(
                    error_codes::INTERNAL_ERROR,
                    "Internal error: no random session id available",
                );
                return json_response(
                    gateway,
                    StatusCode::INTERNAL_SERVER_ERROR,
                    Response::error(Some(id), error),
                    None,
                );
            }
        };
        tracing::debug!(protocol_version = version.as_str(), "opened a session");
        return json_response(
            gateway,
            StatusCode::OK,
            Response::result(id, result),
            Some(&session),
        );
    }
    let version = match check_session(gateway, headers) {
        Ok(version) => version,
        Err(response) => return *response,
    };
    let session = match session_header(headers) {
        SessionHeader::Present(session) => Some(session),
        SessionHeader::Missing | SessionHeader::Invalid => None,
    };
    let response = match dispatch::answer(
        gateway,
        Exchange::Session(version),
        &request,
        session.as_deref(),
        principal,
    )
    .await
    {
        Ok(result) => Response::result(id, result),
        Err(refusal) => Response::error(Some(id), refusal.error),
    };
    json_response(gateway, StatusCode::OK, response, None)
}

/// The session's version, or the HTTP answer for a missing (400) or unknown (404) session.
fn check_session(
    gateway: &Gateway,
    headers: &HeaderMap,
) -> Result<ProtocolVersion, Box<HttpResponse>> {
    let id = match session_header(headers) {
        SessionHeader::Present(id) => id,
        SessionHeader::Missing => {
            return Err(Box::new(rpc_status(
                StatusCode::BAD_REQUEST,
                "Bad Request: Mcp-Session-Id header is required; send initialize first, or use \
                 protocol version 2026-07-28 (stateless)",
            )));
        }
        SessionHeader::Invalid => {
            return Err(Box::new(rpc_status(
                StatusCode::BAD_REQUEST,
                "Bad Request: Mcp-Session-Id must appear once, in visible ASCII",
            )));
        }
    };
    let Some(version) = gateway.sessions.touch(&id) else {
        return Err(Box::new(rpc_status(
            StatusCode::NOT_FOUND,
            "Session not found: it ended or was never issued; send initialize for a new session",
        )));
    };
    match header_version(headers) {
        Ok(None) => Ok(version),
        Ok(Some(header)) if header.generation() == Generation::Session => Ok(version),
        _ => Err(Box::new(rpc_status(
            StatusCode::BAD_REQUEST,
            "Bad Request: MCP-Protocol-Version names a version this session does not speak \
             (2025-03-26, 2025-06-18 or 2025-11-25)",
        ))),
    }
}

enum SessionHeader {
    Missing,
    Invalid,
    Present(String),
}

fn session_header(headers: &HeaderMap) -> SessionHeader {
    let values: Vec<&HeaderValue> = headers
        .get_all(mcp_headers::MCP_SESSION_ID)
        .iter()
        .collect();
    match values.as_slice() {
        [] => SessionHeader::Missing,
        [one] => match one.to_str() {
            Ok(text) if !text.is_empty() && text.len() <= 256 => {
                SessionHeader::Present(text.to_owned())
            }
            _ => SessionHeader::Invalid,
        },
        _ => SessionHeader::Invalid,
    }
}

/// The `MCP-Protocol-Version` header: `Ok(None)` when absent, `Err(())` when repeated or not a
/// served version.
fn header_version(headers: &HeaderMap) -> Result<Option<ProtocolVersion>, ()> {
    let values: Vec<&HeaderValue> = headers
        .get_all(mcp_headers::MCP_PROTOCOL_VERSION)
        .iter()
        .collect();
    match values.as_slice() {
        [] => Ok(None),
        [one] => one
            .to_str()
            .ok()
            .and_then(ProtocolVersion::from_wire)
            .map(Some)
            .ok_or(()),
        _ => Err(()),
    }
}

fn is_json_content_type(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|text| text.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
}

/// The request's share of `--max-request-bytes-in-flight`: its `Content-Length`, or
/// `--max-request-bytes` when it sends none (each bounded by the whole budget); `None` when the
/// budget does not have it now.
fn reserve_request_bytes(
    gateway: &Gateway,
    declared: Option<u64>,
) -> Option<tokio::sync::SemaphorePermit<'_>> {
    let limit = gateway.options.max_request_bytes as u64;
    let budget = gateway.options.max_request_bytes_in_flight as u64;
    let wanted = declared.unwrap_or(limit).min(limit).min(budget).max(1);
    let wanted = u32::try_from(wanted).unwrap_or(u32::MAX);
    gateway.request_budget.try_acquire_many(wanted).ok()
}

fn budget_exhausted(gateway: &Gateway) -> HttpResponse {
    let mut response = plain(
        StatusCode::SERVICE_UNAVAILABLE,
        &format!(
            "Service Unavailable: the requests in flight hold the gateway's budget of {} request \
             bytes (--max-request-bytes-in-flight); retry shortly",
            gateway.options.max_request_bytes_in_flight
        ),
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

fn too_large(limit: usize) -> HttpResponse {
    plain(
        StatusCode::PAYLOAD_TOO_LARGE,
        &format!("Payload Too Large: the request body exceeds {limit} bytes (--max-request-bytes)"),
    )
}

fn accepted() -> HttpResponse {
    plain(StatusCode::ACCEPTED, "")
}

fn plain(status: StatusCode, text: &str) -> HttpResponse {
    let mut response = http::Response::new(Full::new(Bytes::from(text.to_owned())));
    *response.status_mut() = status;
    if !text.is_empty() {
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
    }
    response
}

/// A transport-level refusal spelled as a JSON-RPC error (`id: null`), as MCP SDK clients expect.
fn rpc_status(status: StatusCode, message: &str) -> HttpResponse {
    let body = Message::Response(Response::error(
        None,
        ErrorObject::new(error_codes::INVALID_REQUEST, message),
    ))
    .to_vec();
    let mut response = http::Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// Serializes a JSON-RPC response, bounded by `--max-response-bytes`.
fn json_response(
    gateway: &Gateway,
    status: StatusCode,
    response: Response,
    session: Option<&str>,
) -> HttpResponse {
    let body = bounded_body(gateway, response);
    let mut http_response = http::Response::new(Full::new(Bytes::from(body)));
    *http_response.status_mut() = status;
    http_response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if let Some(session) = session.and_then(|session| HeaderValue::from_str(session).ok()) {
        http_response
            .headers_mut()
            .insert(mcp_headers::MCP_SESSION_ID, session);
    }
    http_response
}

/// The bytes of a response, or of an error naming the limit when they would exceed it.
pub(crate) fn bounded_body(gateway: &Gateway, response: Response) -> Vec<u8> {
    let id = response.id.clone();
    let body = Message::Response(response).to_vec();
    let limit = gateway.options.max_response_bytes;
    if body.len() <= limit {
        return body;
    }
    tracing::warn!(
        bytes = body.len(),
        limit,
        "a response exceeded --max-response-bytes and was replaced by an error"
    );
    let error = ErrorObject::new(
        error_codes::INTERNAL_ERROR,
        format!(
            "Internal error: the response of {} bytes exceeds the gateway's limit of {limit} bytes \
             (--max-response-bytes)",
            body.len()
        ),
    );
    Message::Response(Response::error(id, error)).to_vec()
}
