//! The HTTP side of the demo upstream: MCP Streamable HTTP on one path, both generations.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderMap, Method, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Frame, Incoming};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

use super::config::{DiscoverRefusal, ResponseMode};
use super::controls::{DemoControls, Fault, State};
use super::tools;

/// The 2026-07-28 method that opens a notification stream.
const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";
use toolgate_mcp::{
    self as mcp, ErrorObject, Generation, Message, ProtocolVersion, RawJson, Request, RequestId,
    Response, error_codes,
};

pub(super) type Body = BoxBody<Bytes, Infallible>;

/// Returned by the service to make hyper close the connection without an answer.
#[derive(Debug)]
pub(super) struct CloseConnection;

impl std::fmt::Display for CloseConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection closed on purpose (demo fault)")
    }
}

impl std::error::Error for CloseConnection {}

fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).boxed()
}

fn plain(status: StatusCode, text: &str) -> http::Response<Body> {
    let mut response = http::Response::new(full(text.to_owned()));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, http::HeaderValue::from_static("text/plain"));
    response
}

fn json_response(status: StatusCode, message: &Message) -> http::Response<Body> {
    let mut response = http::Response::new(full(message.to_vec()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

fn error_response(
    status: StatusCode,
    id: Option<RequestId>,
    code: i64,
    text: &str,
) -> http::Response<Body> {
    json_response(
        status,
        &Message::Response(Response::error(id, ErrorObject::new(code, text))),
    )
}

fn header_text<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

pub(super) async fn handle(
    state: Arc<State>,
    request: http::Request<Incoming>,
) -> Result<http::Response<Body>, CloseConnection> {
    if request.uri().path() != state.config.path {
        return Ok(plain(StatusCode::NOT_FOUND, "not found"));
    }
    match *request.method() {
        Method::POST => handle_post(state, request).await,
        Method::GET => Ok(handle_get(&state, request.headers())),
        Method::DELETE => Ok(handle_delete(&state, request.headers())),
        _ => Ok(plain(StatusCode::METHOD_NOT_ALLOWED, "method not allowed")),
    }
}

async fn handle_post(
    state: Arc<State>,
    request: http::Request<Incoming>,
) -> Result<http::Response<Body>, CloseConnection> {
    let (parts, body) = request.into_parts();
    let bytes = match Limited::new(body, state.config.max_request_bytes)
        .collect()
        .await
    {
        Ok(collected) => collected.to_bytes(),
        Err(_) => return Ok(plain(StatusCode::PAYLOAD_TOO_LARGE, "request too large")),
    };
    let message = match Message::from_slice(&bytes) {
        Ok(message) => message,
        Err(error) => {
            let response = error.to_response();
            return Ok(json_response(
                StatusCode::BAD_REQUEST,
                &Message::Response(response),
            ));
        }
    };
    state.count_request(message.method().unwrap_or("(response)"));
    let request = match message {
        Message::Request(request) => request,
        Message::Notification(_) | Message::Response(_) => {
            if let Some(session) = header_text(&parts.headers, mcp::headers::MCP_SESSION_ID) {
                if !state.has_session(session) {
                    return Ok(plain(StatusCode::NOT_FOUND, "session not found"));
                }
            }
            let mut response = http::Response::new(full(Bytes::new()));
            *response.status_mut() = StatusCode::ACCEPTED;
            return Ok(response);
        }
    };

    if let (Some(delay), mcp::methods::TOOLS_LIST) =
        (state.config.page_delay, request.method.as_str())
    {
        tokio::time::sleep(delay).await;
    }
    let fault = state.fault_for(&request.method);
    if let Some(Fault::Delay(delay)) = &fault {
        tokio::time::sleep(*delay).await;
    }
    if let Some(delay) = state.delay() {
        tokio::time::sleep(delay).await;
    }
    if let Some(Fault::SessionLost) = &fault {
        DemoControls {
            state: state.clone(),
        }
        .forget_sessions();
        return Ok(error_response(
            StatusCode::NOT_FOUND,
            Some(request.id),
            -32001,
            "Session not found",
        ));
    }
    if let Some(fault) = fault {
        if let Some(response) = faulty_answer(&fault, &request)? {
            return Ok(response);
        }
    }
    Ok(answer(&state, &parts.headers, request))
}

/// The misbehaving answer for `fault` (`None` for a delay, which answers normally).
fn faulty_answer(
    fault: &Fault,
    request: &Request,
) -> Result<Option<http::Response<Body>>, CloseConnection> {
    let json = |text: String| {
        let mut response = http::Response::new(full(text));
        response.headers_mut().insert(
            CONTENT_TYPE,
            http::HeaderValue::from_static("application/json"),
        );
        response
    };
    let id_value = request.id.to_value();
    let id = jcs_digest::order::Sorted(&id_value);
    Ok(Some(match fault {
        Fault::Reset => return Err(CloseConnection),
        Fault::Delay(_) | Fault::SessionLost => return Ok(None),
        Fault::NotJson => json("this is not JSON".to_owned()),
        Fault::DuplicateMember => json(format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[]}},"result":{{"content":[]}}}}"#
        )),
        Fault::WrongId => json(format!(
            r#"{{"jsonrpc":"2.0","id":"not-{}","result":{{}}}}"#,
            request.id
        )),
        Fault::WrongContentType => plain(StatusCode::OK, "plain text, not MCP"),
        Fault::HttpStatus(status) => plain(
            StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            "demo upstream fault",
        ),
        Fault::SseWithoutResponse => {
            let mut response = http::Response::new(full(": nothing follows\n\n"));
            response.headers_mut().insert(
                CONTENT_TYPE,
                http::HeaderValue::from_static("text/event-stream"),
            );
            response
        }
        Fault::JsonRpcError(code, message) => json_response(
            StatusCode::OK,
            &Message::Response(Response::error(
                Some(request.id.clone()),
                ErrorObject::new(*code, message.clone()),
            )),
        ),
    }))
}

/// The envelope version of a 2026-07-28 request, when it has one.
fn envelope_version(request: &Request) -> Option<&Value> {
    request
        .params
        .as_ref()
        .and_then(|params| params.get("_meta"))
        .and_then(Value::as_object)
        .and_then(|meta| meta.get(mcp::META_PROTOCOL_VERSION))
}

fn answer(state: &Arc<State>, headers: &HeaderMap, request: Request) -> http::Response<Body> {
    let is_discover = request.method == mcp::methods::SERVER_DISCOVER;
    let has_envelope = envelope_version(&request).is_some();
    if is_discover && !state.config.stateless {
        return match state.config.discover_refusal {
            DiscoverRefusal::MethodNotFound => error_response(
                StatusCode::OK,
                Some(request.id),
                error_codes::METHOD_NOT_FOUND,
                "Method not found: server/discover",
            ),
            DiscoverRefusal::BadRequest => error_response(
                StatusCode::BAD_REQUEST,
                None,
                -32000,
                "Bad Request: Server not initialized",
            ),
        };
    }
    let stateless = state.config.stateless && (is_discover || has_envelope);
    if stateless {
        if let Err(response) = check_stateless(headers, &request) {
            return *response;
        }
        if request.method == SUBSCRIPTIONS_LISTEN {
            let wants_tools = request
                .params
                .as_ref()
                .and_then(|params| params.get("notifications"))
                .and_then(|filter| filter.get("toolsListChanged"))
                .and_then(Value::as_bool)
                == Some(true);
            return event_stream(state, None, wants_tools.then_some(request.id));
        }
        let result = dispatch_raw(state, &request, Generation::Stateless);
        return respond(state, request.id, result, None);
    }

    if request.method == mcp::methods::INITIALIZE {
        if !state.config.sessions {
            return error_response(
                StatusCode::BAD_REQUEST,
                Some(request.id),
                error_codes::INVALID_REQUEST,
                "this server speaks only 2026-07-28; send server/discover",
            );
        }
        let requested = request
            .params
            .as_ref()
            .and_then(|params| params.get("protocolVersion"))
            .and_then(Value::as_str)
            .and_then(ProtocolVersion::from_wire)
            .filter(|version| version.generation() == Generation::Session)
            .unwrap_or(ProtocolVersion::LATEST_SESSION);
        let session = state.open_session();
        let result = Ok(RawJson::from(json!({
            "protocolVersion": requested.as_str(),
            "capabilities": {"tools": {"listChanged": true}},
            "serverInfo": {"name": "toolgate-demo-upstream", "version": env!("CARGO_PKG_VERSION")}
        })));
        return respond(state, request.id, result, Some(session));
    }
    if !state.config.sessions {
        return error_response(
            StatusCode::BAD_REQUEST,
            Some(request.id),
            error_codes::INVALID_PARAMS,
            "params._meta must carry io.modelcontextprotocol/protocolVersion and clientCapabilities",
        );
    }
    match header_text(headers, mcp::headers::MCP_SESSION_ID) {
        None => {
            return error_response(
                StatusCode::BAD_REQUEST,
                Some(request.id),
                -32000,
                "Bad Request: No valid session ID provided",
            );
        }
        Some(session) if !state.has_session(session) => {
            return error_response(
                StatusCode::NOT_FOUND,
                Some(request.id),
                -32001,
                "Session not found",
            );
        }
        Some(_) => {}
    }
    let result = dispatch_raw(state, &request, Generation::Session);
    respond(state, request.id, result, None)
}

/// The 2026-07-28 checks: the envelope is complete and the headers agree with the body.
fn check_stateless(
    headers: &HeaderMap,
    request: &Request,
) -> Result<(), Box<http::Response<Body>>> {
    let id = Some(request.id.clone());
    let meta = request
        .params
        .as_ref()
        .and_then(|params| params.get("_meta"))
        .and_then(Value::as_object);
    let Some(meta) = meta.filter(|meta| {
        meta.contains_key(mcp::META_PROTOCOL_VERSION)
            && meta.contains_key(mcp::META_CLIENT_CAPABILITIES)
    }) else {
        return Err(Box::new(error_response(
            StatusCode::BAD_REQUEST,
            id,
            error_codes::INVALID_PARAMS,
            "params._meta must carry io.modelcontextprotocol/protocolVersion and clientCapabilities",
        )));
    };
    let version = meta.get(mcp::META_PROTOCOL_VERSION).and_then(Value::as_str);
    let mismatch = |what: &str| {
        Box::new(error_response(
            StatusCode::BAD_REQUEST,
            id.clone(),
            error_codes::HEADER_MISMATCH,
            &format!("{what} header does not match the request body"),
        ))
    };
    if header_text(headers, mcp::headers::MCP_PROTOCOL_VERSION) != version || version.is_none() {
        return Err(mismatch(mcp::headers::MCP_PROTOCOL_VERSION));
    }
    if header_text(headers, mcp::headers::MCP_METHOD) != Some(request.method.as_str()) {
        return Err(mismatch(mcp::headers::MCP_METHOD));
    }
    if let Some(member) = mcp::name_bearing_param(&request.method) {
        let body_value = request
            .params
            .as_ref()
            .and_then(|params| params.get(member));
        let header_value = headers
            .get(mcp::headers::MCP_NAME)
            .and_then(|value| mcp::decode_header_value(value.as_bytes()));
        if let Some(body_value) = body_value {
            if body_value.as_str() != header_value.as_deref() {
                return Err(mismatch(mcp::headers::MCP_NAME));
            }
        }
    }
    if version != Some(ProtocolVersion::V2026_07_28.as_str()) {
        return Err(Box::new(json_response(
            StatusCode::BAD_REQUEST,
            &Message::Response(Response::error(
                id,
                ErrorObject::new(
                    error_codes::UNSUPPORTED_PROTOCOL_VERSION,
                    "Unsupported protocol version",
                )
                .with_data(json!({"supported": ["2026-07-28"], "requested": version})),
            )),
        )));
    }
    Ok(())
}

/// The answer to one request: a result set by [`super::DemoControls::set_call_result`] for
/// `tools/call`, written as it is, or [`dispatch`]'s.
fn dispatch_raw(
    state: &State,
    request: &Request,
    generation: Generation,
) -> Result<RawJson, ErrorObject> {
    if request.method == mcp::methods::TOOLS_CALL {
        if let Some(raw) = &request.arguments {
            state.record_arguments(raw.as_str());
        }
        if let Some(result) = state.call_result() {
            return Ok(result);
        }
    }
    dispatch(state, request, generation).map(RawJson::from)
}

fn dispatch(
    state: &State,
    request: &Request,
    generation: Generation,
) -> Result<Value, ErrorObject> {
    let empty = Map::new();
    let params = request.params.as_ref().unwrap_or(&empty);
    let mut result = match request.method.as_str() {
        mcp::methods::SERVER_DISCOVER => {
            let mut versions = vec![ProtocolVersion::V2026_07_28.as_str()];
            if state.config.sessions {
                versions.extend(
                    ProtocolVersion::of_generation(Generation::Session)
                        .map(ProtocolVersion::as_str),
                );
            }
            json!({
                "supportedVersions": versions,
                "capabilities": {"tools": {"listChanged": true}},
                "_meta": {mcp::META_SERVER_INFO: {"name": "toolgate-demo-upstream", "version": env!("CARGO_PKG_VERSION")}}
            })
        }
        mcp::methods::PING => json!({}),
        mcp::methods::TOOLS_LIST => list_page(state, params.get("cursor"))?,
        mcp::methods::TOOLS_CALL => {
            let name = params.get("name").and_then(Value::as_str).ok_or_else(|| {
                ErrorObject::new(
                    error_codes::INVALID_PARAMS,
                    "tools/call needs a string `name`",
                )
            })?;
            let arguments = match request.arguments.as_ref().map(RawJson::to_value) {
                None | Some(Ok(Value::Null)) => Map::new(),
                Some(Ok(Value::Object(arguments))) => arguments,
                Some(_) => {
                    return Err(ErrorObject::new(
                        error_codes::INVALID_PARAMS,
                        "`arguments` must be an object (read strictly)",
                    ));
                }
            };
            let known = state
                .tools()
                .iter()
                .any(|tool| tool.get("name").and_then(Value::as_str) == Some(name));
            tools::call(known, name, &arguments)
                .map_err(|(code, message)| ErrorObject::new(code, message))?
        }
        other => {
            return Err(ErrorObject::new(
                error_codes::METHOD_NOT_FOUND,
                format!("Method not found: {other}"),
            ));
        }
    };
    if generation == Generation::Stateless {
        if let Some(object) = result.as_object_mut() {
            // 2026-07-28 requires `resultType` on every result, and the caching directives on
            // cacheable ones (the Python client refuses a listing without them).
            object.insert("resultType".to_owned(), Value::from("complete"));
            if matches!(
                request.method.as_str(),
                mcp::methods::SERVER_DISCOVER | mcp::methods::TOOLS_LIST
            ) {
                object.insert("ttlMs".to_owned(), Value::from(0));
                object.insert("cacheScope".to_owned(), Value::from("private"));
            }
        }
    }
    Ok(result)
}

/// One `tools/list` page. Cursors are `page-N`.
fn list_page(state: &State, cursor: Option<&Value>) -> Result<Value, ErrorObject> {
    let tools = state.tools();
    let page_size = if state.config.page_size == 0 {
        tools.len().max(1)
    } else {
        state.config.page_size
    };
    let page = match cursor {
        None | Some(Value::Null) => 0,
        // A cursor loop: every page is the first one again.
        Some(_) if state.repeat_cursor() => 0,
        Some(Value::String(cursor)) => cursor
            .strip_prefix("page-")
            .and_then(|number| number.parse::<usize>().ok())
            .filter(|&page| {
                page > 0
                    && page
                        .checked_mul(page_size)
                        .is_some_and(|start| start < tools.len())
            })
            .ok_or_else(|| {
                ErrorObject::new(
                    error_codes::INVALID_PARAMS,
                    format!("Invalid cursor: {cursor}"),
                )
            })?,
        Some(_) => {
            return Err(ErrorObject::new(
                error_codes::INVALID_PARAMS,
                "the cursor must be a string",
            ));
        }
    };
    let start = page * page_size;
    let end = (start + page_size).min(tools.len());
    let mut result = json!({"tools": tools.get(start..end).unwrap_or_default()});
    let padding = state.page_padding();
    if padding > 0 {
        if let Some(object) = result.as_object_mut() {
            let padding = "x".repeat(padding);
            object.insert("_meta".to_owned(), json!({ "padding": padding }));
        }
    }
    if state.repeat_cursor() {
        if let Some(object) = result.as_object_mut() {
            object.insert("nextCursor".to_owned(), Value::from("page-1"));
        }
    } else if end < tools.len() {
        if let Some(object) = result.as_object_mut() {
            object.insert(
                "nextCursor".to_owned(),
                Value::from(format!("page-{}", page + 1)),
            );
        }
    }
    Ok(result)
}

/// The HTTP answer for a result, as JSON or SSE.
fn respond(
    state: &State,
    id: RequestId,
    result: Result<RawJson, ErrorObject>,
    session: Option<String>,
) -> http::Response<Body> {
    let message = Message::Response(match result {
        Ok(result) => Response::result(id, result),
        Err(error) => Response::error(Some(id), error),
    });
    let mut response = match state.response_mode() {
        ResponseMode::Json => json_response(StatusCode::OK, &message),
        ResponseMode::Sse => {
            let mut stream = String::from("id: 0\ndata:\n\n");
            for _ in 0..state.take_pending_list_changed() {
                stream.push_str(
                    "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n",
                );
            }
            stream.push_str(&String::from_utf8_lossy(&mcp::encode_sse_event(&message)));
            let mut response = http::Response::new(full(stream));
            response.headers_mut().insert(
                CONTENT_TYPE,
                http::HeaderValue::from_static("text/event-stream"),
            );
            response
        }
    };
    if let Some(session) = session {
        if let Ok(value) = http::HeaderValue::from_str(&session) {
            response
                .headers_mut()
                .insert(mcp::headers::MCP_SESSION_ID, value);
        }
    }
    response
}

fn session_check(state: &State, headers: &HeaderMap) -> Result<String, Box<http::Response<Body>>> {
    match header_text(headers, mcp::headers::MCP_SESSION_ID) {
        None => Err(Box::new(plain(
            StatusCode::BAD_REQUEST,
            "Mcp-Session-Id required",
        ))),
        Some(session) if !state.has_session(session) => {
            Err(Box::new(plain(StatusCode::NOT_FOUND, "session not found")))
        }
        Some(session) => Ok(session.to_owned()),
    }
}

/// `GET`: the session's event stream, on which `notify_tools_changed` is delivered.
fn handle_get(state: &Arc<State>, headers: &HeaderMap) -> http::Response<Body> {
    if !state.config.sessions {
        return plain(StatusCode::METHOD_NOT_ALLOWED, "no event stream");
    }
    let accepts_sse = header_text(headers, ACCEPT.as_str())
        .is_some_and(|accept| accept.contains("text/event-stream"));
    if !accepts_sse {
        return plain(
            StatusCode::NOT_ACCEPTABLE,
            "Accept must include text/event-stream",
        );
    }
    match session_check(state, headers) {
        Ok(session) => event_stream(state, Some(session), None),
        Err(response) => *response,
    }
}

/// An open-ended SSE stream of `notifications/tools/list_changed`: a session's `GET` stream
/// (`session`), or a 2026-07-28 `subscriptions/listen` stream (`subscription`: the request id,
/// echoed in each notification's `_meta`; `None` when the filter did not ask for tool changes,
/// so nothing is sent).
fn event_stream(
    state: &Arc<State>,
    session: Option<String>,
    subscription: Option<RequestId>,
) -> http::Response<Body> {
    let notification = match &subscription {
        Some(id) => Message::Notification(mcp::Notification {
            method: mcp::methods::NOTIFICATIONS_TOOLS_LIST_CHANGED.to_owned(),
            params: json!({"_meta": {"io.modelcontextprotocol/subscriptionId": id.to_value()}})
                .as_object()
                .cloned(),
        }),
        None => Message::Notification(mcp::Notification {
            method: mcp::methods::NOTIFICATIONS_TOOLS_LIST_CHANGED.to_owned(),
            params: None,
        }),
    };
    let notification = Bytes::from(mcp::encode_sse_event(&notification));
    let silent = session.is_none() && subscription.is_none();
    let (sender, receiver) = mpsc::channel::<Bytes>(16);
    let mut notifications = state.list_changed.subscribe();
    let mut closed = state.close_streams.subscribe();
    let task_state = state.clone();
    state.stream_opened();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                received = notifications.recv() => match received {
                    Ok(()) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        let session_gone = session.as_deref().is_some_and(|id| !task_state.has_session(id));
                        if session_gone {
                            break;
                        }
                        if !silent && sender.send(notification.clone()).await.is_err() {
                            break;
                        }
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                },
                _ = closed.changed() => break,
                () = sender.closed() => break,
            }
        }
        task_state.stream_closed();
    });
    let mut response = http::Response::new(ChannelBody { receiver }.boxed());
    response.headers_mut().insert(
        CONTENT_TYPE,
        http::HeaderValue::from_static("text/event-stream"),
    );
    response
}

/// `DELETE`: ends the session.
fn handle_delete(state: &State, headers: &HeaderMap) -> http::Response<Body> {
    match session_check(state, headers) {
        Ok(session) => {
            state.close_session(&session);
            plain(StatusCode::OK, "session ended")
        }
        Err(response) => *response,
    }
}

/// A body fed by a channel: the open-ended event stream.
struct ChannelBody {
    receiver: mpsc::Receiver<Bytes>,
}

impl hyper::body::Body for ChannelBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.receiver
            .poll_recv(context)
            .map(|chunk| chunk.map(|bytes| Ok(Frame::data(bytes))))
    }
}
