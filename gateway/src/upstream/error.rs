//! `UpstreamError`: why a conversation with an upstream failed, precise enough for the router to
//! pick a denial reason and for a person to act on (docs/design.md §5: `identity_mismatch`,
//! `upstream_unavailable`, `upstream_error`).

use std::fmt;
use std::time::Duration;

use serde_json::Value;
use server_identity::IdentityError;

use crate::denial::DenialReason;

/// The denial reason for an identity failure.
pub const REASON_IDENTITY_MISMATCH: DenialReason = DenialReason::IdentityMismatch;
/// The denial reason for an upstream that cannot be reached or does not answer in time.
pub const REASON_UPSTREAM_UNAVAILABLE: DenialReason = DenialReason::UpstreamUnavailable;
/// The denial reason for an upstream that answered, but not with a usable result.
pub const REASON_UPSTREAM_ERROR: DenialReason = DenialReason::UpstreamError;

/// Which part of an exchange ran out of time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TimeoutPhase {
    /// TCP connect and TLS handshake ([`super::UpstreamOptions::connect_timeout`]).
    Connect,
    /// Sending the request and reading the whole response
    /// ([`super::UpstreamOptions::request_timeout`]).
    Response,
}

impl fmt::Display for TimeoutPhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TimeoutPhase::Connect => "connect (TCP and TLS handshake)",
            TimeoutPhase::Response => "answer",
        })
    }
}

/// Why a request to an upstream failed. [`UpstreamError::reason`] maps it to a denial reason.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum UpstreamError {
    /// The URL cannot be used: not `https`, no host, or not a valid URI.
    #[error(
        "upstream URL `{url}` cannot be used: {detail}; upstream URLs are https://HOST[:PORT]/PATH"
    )]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        detail: String,
    },
    /// The server is not the one the catalog approved: the pinning verifier refused its
    /// certificate inside the TLS handshake, before any application byte was sent.
    #[error("upstream {url}: {error}")]
    Identity {
        /// The upstream URL.
        url: String,
        /// Which anchor failed, what was expected and what was presented.
        error: IdentityError,
    },
    /// The TCP connection could not be made (refused, unreachable, name not resolved).
    #[error(
        "upstream {url} is unavailable: cannot connect: {detail}; check that the server runs \
         and listens at that address"
    )]
    Connect {
        /// The upstream URL.
        url: String,
        /// The operating system's reason.
        detail: String,
    },
    /// The TLS handshake failed for another reason than identity (no TLS, alert, protocol).
    #[error("upstream {url} is unavailable: TLS handshake failed: {detail}")]
    Tls {
        /// The upstream URL.
        url: String,
        /// The TLS library's reason.
        detail: String,
    },
    /// A phase did not finish in time.
    #[error(
        "upstream {url} is unavailable: no {phase} within {} ms; the upstream is slow or hung \
         (raise the timeout if it is expected to be this slow)",
        timeout.as_millis()
    )]
    Timeout {
        /// The upstream URL.
        url: String,
        /// What did not finish.
        phase: TimeoutPhase,
        /// The limit in force.
        timeout: Duration,
    },
    /// The connection was closed or reset before the response was complete.
    #[error("upstream {url} is unavailable: the connection closed during {method}: {detail}")]
    ConnectionClosed {
        /// The upstream URL.
        url: String,
        /// The JSON-RPC method in flight.
        method: String,
        /// The HTTP library's reason.
        detail: String,
    },
    /// An HTTP status other than success, without a JSON-RPC error in the body.
    #[error(
        "upstream {url} answered {method} with HTTP status {status}{}",
        body_text(body)
    )]
    HttpStatus {
        /// The upstream URL.
        url: String,
        /// The JSON-RPC method sent.
        method: String,
        /// The status code.
        status: u16,
        /// The start of the body (at most 200 characters), for the log.
        body: String,
    },
    /// The response exceeded [`super::UpstreamOptions::max_response_bytes`].
    #[error("upstream {url} sent more than {limit} bytes in answer to {method}; refused")]
    ResponseTooLarge {
        /// The upstream URL.
        url: String,
        /// The JSON-RPC method sent.
        method: String,
        /// The limit in bytes.
        limit: usize,
    },
    /// The response is not a valid answer (content type, JSON, JSON-RPC, id, shape).
    #[error("upstream {url} sent a malformed answer to {method}: {detail}")]
    Malformed {
        /// The upstream URL.
        url: String,
        /// The JSON-RPC method sent.
        method: String,
        /// What is wrong with it.
        detail: String,
    },
    /// The upstream answered with a JSON-RPC error; its code, message and data are kept.
    #[error("upstream {url} answered {method} with JSON-RPC error {code}: {message}")]
    JsonRpc {
        /// The upstream URL.
        url: String,
        /// The JSON-RPC method sent.
        method: String,
        /// The upstream's error code.
        code: i64,
        /// The upstream's error message.
        message: String,
        /// The upstream's error data (boxed: a `Value` is large when serde_json's
        /// `preserve_order` is on, as cedar-policy-core turns it on).
        data: Option<Box<Value>>,
    },
    /// `tools/list` went on for more pages than [`super::UpstreamOptions::max_list_pages`].
    #[error(
        "upstream {url} returned more than {limit} tools/list pages; refused (a cursor loop, or \
         raise the page limit)"
    )]
    TooManyPages {
        /// The upstream URL.
        url: String,
        /// The page limit.
        limit: usize,
    },
    /// The pages of one `tools/list` together exceed
    /// [`super::UpstreamOptions::max_listing_bytes`] (docs/design.md §5, "Listings are bounded").
    #[error(
        "upstream {url} sent a tools/list larger than the listing budget of {limit} bytes: \
         {pages} pages ({bytes} bytes) were read and the next one did not fit; refused (raise \
         the budget if the upstream really serves that many tools)"
    )]
    ListingTooLarge {
        /// The upstream URL.
        url: String,
        /// The byte budget of one listing.
        limit: usize,
        /// The pages read whole before the budget ran out.
        pages: usize,
        /// Their bytes.
        bytes: usize,
    },
    /// One `tools/list`, every page together, took longer than its deadline
    /// ([`super::UpstreamOptions::listing_timeout`]).
    #[error(
        "upstream {url} did not finish its tools/list within the listing deadline of {} ms \
         ({pages} pages read); refused",
        deadline.as_millis()
    )]
    ListingTimeout {
        /// The upstream URL.
        url: String,
        /// The deadline of one listing.
        deadline: Duration,
        /// The pages read whole before it passed.
        pages: usize,
    },
    /// A `nextCursor` came back that an earlier page of the same listing already gave: the
    /// listing would never end.
    #[error(
        "upstream {url} repeated the tools/list cursor {cursor:?} on page {page} (first given on \
         page {first}); a listing that returns to a cursor never ends, so it is refused"
    )]
    RepeatedCursor {
        /// The upstream URL.
        url: String,
        /// The cursor (at most 100 characters of it).
        cursor: String,
        /// The page (1-based) that repeated it.
        page: usize,
        /// The page that first gave it.
        first: usize,
    },
    /// A `tools/call` could not be delivered on the connection it was checked for (it closed
    /// before the request was written); nothing was sent, and it is not sent on another
    /// connection without a fresh check (docs/design.md §5, "A check is never outrun").
    #[error(
        "upstream {url} is unavailable: the connection checked for tools/call closed before the \
         call was written ({detail}); nothing was sent"
    )]
    CallNotSent {
        /// The upstream URL.
        url: String,
        /// The transport's reason.
        detail: String,
    },
    /// The upstream had forgotten the session (HTTP 404) a `tools/call` was sent in. The call
    /// is not sent again into a new session without a fresh definition check.
    #[error(
        "upstream {url} is unavailable: it lost the session during tools/call (HTTP 404); the \
         call was not re-sent into a new session, retry it (the next call opens a new session \
         and checks the definition again)"
    )]
    SessionLost {
        /// The upstream URL.
        url: String,
    },
    /// Negotiation found no protocol version both sides speak.
    #[error(
        "upstream {url} speaks no protocol version the gateway supports (it offered {offered}); \
         supported: 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28"
    )]
    UnsupportedVersion {
        /// The upstream URL.
        url: String,
        /// What the upstream offered.
        offered: String,
    },
}

fn body_text(body: &str) -> String {
    if body.is_empty() {
        String::new()
    } else {
        format!(": {body}")
    }
}

impl UpstreamError {
    /// The denial reason (docs/design.md §5): [`REASON_IDENTITY_MISMATCH`],
    /// [`REASON_UPSTREAM_UNAVAILABLE`] or [`REASON_UPSTREAM_ERROR`]. This is the one place an
    /// upstream failure becomes a reason of [`crate::denial`]'s vocabulary.
    pub fn reason(&self) -> DenialReason {
        match self {
            UpstreamError::Identity { .. } => REASON_IDENTITY_MISMATCH,
            UpstreamError::Connect { .. }
            | UpstreamError::Tls { .. }
            | UpstreamError::Timeout { .. }
            | UpstreamError::ConnectionClosed { .. }
            | UpstreamError::CallNotSent { .. }
            | UpstreamError::SessionLost { .. } => REASON_UPSTREAM_UNAVAILABLE,
            UpstreamError::InvalidUrl { .. }
            | UpstreamError::HttpStatus { .. }
            | UpstreamError::ResponseTooLarge { .. }
            | UpstreamError::Malformed { .. }
            | UpstreamError::JsonRpc { .. }
            | UpstreamError::TooManyPages { .. }
            | UpstreamError::ListingTooLarge { .. }
            | UpstreamError::ListingTimeout { .. }
            | UpstreamError::RepeatedCursor { .. }
            | UpstreamError::UnsupportedVersion { .. } => REASON_UPSTREAM_ERROR,
        }
    }

    /// The identity failure, for [`UpstreamError::Identity`].
    pub fn identity_error(&self) -> Option<&IdentityError> {
        match self {
            UpstreamError::Identity { error, .. } => Some(error),
            _ => None,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_says_what_and_where_and_maps_to_one_reason() {
        let url = "https://127.0.0.1:1/mcp".to_owned();
        let method = "tools/call".to_owned();
        let presented = server_identity::Fingerprint::of_spki(b"presented");
        let expected = server_identity::Fingerprint::of_spki(b"expected");
        let cases = [
            (
                UpstreamError::InvalidUrl {
                    url: "http://x".into(),
                    detail: "the scheme must be https".into(),
                },
                "upstream URL `http://x` cannot be used: the scheme must be https; upstream URLs are https://HOST[:PORT]/PATH",
                REASON_UPSTREAM_ERROR,
            ),
            (
                UpstreamError::Identity {
                    url: url.clone(),
                    error: IdentityError::PinMismatch {
                        mode: server_identity::RotationMode::KeyPinned,
                        expected,
                        backups: Vec::new(),
                        presented,
                    },
                },
                "",
                REASON_IDENTITY_MISMATCH,
            ),
            (
                UpstreamError::Connect {
                    url: url.clone(),
                    detail: "Connection refused (os error 111)".into(),
                },
                "upstream https://127.0.0.1:1/mcp is unavailable: cannot connect: Connection refused (os error 111); check that the server runs and listens at that address",
                REASON_UPSTREAM_UNAVAILABLE,
            ),
            (
                UpstreamError::Tls {
                    url: url.clone(),
                    detail: "received fatal alert".into(),
                },
                "upstream https://127.0.0.1:1/mcp is unavailable: TLS handshake failed: received fatal alert",
                REASON_UPSTREAM_UNAVAILABLE,
            ),
            (
                UpstreamError::Timeout {
                    url: url.clone(),
                    phase: TimeoutPhase::Response,
                    timeout: Duration::from_millis(250),
                },
                "upstream https://127.0.0.1:1/mcp is unavailable: no answer within 250 ms; the upstream is slow or hung (raise the timeout if it is expected to be this slow)",
                REASON_UPSTREAM_UNAVAILABLE,
            ),
            (
                UpstreamError::ConnectionClosed {
                    url: url.clone(),
                    method: method.clone(),
                    detail: "connection closed before message completed".into(),
                },
                "upstream https://127.0.0.1:1/mcp is unavailable: the connection closed during tools/call: connection closed before message completed",
                REASON_UPSTREAM_UNAVAILABLE,
            ),
            (
                UpstreamError::HttpStatus {
                    url: url.clone(),
                    method: method.clone(),
                    status: 500,
                    body: "boom".into(),
                },
                "upstream https://127.0.0.1:1/mcp answered tools/call with HTTP status 500: boom",
                REASON_UPSTREAM_ERROR,
            ),
            (
                UpstreamError::ResponseTooLarge {
                    url: url.clone(),
                    method: method.clone(),
                    limit: 10,
                },
                "upstream https://127.0.0.1:1/mcp sent more than 10 bytes in answer to tools/call; refused",
                REASON_UPSTREAM_ERROR,
            ),
            (
                UpstreamError::Malformed {
                    url: url.clone(),
                    method: method.clone(),
                    detail: "no response".into(),
                },
                "upstream https://127.0.0.1:1/mcp sent a malformed answer to tools/call: no response",
                REASON_UPSTREAM_ERROR,
            ),
            (
                UpstreamError::JsonRpc {
                    url: url.clone(),
                    method: method.clone(),
                    code: -32602,
                    message: "Unknown tool: x".into(),
                    data: None,
                },
                "upstream https://127.0.0.1:1/mcp answered tools/call with JSON-RPC error -32602: Unknown tool: x",
                REASON_UPSTREAM_ERROR,
            ),
            (
                UpstreamError::TooManyPages {
                    url: url.clone(),
                    limit: 3,
                },
                "upstream https://127.0.0.1:1/mcp returned more than 3 tools/list pages; refused (a cursor loop, or raise the page limit)",
                REASON_UPSTREAM_ERROR,
            ),
            (
                UpstreamError::ListingTooLarge {
                    url: url.clone(),
                    limit: 1000,
                    pages: 2,
                    bytes: 900,
                },
                "upstream https://127.0.0.1:1/mcp sent a tools/list larger than the listing budget of 1000 bytes: 2 pages (900 bytes) were read and the next one did not fit; refused (raise the budget if the upstream really serves that many tools)",
                REASON_UPSTREAM_ERROR,
            ),
            (
                UpstreamError::ListingTimeout {
                    url: url.clone(),
                    deadline: Duration::from_millis(300),
                    pages: 4,
                },
                "upstream https://127.0.0.1:1/mcp did not finish its tools/list within the listing deadline of 300 ms (4 pages read); refused",
                REASON_UPSTREAM_ERROR,
            ),
            (
                UpstreamError::RepeatedCursor {
                    url: url.clone(),
                    cursor: "page-1".into(),
                    page: 3,
                    first: 1,
                },
                "upstream https://127.0.0.1:1/mcp repeated the tools/list cursor \"page-1\" on page 3 (first given on page 1); a listing that returns to a cursor never ends, so it is refused",
                REASON_UPSTREAM_ERROR,
            ),
            (
                UpstreamError::CallNotSent {
                    url: url.clone(),
                    detail: "connection closed".into(),
                },
                "upstream https://127.0.0.1:1/mcp is unavailable: the connection checked for tools/call closed before the call was written (connection closed); nothing was sent",
                REASON_UPSTREAM_UNAVAILABLE,
            ),
            (
                UpstreamError::SessionLost { url: url.clone() },
                "upstream https://127.0.0.1:1/mcp is unavailable: it lost the session during tools/call (HTTP 404); the call was not re-sent into a new session, retry it (the next call opens a new session and checks the definition again)",
                REASON_UPSTREAM_UNAVAILABLE,
            ),
            (
                UpstreamError::UnsupportedVersion {
                    url: url.clone(),
                    offered: "2024-11-05".into(),
                },
                "upstream https://127.0.0.1:1/mcp speaks no protocol version the gateway supports (it offered 2024-11-05); supported: 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28",
                REASON_UPSTREAM_ERROR,
            ),
        ];
        for (error, display, reason) in cases {
            assert_eq!(error.reason(), reason, "{error:?}");
            assert_eq!(error, error.clone());
            if display.is_empty() {
                let text = error.to_string();
                assert!(
                    text.starts_with(
                        "upstream https://127.0.0.1:1/mcp: identity mismatch (tls_fingerprint"
                    ),
                    "{text}"
                );
                assert!(
                    text.contains(&presented.to_string()) && text.contains(&expected.to_string()),
                    "{text}"
                );
                assert!(error.identity_error().is_some());
            } else {
                assert_eq!(error.to_string(), display);
                assert!(error.identity_error().is_none());
            }
        }
    }
}
