//! One HTTP exchange of MCP Streamable HTTP: POST a JSON-RPC message, read the answer as JSON or
//! as an SSE stream (bounded), and note the notifications that came with it.

use std::borrow::Cow;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::header::{ACCEPT, CONTENT_TYPE, HOST};
use http::{HeaderName, HeaderValue, Method, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use hyper::body::{Body as _, Incoming};

use super::answer_memo::AnswerMemo;
use super::connection::{Lease, Pool};
use super::endpoint::Endpoint;
use super::error::{TimeoutPhase, UpstreamError};
use crate::mcp::{self, Message, RequestId, Response, SseError, SseParser};

/// The `Accept` of a POST: a JSON answer or an SSE stream.
pub(super) const ACCEPT_JSON_OR_SSE: HeaderValue =
    HeaderValue::from_static("application/json, text/event-stream");
/// The `Accept` of the GET that opens a session's event stream.
pub(super) const ACCEPT_SSE: HeaderValue = HeaderValue::from_static("text/event-stream");
const APPLICATION_JSON: HeaderValue = HeaderValue::from_static("application/json");

/// How much of an error body is read (and how much of it is shown).
const ERROR_BODY_LIMIT: usize = 64 * 1024;
const ERROR_EXCERPT_CHARS: usize = 200;
/// How long the rest of an SSE stream is awaited after its response arrived, so that the
/// connection can be reused when the server closes the stream promptly (as servers do).
const SSE_TAIL_GRACE: Duration = Duration::from_millis(50);

/// One message to send.
pub(super) struct Outgoing<'a> {
    /// The JSON-RPC method (for messages and the `Mcp-Method` header).
    pub(super) method: &'a str,
    /// The request id; `None` for a notification.
    pub(super) id: Option<&'a RequestId>,
    /// The serialized message.
    pub(super) body: Bytes,
    /// Headers beyond `Host`, `Content-Type` and `Accept`.
    pub(super) headers: Vec<(HeaderName, HeaderValue)>,
    /// Whether sending it twice is harmless (everything but `tools/call`): such a request that
    /// fails on a reused connection is sent once more on a new one. Any other request is sent
    /// on its connection only (docs/design.md §5, "A check is never outrun").
    pub(super) idempotent: bool,
    /// The largest answer body read; `None`: [`Transport::max_response_bytes`].
    pub(super) max_bytes: Option<usize>,
}

/// What came back.
#[derive(Debug)]
pub(super) struct Answer {
    pub(super) status: StatusCode,
    /// The `Mcp-Session-Id` response header.
    pub(super) session_id: Option<String>,
    /// The JSON-RPC response: the one with the request's id on success; on an HTTP error, a
    /// JSON-RPC error the body carried, if any.
    pub(super) response: Option<Response>,
    /// The start of a non-success body, for messages.
    pub(super) body_excerpt: String,
    /// How many `notifications/tools/list_changed` came with the answer.
    pub(super) list_changed: u64,
    /// Whether the exchange had to reconnect: a new connection while no other was live, after
    /// an earlier one existed (notifications may have been missed in between).
    pub(super) reconnected: bool,
    /// The bytes of the answer body read.
    pub(super) body_bytes: usize,
}

/// The shared parameters of every exchange with one upstream.
pub(super) struct Transport {
    pub(super) endpoint: std::sync::Arc<Endpoint>,
    pub(super) pool: Pool,
    pub(super) request_timeout: Duration,
    pub(super) max_response_bytes: usize,
    /// Recent `tools/list` answers, so that one served again under a new id is not checked
    /// again ([`AnswerMemo`]).
    pub(super) listing_answers: AnswerMemo,
}

impl Transport {
    /// Sends `outgoing` and reads the whole answer within the request timeout, on `lease` when
    /// one is given (the connection a `tools/call` was checked on), else on a pooled one.
    pub(super) async fn post(
        &self,
        outgoing: Outgoing<'_>,
        lease: Option<Lease>,
    ) -> Result<Answer, UpstreamError> {
        let timeout = self.request_timeout;
        tokio::time::timeout(timeout, self.post_unbounded(&outgoing, lease))
            .await
            .map_err(|_| UpstreamError::Timeout {
                url: self.endpoint.url.clone(),
                phase: TimeoutPhase::Response,
                timeout,
            })?
    }

    /// A request to the endpoint with the common headers (the request target and `Host` made
    /// once, [`Endpoint::target`] and [`Endpoint::host_header`]; the header map sized for them
    /// all, and for the `Content-Length` hyper adds, at once).
    pub(super) fn request(
        &self,
        method: Method,
        headers: &[(HeaderName, HeaderValue)],
        accept: HeaderValue,
        body: Bytes,
    ) -> Result<http::Request<Full<Bytes>>, UpstreamError> {
        let endpoint = &self.endpoint;
        let invalid = |detail: String| UpstreamError::InvalidUrl {
            url: endpoint.url.clone(),
            detail: format!("no HTTP request can be made for it: {detail}"),
        };
        let target = match &endpoint.target {
            Some(target) => target.clone(),
            None => Uri::try_from(endpoint.path_and_query.as_str())
                .map_err(|error| invalid(error.to_string()))?,
        };
        let host = match &endpoint.host_header {
            Some(host) => host.clone(),
            None => HeaderValue::from_str(&endpoint.authority)
                .map_err(|error| invalid(error.to_string()))?,
        };
        let has_body = !body.is_empty();
        let mut request = http::Request::new(Full::new(body));
        *request.method_mut() = method;
        *request.uri_mut() = target;
        let map = request.headers_mut();
        map.reserve(headers.len() + 4);
        map.append(HOST, host);
        map.append(ACCEPT, accept);
        if has_body {
            map.append(CONTENT_TYPE, APPLICATION_JSON);
        }
        for (name, value) in headers {
            map.append(name.clone(), value.clone());
        }
        Ok(request)
    }

    async fn post_unbounded(
        &self,
        outgoing: &Outgoing<'_>,
        lease: Option<Lease>,
    ) -> Result<Answer, UpstreamError> {
        let method = outgoing.method;
        let limit = outgoing
            .max_bytes
            .unwrap_or(self.max_response_bytes)
            .min(self.max_response_bytes);
        let request = self.request(
            Method::POST,
            &outgoing.headers,
            ACCEPT_JSON_OR_SSE,
            outgoing.body.clone(),
        )?;
        let mut lease = match lease {
            Some(lease) => lease,
            None => self.pool.checkout().await?,
        };
        let mut reconnected = lease.sender.reconnected;
        let response = match lease.sender.try_send_request(request).await {
            Ok(response) => response,
            Err(mut failed) => {
                // A reused connection the peer closed while it was idle. When the request was
                // never written, or sending it twice is harmless, it goes once more on a new
                // connection (which is verified in its own handshake).
                let unsent = failed.take_message();
                // An HTTP/2 connection an exchange failed on is not shared any further, even
                // before this side has seen it close: the next exchange makes a new one.
                self.pool.retire(&lease.sender);
                if !outgoing.idempotent {
                    // Not on another connection: the check was made for this one.
                    return Err(match unsent {
                        Some(_) => UpstreamError::CallNotSent {
                            url: self.endpoint.url.clone(),
                            detail: failed.error().to_string(),
                        },
                        None => self.hyper_error(method, failed.error()),
                    });
                }
                let retry = match unsent {
                    Some(request) => Some(request),
                    None => Some(self.request(
                        Method::POST,
                        &outgoing.headers,
                        ACCEPT_JSON_OR_SSE,
                        outgoing.body.clone(),
                    )?),
                };
                match retry {
                    Some(request) if lease.reused => {
                        // The dead connection goes first, so that the new one counts as a
                        // reconnect when it was the last one.
                        lease = Lease {
                            sender: self.pool.replace(lease.sender).await?,
                            reused: false,
                        };
                        reconnected |= lease.sender.reconnected;
                        lease
                            .sender
                            .send_request(request)
                            .await
                            .map_err(|error| self.hyper_error(method, &error))?
                    }
                    _ => return Err(self.hyper_error(method, failed.error())),
                }
            }
        };
        let (parts, mut body) = response.into_parts();
        let status = parts.status;
        let session_id = parts
            .headers
            .get(mcp::headers::MCP_SESSION_ID)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let media_type = media_type(parts.headers.get(CONTENT_TYPE));
        let mut answer = Answer {
            status,
            session_id,
            response: None,
            body_excerpt: String::new(),
            list_changed: 0,
            reconnected,
            body_bytes: 0,
        };

        if !status.is_success() {
            let (bytes, complete) = self.read_some(&mut body, ERROR_BODY_LIMIT, method).await?;
            if media_type == "application/json" {
                if let Ok(Message::Response(response)) = Message::from_slice(&bytes) {
                    answer.response = Some(response);
                }
            }
            answer.body_excerpt = String::from_utf8_lossy(&bytes)
                .chars()
                .take(ERROR_EXCERPT_CHARS)
                .collect();
            if complete {
                self.pool.checkin(lease.sender);
            }
            return Ok(answer);
        }
        if status == StatusCode::ACCEPTED || outgoing.id.is_none() {
            let (_, complete) = self.read_some(&mut body, ERROR_BODY_LIMIT, method).await?;
            if complete {
                self.pool.checkin(lease.sender);
            }
            return Ok(answer);
        }

        let Some(expected_id) = outgoing.id else {
            return Ok(answer);
        };
        match media_type.as_ref() {
            "application/json" => {
                let bytes = self.read_all(&mut body, method, limit).await?;
                answer.body_bytes = bytes.len();
                let listing = method == mcp::methods::TOOLS_LIST;
                let recognized = listing
                    .then(|| self.listing_answers.recognize(&bytes, expected_id))
                    .flatten();
                let response = match recognized {
                    Some(response) => response,
                    None => {
                        let response = self.response_from(method, &bytes)?;
                        let response = self.check_id(method, expected_id, response)?;
                        if listing {
                            self.listing_answers.keep(bytes, expected_id, &response);
                        }
                        response
                    }
                };
                answer.response = Some(response);
                self.pool.checkin(lease.sender);
            }
            "text/event-stream" => {
                let (response, complete) = self
                    .read_event_stream(&mut body, method, expected_id, &mut answer, limit)
                    .await?;
                answer.response = Some(response);
                if complete {
                    self.pool.checkin(lease.sender);
                }
            }
            other => {
                return Err(self.malformed(
                    method,
                    format!(
                        "content type `{other}`; expected application/json or text/event-stream"
                    ),
                ));
            }
        }
        Ok(answer)
    }

    /// Reads an SSE answer until the response with `expected_id`; counts `list_changed`.
    /// Returns the response and whether the stream was read to its end.
    async fn read_event_stream(
        &self,
        body: &mut Incoming,
        method: &str,
        expected_id: &RequestId,
        answer: &mut Answer,
        limit: usize,
    ) -> Result<(Response, bool), UpstreamError> {
        let mut parser = SseParser::new(limit);
        let mut total = 0usize;
        let mut found = None;
        // A listing's response event served again is recognized as in a JSON answer; every
        // other event (notifications above all) is read each time.
        let listing = method == mcp::methods::TOOLS_LIST;
        while found.is_none() {
            let Some(chunk) = self.next_data(body, method).await? else {
                return Err(self.malformed(
                    method,
                    "the event stream ended without a response".to_owned(),
                ));
            };
            total += chunk.len();
            answer.body_bytes = total;
            if total > limit {
                return Err(self.too_large(method, limit));
            }
            let events = parser
                .push(&chunk)
                .map_err(|error| self.malformed(method, error.to_string()))?;
            for event in events {
                let is_message = event.event.as_deref().is_none_or(|kind| kind == "message");
                if listing && is_message && found.is_none() {
                    if let Some(response) = self
                        .listing_answers
                        .recognize(event.data.as_bytes(), expected_id)
                    {
                        found = Some(response);
                        continue;
                    }
                }
                let message = event
                    .message()
                    .map_err(|error| self.malformed(method, SseError::from(error).to_string()))?;
                let Some(message) = message else {
                    continue;
                };
                match message {
                    Message::Response(response) if found.is_none() => {
                        let response = self.check_id(method, expected_id, response)?;
                        if listing {
                            self.listing_answers.keep(
                                Bytes::from(event.data.into_bytes()),
                                expected_id,
                                &response,
                            );
                        }
                        found = Some(response);
                    }
                    Message::Notification(notification)
                        if notification.method
                            == mcp::methods::NOTIFICATIONS_TOOLS_LIST_CHANGED =>
                    {
                        answer.list_changed += 1;
                    }
                    // Progress and log notifications, and server-to-client requests, which a
                    // tools-only gateway does not answer.
                    _ => {}
                }
            }
        }
        let Some(response) = found else {
            return Err(self.malformed(method, "no response".to_owned()));
        };
        // Servers close the stream after the response; wait briefly for that so the connection
        // can be reused. Anything still arriving is read, bounded, and list_changed counted.
        if body.is_end_stream() {
            return Ok((response, true));
        }
        let tail = async {
            loop {
                match body.frame().await {
                    None => return true,
                    Some(Err(_)) => return false,
                    Some(Ok(frame)) => {
                        if let Ok(data) = frame.into_data() {
                            total += data.len();
                            if total > limit {
                                return false;
                            }
                            match parser.push_messages(&data) {
                                Ok(messages) => {
                                    answer.list_changed += messages
                                        .iter()
                                        .filter(|message| {
                                            message.method()
                                                == Some(
                                                    mcp::methods::NOTIFICATIONS_TOOLS_LIST_CHANGED,
                                                )
                                        })
                                        .count()
                                        as u64;
                                }
                                Err(_) => return false,
                            }
                        }
                    }
                }
            }
        };
        let complete = tokio::time::timeout(SSE_TAIL_GRACE, tail)
            .await
            .unwrap_or(false);
        Ok((response, complete))
    }

    async fn next_data(
        &self,
        body: &mut Incoming,
        method: &str,
    ) -> Result<Option<Bytes>, UpstreamError> {
        loop {
            match body.frame().await {
                None => return Ok(None),
                Some(Err(error)) => return Err(self.hyper_error(method, &error)),
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        return Ok(Some(data));
                    }
                }
            }
        }
    }

    /// The whole body, refused beyond `limit` (read no further than that).
    async fn read_all(
        &self,
        body: &mut Incoming,
        method: &str,
        limit: usize,
    ) -> Result<Bytes, UpstreamError> {
        let mut collected = BytesMut::new();
        while let Some(data) = self.next_data(body, method).await? {
            if collected.len() + data.len() > limit {
                return Err(self.too_large(method, limit));
            }
            collected.extend_from_slice(&data);
        }
        Ok(collected.freeze())
    }

    /// At most `limit` bytes of the body, and whether the body ended within them.
    async fn read_some(
        &self,
        body: &mut Incoming,
        limit: usize,
        method: &str,
    ) -> Result<(Bytes, bool), UpstreamError> {
        let mut collected = BytesMut::new();
        while let Some(data) = self.next_data(body, method).await? {
            let room = limit.saturating_sub(collected.len());
            if data.len() > room {
                collected.extend_from_slice(&data[..room]);
                return Ok((collected.freeze(), false));
            }
            collected.extend_from_slice(&data);
        }
        Ok((collected.freeze(), true))
    }

    fn response_from(&self, method: &str, bytes: &[u8]) -> Result<Response, UpstreamError> {
        match Message::from_slice(bytes) {
            Ok(Message::Response(response)) => Ok(response),
            Ok(other) => Err(self.malformed(
                method,
                format!(
                    "expected a JSON-RPC response, got a {}",
                    if matches!(other, Message::Request(_)) {
                        "request"
                    } else {
                        "notification"
                    }
                ),
            )),
            Err(error) => Err(self.malformed(method, error.to_string())),
        }
    }

    fn check_id(
        &self,
        method: &str,
        expected: &RequestId,
        response: Response,
    ) -> Result<Response, UpstreamError> {
        if response.id.as_ref() == Some(expected) {
            return Ok(response);
        }
        // An error answering an unreadable request carries `"id": null`: keep its code.
        if response.id.is_none() && matches!(response.payload, mcp::ResponsePayload::Error(_)) {
            return Ok(response);
        }
        let presented = response
            .id
            .as_ref()
            .map_or_else(|| "null".to_owned(), ToString::to_string);
        Err(self.malformed(
            method,
            format!("the response carries id {presented}, but the request had id {expected}"),
        ))
    }

    fn hyper_error(&self, method: &str, error: &hyper::Error) -> UpstreamError {
        if error.is_parse() || error.is_parse_status() || error.is_parse_too_large() {
            self.malformed(method, format!("invalid HTTP response: {error}"))
        } else {
            UpstreamError::ConnectionClosed {
                url: self.endpoint.url.clone(),
                method: method.to_owned(),
                detail: error.to_string(),
            }
        }
    }

    pub(super) fn malformed(&self, method: &str, detail: String) -> UpstreamError {
        UpstreamError::Malformed {
            url: self.endpoint.url.clone(),
            method: method.to_owned(),
            detail,
        }
    }

    fn too_large(&self, method: &str, limit: usize) -> UpstreamError {
        UpstreamError::ResponseTooLarge {
            url: self.endpoint.url.clone(),
            method: method.to_owned(),
            limit,
        }
    }
}

/// The media type of a `Content-Type` value, lowercase, without parameters.
pub(super) fn media_type(value: Option<&HeaderValue>) -> Cow<'_, str> {
    let media = value
        .and_then(|value| value.to_str().ok())
        .and_then(|text| text.split(';').next())
        .map(str::trim)
        .unwrap_or_default();
    // Lowercased only when it is not already (as servers write it).
    if media.bytes().any(|byte| byte.is_ascii_uppercase()) {
        Cow::Owned(media.to_ascii_lowercase())
    } else {
        Cow::Borrowed(media)
    }
}
