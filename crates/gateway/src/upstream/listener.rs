//! The session generation's `GET` event stream: the channel on which a server sends
//! `notifications/tools/list_changed` between requests. Each such notification, and each
//! reopening of a lost stream (notifications may have been missed), bumps the client's
//! invalidation counter, which the definition-check cache follows (DESIGN.md §5 "Definition
//! check freshness").
//!
//! The task holds only a weak reference to the client, so dropping the last clone of the client
//! ends it; it also ends when the session is replaced, or when the server has no such stream
//! (HTTP 405) or no longer knows the session (HTTP 404).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Method, StatusCode};
use http_body_util::BodyExt;

use super::client::WeakInner;
use super::names;
use super::transport::media_type;
use crate::mcp::{self, ProtocolVersion, SseParser};

/// The first pause before reopening a lost stream; it doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(250);
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// The largest single event accepted on the stream.
const MAX_EVENT_BYTES: usize = 1024 * 1024;

/// Why a stream stopped.
enum Ended {
    /// Stop for good: the client is gone, the session changed, or the server refuses streams.
    Finally,
    /// The stream was lost; reopen it.
    Lost,
}

pub(super) async fn listen(inner: WeakInner, version: ProtocolVersion, session_id: Arc<str>) {
    let mut backoff = FIRST_BACKOFF;
    let mut opened_before = false;
    loop {
        match listen_once(&inner, version, &session_id, &mut opened_before).await {
            Ended::Finally => return,
            Ended::Lost => {}
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

async fn listen_once(
    weak: &WeakInner,
    version: ProtocolVersion,
    session_id: &str,
    opened_before: &mut bool,
) -> Ended {
    let (mut sender, request, url, request_timeout) = {
        let Some(inner) = weak.upgrade() else {
            return Ended::Finally;
        };
        if !inner.is_current_session(session_id) {
            return Ended::Finally;
        }
        let (Ok(session), Ok(version)) = (
            HeaderValue::from_str(session_id),
            HeaderValue::from_str(version.as_str()),
        ) else {
            return Ended::Finally;
        };
        let headers = [
            (names::MCP_SESSION_ID, session),
            (names::MCP_PROTOCOL_VERSION, version),
        ];
        let Ok(request) =
            inner
                .transport
                .request(Method::GET, &headers, "text/event-stream", Bytes::new())
        else {
            return Ended::Finally;
        };
        let sender = match inner.transport.pool.connect().await {
            Ok(sender) => sender,
            Err(error) => {
                tracing::debug!(%error, "cannot open the upstream event stream");
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
            tracing::debug!(upstream = %url, %error, "upstream event stream failed");
            return Ended::Lost;
        }
        Err(_) => return Ended::Lost,
    };
    match response.status() {
        StatusCode::OK => {}
        // 405: the server offers no GET stream; 404: the session is gone (the next request
        // initializes again and starts a new listener).
        status => {
            tracing::debug!(upstream = %url, %status, "upstream offers no event stream");
            return Ended::Finally;
        }
    }
    if media_type(response.headers().get(http::header::CONTENT_TYPE)) != "text/event-stream" {
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
            None => return Ended::Lost,
            Some(Err(_)) => return Ended::Lost,
            Some(Ok(frame)) => frame,
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        let Ok(messages) = parser.push_messages(&data) else {
            tracing::debug!(upstream = %url, "malformed upstream event stream; reopening");
            return Ended::Lost;
        };
        let changes = messages
            .iter()
            .filter(|message| {
                message.method() == Some(mcp::methods::NOTIFICATIONS_TOOLS_LIST_CHANGED)
            })
            .count() as u64;
        let Some(inner) = weak.upgrade() else {
            return Ended::Finally;
        };
        if !inner.is_current_session(session_id) {
            return Ended::Finally;
        }
        if changes > 0 {
            inner.bump(changes);
        }
    }
}
