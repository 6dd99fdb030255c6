//! Hearing `notifications/tools/list_changed` between requests: the session generation's `GET`
//! event stream, or the `subscriptions/listen` stream of 2026-07-28 (which replaces it). Each
//! such notification, and each reopening of a lost stream (notifications may have been missed
//! while it was down), bumps the client's invalidation counter, which the definition-check cache
//! follows (docs/design.md §5 "Definition check freshness").
//!
//! The task holds only a weak reference to the client, so dropping the last clone of the client
//! ends it; it also ends when the protocol state it listens for is replaced (a new session), or
//! when the server offers no such stream (HTTP 405, a JSON-RPC error, a non-SSE answer) or no
//! longer knows the session (HTTP 404).

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Method, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Map, json};

use super::client::{Negotiated, WeakInner, stamp};
use super::names;
use super::transport::{ACCEPT_JSON_OR_SSE, ACCEPT_SSE, media_type};
use crate::mcp::{self, Message, Request, SseParser};

/// The first pause before reopening a lost stream; it doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(250);
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// The largest single event accepted on the stream.
const MAX_EVENT_BYTES: usize = 1024 * 1024;
/// The 2026-07-28 method that opens a notification stream.
const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";

/// Why a stream stopped.
enum Ended {
    /// Stop for good: the client is gone, the state changed, or the server offers no stream.
    Finally,
    /// The stream was lost; reopen it.
    Lost,
}

pub(super) async fn listen(inner: WeakInner, negotiated: Negotiated) {
    let mut backoff = FIRST_BACKOFF;
    let mut opened_before = false;
    loop {
        match listen_once(&inner, &negotiated, &mut opened_before).await {
            Ended::Finally => return,
            Ended::Lost => {}
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// The request that opens the stream: `GET` with the session headers, or a `POST` of
/// `subscriptions/listen` asking for `toolsListChanged`.
fn stream_request(
    inner: &super::client::Inner,
    negotiated: &Negotiated,
) -> Option<http::Request<http_body_util::Full<Bytes>>> {
    let transport = &inner.transport;
    match negotiated {
        Negotiated::Session {
            version,
            session_id: Some(session_id),
        } => {
            let headers: [(HeaderName, HeaderValue); 2] = [
                (
                    names::MCP_SESSION_ID,
                    HeaderValue::from_str(session_id).ok()?,
                ),
                (
                    names::MCP_PROTOCOL_VERSION,
                    HeaderValue::from_str(version.as_str()).ok()?,
                ),
            ];
            transport
                .request(Method::GET, &headers, ACCEPT_SSE, Bytes::new())
                .ok()
        }
        Negotiated::Session {
            session_id: None, ..
        } => None,
        Negotiated::Stateless => {
            let mut params = Map::new();
            params.insert(
                "notifications".to_owned(),
                json!({"toolsListChanged": true}),
            );
            let (params, headers) = stamp(negotiated, SUBSCRIPTIONS_LISTEN, params);
            let message = Message::Request(Request {
                arguments: None,
                id: inner.next_request_id(),
                method: SUBSCRIPTIONS_LISTEN.to_owned(),
                params: Some(params),
            });
            transport
                .request(
                    Method::POST,
                    &headers,
                    ACCEPT_JSON_OR_SSE,
                    Bytes::from(message.to_vec()),
                )
                .ok()
        }
    }
}

async fn listen_once(weak: &WeakInner, negotiated: &Negotiated, opened_before: &mut bool) -> Ended {
    let (mut sender, request, url, request_timeout) = {
        let Some(inner) = weak.upgrade() else {
            return Ended::Finally;
        };
        if !inner.is_current(negotiated) {
            return Ended::Finally;
        }
        let Some(request) = stream_request(&inner, negotiated) else {
            return Ended::Finally;
        };
        let sender = match inner.transport.pool.stream_sender().await {
            Ok(sender) => sender,
            Err(error) => {
                tracing::debug!(%error, "cannot open the upstream notification stream");
                return Ended::Lost;
            }
        };
        (
            sender,
            request,
            inner.transport.endpoint.url.clone(),
            inner.transport.request_timeout,
        )
    };
    let response = match tokio::time::timeout(request_timeout, sender.send_request(request)).await {
        Ok(Ok(response)) => response,
        Ok(Err(error)) => {
            tracing::debug!(upstream = %url, %error, "upstream notification stream failed");
            return Ended::Lost;
        }
        Err(_) => return Ended::Lost,
    };
    let is_stream = response.status() == StatusCode::OK
        && media_type(response.headers().get(http::header::CONTENT_TYPE)) == "text/event-stream";
    if !is_stream {
        // 405 (no GET stream), 404 (the session is gone: the next request initializes again
        // and starts a new listener), or a JSON answer refusing subscriptions/listen.
        tracing::debug!(upstream = %url, status = %response.status(), "upstream offers no notification stream");
        return Ended::Finally;
    }
    if *opened_before {
        // Reopened after a loss: a list_changed may have been sent while it was down.
        let Some(inner) = weak.upgrade() else {
            return Ended::Finally;
        };
        inner.bump(1);
    }
    *opened_before = true;
    let mut body = response.into_body();
    let mut parser = SseParser::new(MAX_EVENT_BYTES);
    loop {
        let frame = match body.frame().await {
            None | Some(Err(_)) => return Ended::Lost,
            Some(Ok(frame)) => frame,
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        let Ok(messages) = parser.push_messages(&data) else {
            tracing::debug!(upstream = %url, "malformed upstream notification stream; reopening");
            return Ended::Lost;
        };
        let changes = messages
            .iter()
            .filter(|message| {
                message.method() == Some(mcp::methods::NOTIFICATIONS_TOOLS_LIST_CHANGED)
            })
            .count() as u64;
        // A response ends a subscriptions/listen stream (the server tore it down).
        let ended = messages
            .iter()
            .any(|message| matches!(message, Message::Response(_)));
        let Some(inner) = weak.upgrade() else {
            return Ended::Finally;
        };
        if !inner.is_current(negotiated) {
            return Ended::Finally;
        }
        if changes > 0 {
            inner.bump(changes);
        }
        if ended {
            return Ended::Lost;
        }
    }
}
