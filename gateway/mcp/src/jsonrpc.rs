//! JSON-RPC 2.0 messages as MCP uses them: requests, notifications and responses, read strictly
//! and written back exactly.
//!
//! Unknown top-level members are ignored (JSON-RPC leaves them open); everything that decides
//! what a message means (`jsonrpc`, `id`, `method`, `params`, `result`, `error`) is checked.
//!
//! Two parts are pass-through data (docs/design.md §5, "Pass-through data is not rewritten"): a
//! response's `result` and a `tools/call` request's `params.arguments`. They are checked for
//! well-formedness only ([`crate::check_well_formed`]) and kept as the bytes received
//! ([`RawJson`]), so an integer beyond 2^53 or a `1E+2` travels as written; the rest of a message
//! is read strictly. A reader that interprets a result (a `tools/list` page) reads it strictly
//! with [`RawJson::to_value`].
//! Batches (JSON arrays) are refused: MCP removed them in 2025-06-18, and one request per POST
//! keeps the gateway's one-decision-per-call audit trail exact.

use std::fmt;
use std::io::Write as _;

use jcs_digest::order::{self, Sorted};
use serde_json::{Map, Value};

use super::error_codes;
use crate::raw::RawJson;
use crate::well_formed::{
    DEFAULT_MAX_DEPTH, ObjectMembers, WellFormedError, object_members_and_nested,
};

/// A request id: MCP allows a string or an integer (never `null` in a request).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RequestId {
    /// An integer id. The strict reader keeps integers within ±(2^53−1).
    Number(i64),
    /// A string id.
    String(String),
}

impl RequestId {
    fn from_value(value: &Value) -> Option<RequestId> {
        match value {
            Value::String(text) => Some(RequestId::String(text.clone())),
            Value::Number(number) => number.as_i64().map(RequestId::Number),
            _ => None,
        }
    }

    /// The id as a JSON value.
    pub fn to_value(&self) -> Value {
        match self {
            RequestId::Number(number) => Value::from(*number),
            RequestId::String(text) => Value::String(text.clone()),
        }
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(number) => write!(f, "{number}"),
            RequestId::String(text) => write!(f, "{}", Sorted(&Value::String(text.clone()))),
        }
    }
}

impl From<i64> for RequestId {
    fn from(number: i64) -> Self {
        RequestId::Number(number)
    }
}

impl From<&str> for RequestId {
    fn from(text: &str) -> Self {
        RequestId::String(text.to_owned())
    }
}

/// A request: it has an `id` and expects a response.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The id the response must carry.
    pub id: RequestId,
    /// The method name.
    pub method: String,
    /// The parameters; MCP parameters are always an object. For `tools/call`, every member
    /// but `arguments`, which is in [`Request::arguments`].
    pub params: Option<Map<String, Value>>,
    /// `tools/call` only: `params.arguments` as received (well-formed, not rewritten). Written
    /// into `params` when the request is serialized.
    pub arguments: Option<RawJson>,
}

impl Request {
    /// A request without pass-through arguments.
    pub fn new(
        id: RequestId,
        method: impl Into<String>,
        params: Option<Map<String, Value>>,
    ) -> Request {
        Request {
            id,
            method: method.into(),
            params,
            arguments: None,
        }
    }
}

/// A notification: no `id`, no response.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// The method name.
    pub method: String,
    /// The parameters; MCP parameters are always an object.
    pub params: Option<Map<String, Value>>,
}

/// The `error` member of an error response.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorObject {
    /// The error code ([`super::error_codes`]).
    pub code: i64,
    /// A short description.
    pub message: String,
    /// Further detail; the gateway's denials put `{"reason": …}` here.
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error without `data`.
    pub fn new(code: i64, message: impl Into<String>) -> ErrorObject {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// The same error with `data`.
    pub fn with_data(mut self, data: Value) -> ErrorObject {
        self.data = Some(data);
        self
    }

    /// The error as a JSON value.
    pub fn to_value(&self) -> Value {
        let mut object = Map::new();
        object.insert("code".to_owned(), Value::from(self.code));
        object.insert("message".to_owned(), Value::String(self.message.clone()));
        if let Some(data) = &self.data {
            object.insert("data".to_owned(), data.clone());
        }
        Value::Object(object)
    }
}

/// A response's outcome: exactly one of `result` and `error`.
#[derive(Debug, Clone, PartialEq)]
pub enum ResponsePayload {
    /// `result`, kept as received (well-formed, not rewritten).
    Result(RawJson),
    /// `error`.
    Error(ErrorObject),
}

/// A response to a request.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// The id of the request answered; `None` (`"id": null`) only for an error answering a
    /// message whose id could not be read.
    pub id: Option<RequestId>,
    /// The result or the error.
    pub payload: ResponsePayload,
}

impl Response {
    /// A success response: a `Value` (written in serde_json's form) or a [`RawJson`] (written
    /// as it is).
    pub fn result(id: RequestId, result: impl Into<RawJson>) -> Response {
        Response {
            id: Some(id),
            payload: ResponsePayload::Result(result.into()),
        }
    }

    /// An error response.
    pub fn error(id: Option<RequestId>, error: ErrorObject) -> Response {
        Response {
            id,
            payload: ResponsePayload::Error(error),
        }
    }
}

/// One JSON-RPC message.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A request.
    Request(Request),
    /// A notification.
    Notification(Notification),
    /// A response (result or error).
    Response(Response),
}

/// What is wrong with a message.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum MessageErrorKind {
    /// Not well-formed JSON: invalid UTF-8, outside the grammar, a duplicate member name,
    /// excessive nesting (checked over the whole message, pass-through parts included).
    #[error("the message is not valid JSON: {0}")]
    WellFormed(#[from] WellFormedError),
    /// A part that is interpreted (not pass-through) that the strict reader refuses
    /// (an integer beyond ±(2^53−1) as an id, …).
    #[error("the message is not valid JSON: {0}")]
    Json(#[from] jcs_digest::StrictJsonError),
    /// A JSON array: a batch.
    #[error("JSON-RPC batches are not supported; send one message per request")]
    Batch,
    /// Not a JSON object.
    #[error("a JSON-RPC message must be a JSON object")]
    NotAnObject,
    /// `jsonrpc` is absent or not `"2.0"`.
    #[error("the member \"jsonrpc\" must be the string \"2.0\"")]
    Version,
    /// `method` is not a string.
    #[error("the member \"method\" must be a string")]
    Method,
    /// `id` is not a string or an integer (or is `null` in a request).
    #[error("the member \"id\" must be a string or an integer")]
    Id,
    /// `params` is present but not an object.
    #[error("the member \"params\" must be an object when present")]
    Params,
    /// A message with neither `method` nor `result`/`error`, or with both `result` and `error`.
    #[error(
        "a JSON-RPC message must have \"method\" (request, notification) or exactly one of \
         \"result\" and \"error\" (response)"
    )]
    Shape,
    /// A response without an `id` member, or with `"id": null` on a success.
    #[error("a response must carry the id of the request it answers")]
    ResponseId,
    /// `error` is not an object with an integer `code` and a string `message`.
    #[error(
        "the member \"error\" must be an object with an integer \"code\" and a string \"message\""
    )]
    ErrorObject,
}

/// A message that could not be read, with the request id when one was legible (a server answers
/// an invalid request with that id, otherwise with `"id": null`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{kind}")]
pub struct MessageError {
    kind: MessageErrorKind,
    id: Option<RequestId>,
}

impl MessageError {
    fn new(kind: MessageErrorKind, id: Option<RequestId>) -> MessageError {
        MessageError { kind, id }
    }

    /// What is wrong.
    pub fn kind(&self) -> &MessageErrorKind {
        &self.kind
    }

    /// The id of the offending message, when it could be read.
    pub fn id(&self) -> Option<&RequestId> {
        self.id.as_ref()
    }

    /// The JSON-RPC error code for answering it: -32700 for unreadable JSON, -32600 otherwise.
    pub fn code(&self) -> i64 {
        match self.kind {
            MessageErrorKind::Json(_) | MessageErrorKind::WellFormed(_) => error_codes::PARSE_ERROR,
            _ => error_codes::INVALID_REQUEST,
        }
    }

    /// The error response a server sends back for it.
    pub fn to_response(&self) -> Response {
        Response::error(
            self.id.clone(),
            ErrorObject::new(self.code(), self.to_string()),
        )
    }
}

/// `params`, when present, as an object.
fn read_params(params: Option<Value>) -> Result<Option<Map<String, Value>>, MessageErrorKind> {
    match params {
        None => Ok(None),
        Some(Value::Object(params)) => Ok(Some(params)),
        Some(_) => Err(MessageErrorKind::Params),
    }
}

fn read_error_object(value: &Value) -> Option<ErrorObject> {
    let object = value.as_object()?;
    let code = object.get("code")?.as_i64()?;
    let message = object.get("message")?.as_str()?.to_owned();
    Some(ErrorObject {
        code,
        message,
        data: object.get("data").cloned(),
    })
}

/// The members of a message that decide what it means, read strictly, except the pass-through
/// parts. Other members are ignored (after being read strictly all the same).
#[derive(Debug, Default)]
struct Interpreted {
    /// Whether `jsonrpc` is the string `"2.0"`.
    version: bool,
    id: Option<Value>,
    method: Option<Value>,
    params: Option<Value>,
    error: Option<Value>,
}

/// JSON text's whitespace, around a member's value.
const WHITESPACE: [char; 4] = [' ', '\t', '\n', '\r'];

impl Message {
    /// Reads one message from bytes: the whole message checked for well-formedness, the
    /// pass-through parts (a response's `result`, a `tools/call`'s `params.arguments`) kept
    /// as received, everything else read strictly ([`jcs_digest::parse_strict`]).
    ///
    /// # Errors
    ///
    /// [`MessageError`]: unreadable JSON ([`MessageErrorKind::WellFormed`] or
    /// [`MessageErrorKind::Json`], code -32700) or an invalid JSON-RPC message (code -32600).
    pub fn from_slice(bytes: &[u8]) -> Result<Message, MessageError> {
        let parse_error = |kind: MessageErrorKind| MessageError::new(kind, None);
        let text = std::str::from_utf8(bytes).map_err(|error| {
            parse_error(MessageErrorKind::WellFormed(WellFormedError {
                kind: crate::WellFormedErrorKind::InvalidUtf8,
                offset: error.valid_up_to(),
            }))
        })?;
        // `params`' members are found in the same pass (a `tools/call` reads them one by one).
        let (members, params_members) =
            match object_members_and_nested(text, DEFAULT_MAX_DEPTH, "params") {
                Ok(Some(ObjectMembers { members, nested })) => (members, nested),
                Ok(None) if text.trim_start().starts_with('[') => {
                    return Err(parse_error(MessageErrorKind::Batch));
                }
                Ok(None) => return Err(parse_error(MessageErrorKind::NotAnObject)),
                Err(error) => return Err(parse_error(MessageErrorKind::WellFormed(error))),
            };
        let strict = |span: std::ops::Range<usize>, within: &str| {
            jcs_digest::parse_strict(within[span].as_bytes())
                .map_err(|error| parse_error(MessageErrorKind::Json(error)))
        };
        // Read into their own places, not into a map: a message's members are few and fixed.
        // (The checked text has no member twice.)
        let mut interpreted = Interpreted::default();
        let mut result = None;
        let mut params_span = None;
        for (name, span) in members {
            match name.as_ref() {
                "result" => result = Some(RawJson::trusted(&text[span])),
                "params" => params_span = Some(span),
                // The common spelling, known valid without a tree: what the strict reader
                // would make of it is the string "2.0".
                "jsonrpc" if text[span.clone()].trim_matches(WHITESPACE) == "\"2.0\"" => {
                    interpreted.version = true;
                }
                other => {
                    let value = strict(span, text)?;
                    match other {
                        "jsonrpc" => interpreted.version = value.as_str() == Some("2.0"),
                        "id" => interpreted.id = Some(value),
                        "method" => interpreted.method = Some(value),
                        "error" => interpreted.error = Some(value),
                        _ => {}
                    }
                }
            }
        }
        let is_call =
            interpreted.method.as_ref().and_then(Value::as_str) == Some(crate::methods::TOOLS_CALL);
        let mut arguments = None;
        if let Some(span) = params_span {
            match params_members {
                // The member ranges are in `text` (checked with the message).
                Some(members) if is_call => {
                    let mut params = Map::new();
                    for (name, inner) in members {
                        if name == "arguments" {
                            arguments = Some(RawJson::trusted(&text[inner]));
                        } else {
                            let value = strict(inner, text)?;
                            params.insert(name.into_owned(), value);
                        }
                    }
                    interpreted.params = Some(Value::Object(params));
                }
                _ => interpreted.params = Some(strict(span, text)?),
            }
        }
        Message::from_parts(interpreted, result, arguments)
    }

    /// Reads one message from an already parsed JSON value (its `result`, and a `tools/call`'s
    /// `params.arguments`, become [`RawJson`] in serde_json's form).
    ///
    /// # Errors
    ///
    /// [`MessageError`] for a value that is not a valid JSON-RPC 2.0 message.
    pub fn from_value(value: Value) -> Result<Message, MessageError> {
        let mut object = match value {
            Value::Object(object) => object,
            Value::Array(_) => return Err(MessageError::new(MessageErrorKind::Batch, None)),
            _ => return Err(MessageError::new(MessageErrorKind::NotAnObject, None)),
        };
        let result = object.remove("result").map(RawJson::from);
        let is_call =
            object.get("method").and_then(Value::as_str) == Some(crate::methods::TOOLS_CALL);
        let arguments = match object.get_mut("params") {
            Some(Value::Object(params)) if is_call => params.remove("arguments").map(RawJson::from),
            _ => None,
        };
        let interpreted = Interpreted {
            version: object.get("jsonrpc").and_then(Value::as_str) == Some("2.0"),
            id: object.remove("id"),
            method: object.remove("method"),
            params: object.remove("params"),
            error: object.remove("error"),
        };
        Message::from_parts(interpreted, result, arguments)
    }

    /// The message from its members read strictly, and the pass-through parts.
    fn from_parts(
        interpreted: Interpreted,
        result: Option<RawJson>,
        arguments: Option<RawJson>,
    ) -> Result<Message, MessageError> {
        let Interpreted {
            version,
            id: id_value,
            method,
            params,
            error,
        } = interpreted;
        // The id member's shape.
        let id_member: Option<bool> = id_value.as_ref().map(Value::is_null);
        let id = id_value.as_ref().and_then(RequestId::from_value);
        let fail =
            |kind: MessageErrorKind, id: &Option<RequestId>| MessageError::new(kind, id.clone());

        if !version {
            return Err(fail(MessageErrorKind::Version, &id));
        }
        let id_is_valid = match id_member {
            None | Some(true) => true,
            Some(false) => id.is_some(),
        };
        if !id_is_valid {
            return Err(fail(MessageErrorKind::Id, &None));
        }

        if let Some(method) = method {
            let Value::String(method) = method else {
                return Err(fail(MessageErrorKind::Method, &id));
            };
            if result.is_some() || error.is_some() {
                return Err(fail(MessageErrorKind::Shape, &id));
            }
            let params = read_params(params).map_err(|kind| fail(kind, &id))?;
            return match (id_member, id) {
                (None, _) => Ok(Message::Notification(Notification { method, params })),
                (Some(_), Some(id)) => Ok(Message::Request(Request {
                    id,
                    method,
                    params,
                    arguments,
                })),
                // `"id": null` in a request: MCP forbids it, and a null id could not be answered.
                (Some(_), None) => Err(fail(MessageErrorKind::Id, &None)),
            };
        }

        let payload = match (result, error) {
            (Some(result), None) => ResponsePayload::Result(result),
            (None, Some(error)) => ResponsePayload::Error(
                read_error_object(&error)
                    .ok_or_else(|| fail(MessageErrorKind::ErrorObject, &id))?,
            ),
            _ => return Err(fail(MessageErrorKind::Shape, &id)),
        };
        // A response needs its id; only an error may carry `"id": null`.
        let id_allowed = !matches!(
            (&payload, id_member),
            (_, None) | (ResponsePayload::Result(_), Some(true))
        );
        if !id_allowed {
            return Err(fail(MessageErrorKind::ResponseId, &id));
        }
        Ok(Message::Response(Response { id, payload }))
    }

    /// The message as JSON text (UTF-8 bytes): members in sorted order, absent ones skipped,
    /// the params and error data in serde_json's form, and the pass-through parts (a `result`,
    /// a `tools/call`'s `arguments`) exactly as they are held. Written into one buffer sized
    /// for the pass-through parts, with no intermediate strings.
    pub fn to_vec(&self) -> Vec<u8> {
        // A result answering a numeric id (every call's answer) is sized exactly: a buffer
        // whose length is its capacity becomes `Bytes` without another allocation.
        if let Message::Response(Response {
            id: Some(RequestId::Number(number)),
            payload: ResponsePayload::Result(result),
        }) = self
        {
            const HEAD: &[u8] = b"{\"id\":";
            const MIDDLE: &[u8] = b",\"jsonrpc\":\"2.0\",\"result\":";
            let length =
                HEAD.len() + decimal_length(*number) + MIDDLE.len() + result.as_str().len() + 1;
            let mut out = Vec::with_capacity(length);
            out.extend_from_slice(HEAD);
            push_number(&mut out, *number);
            out.extend_from_slice(MIDDLE);
            out.extend_from_slice(result.as_bytes());
            out.push(b'}');
            return out;
        }
        let carried = match self {
            Message::Request(request) => request
                .arguments
                .as_ref()
                .map_or(0, |raw| raw.as_str().len()),
            Message::Response(Response {
                payload: ResponsePayload::Result(result),
                ..
            }) => result.as_str().len(),
            _ => 0,
        };
        let mut out = Vec::with_capacity(128 + carried);
        match self {
            Message::Request(request) => {
                out.extend_from_slice(b"{\"id\":");
                push_id(&mut out, Some(&request.id));
                out.extend_from_slice(b",\"jsonrpc\":\"2.0\",\"method\":");
                push_string(&mut out, &request.method);
                if request.params.is_some() || request.arguments.is_some() {
                    out.extend_from_slice(b",\"params\":");
                    push_params(
                        &mut out,
                        request.params.as_ref(),
                        request.arguments.as_ref(),
                    );
                }
            }
            Message::Notification(notification) => {
                out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":");
                push_string(&mut out, &notification.method);
                if let Some(params) = &notification.params {
                    out.extend_from_slice(b",\"params\":");
                    push_params(&mut out, Some(params), None);
                }
            }
            Message::Response(response) => match &response.payload {
                ResponsePayload::Result(result) => {
                    out.extend_from_slice(b"{\"id\":");
                    push_id(&mut out, response.id.as_ref());
                    out.extend_from_slice(b",\"jsonrpc\":\"2.0\",\"result\":");
                    out.extend_from_slice(result.as_bytes());
                }
                ResponsePayload::Error(error) => {
                    out.extend_from_slice(b"{\"error\":{\"code\":");
                    push_number(&mut out, error.code);
                    if let Some(data) = &error.data {
                        out.extend_from_slice(b",\"data\":");
                        push_value(&mut out, data);
                    }
                    out.extend_from_slice(b",\"message\":");
                    push_string(&mut out, &error.message);
                    out.extend_from_slice(b"},\"id\":");
                    push_id(&mut out, response.id.as_ref());
                    out.extend_from_slice(b",\"jsonrpc\":\"2.0\"");
                }
            },
        }
        out.push(b'}');
        out
    }

    /// The method of a request or notification.
    pub fn method(&self) -> Option<&str> {
        match self {
            Message::Request(request) => Some(&request.method),
            Message::Notification(notification) => Some(&notification.method),
            Message::Response(_) => None,
        }
    }
}

/// `text` as a JSON string, escaped as serde_json escapes it.
fn push_string(out: &mut Vec<u8>, text: &str) {
    // Writing a string into a `Vec` cannot fail.
    let _ = serde_json::to_writer(&mut *out, text);
}

/// `value` in serde_json's compact form, members in name order ([`Sorted`]).
fn push_value(out: &mut Vec<u8>, value: &Value) {
    // A `Value` always serializes (its member names are strings).
    let _ = serde_json::to_writer(&mut *out, &Sorted(value));
}

/// How many bytes `number` takes in decimal (with its sign).
fn decimal_length(number: i64) -> usize {
    let mut length = usize::from(number < 0);
    let mut rest = number.unsigned_abs();
    loop {
        length += 1;
        rest /= 10;
        if rest == 0 {
            return length;
        }
    }
}

fn push_number(out: &mut Vec<u8>, number: i64) {
    // Writing into a `Vec` cannot fail.
    let _ = write!(out, "{number}");
}

/// An id as written: `null` only in an error answering an unreadable message.
fn push_id(out: &mut Vec<u8>, id: Option<&RequestId>) {
    match id {
        Some(RequestId::Number(number)) => push_number(out, *number),
        Some(RequestId::String(text)) => push_string(out, text),
        None => out.extend_from_slice(b"null"),
    }
}

/// `params` as an object, with the pass-through `arguments` in its sorted place.
fn push_params(
    out: &mut Vec<u8>,
    params: Option<&Map<String, Value>>,
    arguments: Option<&RawJson>,
) {
    out.push(b'{');
    let mut first = true;
    let mut separator = |out: &mut Vec<u8>| {
        if !first {
            out.push(b',');
        }
        first = false;
    };
    let carried = arguments.is_some();
    let mut arguments = arguments;
    // In name order whatever order the map keeps (serde_json's `preserve_order`), so that
    // `arguments` lands in its sorted place.
    for (name, value) in params.into_iter().flat_map(order::members) {
        if carried && name.as_str() == "arguments" {
            continue;
        }
        if name.as_str() > "arguments" {
            if let Some(raw) = arguments.take() {
                separator(out);
                out.extend_from_slice(b"\"arguments\":");
                out.extend_from_slice(raw.as_bytes());
            }
        }
        separator(out);
        push_string(out, name);
        out.push(b':');
        push_value(out, value);
    }
    if let Some(raw) = arguments {
        separator(out);
        out.extend_from_slice(b"\"arguments\":");
        out.extend_from_slice(raw.as_bytes());
    }
    out.push(b'}');
}

impl From<Request> for Message {
    fn from(request: Request) -> Self {
        Message::Request(request)
    }
}

impl From<Notification> for Message {
    fn from(notification: Notification) -> Self {
        Message::Notification(notification)
    }
}

impl From<Response> for Message {
    fn from(response: Response) -> Self {
        Message::Response(response)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(text: &str) -> Result<Message, MessageError> {
        Message::from_slice(text.as_bytes())
    }

    #[test]
    fn a_result_is_written_into_a_buffer_of_its_exact_length() {
        let result =
            RawJson::from_slice(r#"{"content":[{"type":"text","text":"é"}],"n":1E+2}"#.as_bytes())
                .unwrap();
        for id in [
            0,
            7,
            -1,
            10,
            99,
            100,
            -100,
            9_007_199_254_740_991,
            i64::MAX,
            i64::MIN,
        ] {
            let bytes =
                Message::Response(Response::result(RequestId::Number(id), result.clone())).to_vec();
            assert_eq!(
                String::from_utf8(bytes.clone()).unwrap(),
                format!(
                    r#"{{"id":{id},"jsonrpc":"2.0","result":{}}}"#,
                    result.as_str()
                )
            );
            assert_eq!(bytes.capacity(), bytes.len(), "id {id}");
        }
    }

    #[test]
    fn requests_notifications_and_responses_are_told_apart_and_round_trip() {
        let texts = [
            r#"{"id":1,"jsonrpc":"2.0","method":"tools/list","params":{"cursor":"a"}}"#,
            r#"{"id":"x","jsonrpc":"2.0","method":"ping"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"id":7,"jsonrpc":"2.0","result":{"tools":[]}}"#,
            r#"{"error":{"code":-32601,"data":{"reason":"x"},"message":"nope"},"id":null,"jsonrpc":"2.0"}"#,
        ];
        for text in texts {
            let message = read(text).unwrap();
            assert_eq!(String::from_utf8(message.to_vec()).unwrap(), text);
            assert_eq!(
                Message::from_value(serde_json::from_str(text).unwrap()).unwrap(),
                message
            );
        }
        assert!(matches!(read(texts[2]), Ok(Message::Notification(_))));
        assert_eq!(read(texts[0]).unwrap().method(), Some("tools/list"),);
    }

    #[test]
    fn the_version_is_read_however_it_is_written() {
        // The plain spelling is recognized without a tree; any other is read strictly.
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            "{\"jsonrpc\" : \t\"2.0\" \n,\"id\":1,\"method\":\"ping\"}",
            r#"{"jsonrpc":"2\u002e0","id":1,"method":"ping"}"#,
        ] {
            assert!(matches!(read(text), Ok(Message::Request(_))), "{text}");
        }
        for (text, kind) in [
            (
                r#"{"jsonrpc":"2.0 ","id":1,"method":"ping"}"#,
                MessageErrorKind::Version,
            ),
            (
                r#"{"jsonrpc":2.0,"id":1,"method":"ping"}"#,
                MessageErrorKind::Version,
            ),
        ] {
            assert_eq!(read(text).unwrap_err().kind(), &kind, "{text}");
        }
        // Outside the grammar of the strict reader it is a parse error, as before.
        let error = read(r#"{"jsonrpc":1e400,"id":1,"method":"ping"}"#).unwrap_err();
        assert!(matches!(error.kind(), MessageErrorKind::Json(_)));
        // A member nobody interprets is still read strictly.
        let error = read(r#"{"jsonrpc":"2.0","id":1,"method":"ping","x":1e400}"#).unwrap_err();
        assert!(matches!(error.kind(), MessageErrorKind::Json(_)));
    }

    #[test]
    fn duplicate_members_are_a_parse_error_not_a_silent_choice() {
        let error =
            read(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"ping"}"#).unwrap_err();
        assert_eq!(error.code(), error_codes::PARSE_ERROR);
        assert!(matches!(error.kind(), MessageErrorKind::WellFormed(_)));
        assert_eq!(error.to_response().id, None);
    }

    #[test]
    fn invalid_requests_keep_their_id_for_the_answer() {
        let error = read(r#"{"jsonrpc":"1.0","id":5,"method":"ping"}"#).unwrap_err();
        assert_eq!(error.kind(), &MessageErrorKind::Version);
        assert_eq!(error.id(), Some(&RequestId::Number(5)));
        assert_eq!(error.code(), error_codes::INVALID_REQUEST);

        let cases = [
            (
                r#"[{"jsonrpc":"2.0","method":"ping"}]"#,
                MessageErrorKind::Batch,
            ),
            ("3", MessageErrorKind::NotAnObject),
            (
                r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
                MessageErrorKind::Id,
            ),
            (
                r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
                MessageErrorKind::Id,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
                MessageErrorKind::Method,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"a","params":[1]}"#,
                MessageErrorKind::Params,
            ),
            (r#"{"jsonrpc":"2.0","id":1}"#, MessageErrorKind::Shape),
            (
                r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}"#,
                MessageErrorKind::Shape,
            ),
            (
                r#"{"jsonrpc":"2.0","result":{}}"#,
                MessageErrorKind::ResponseId,
            ),
            (
                r#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
                MessageErrorKind::ResponseId,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}"#,
                MessageErrorKind::ErrorObject,
            ),
        ];
        for (text, kind) in cases {
            assert_eq!(read(text).unwrap_err().kind(), &kind, "{text}");
        }
    }

    #[test]
    fn results_are_kept_as_received() {
        let result = json!({"content": [{"type": "text", "text": "hi"}], "isError": false, "_meta": {"k": 1}, "structuredContent": {"a": [1, 2.5]}});
        let text = json!({"jsonrpc": "2.0", "id": "r", "result": result}).to_string();
        let Message::Response(response) = read(&text).unwrap() else {
            panic!("not a response")
        };
        let ResponsePayload::Result(raw) = &response.payload else {
            panic!("not a result")
        };
        assert_eq!(raw.to_value().unwrap(), result);
    }

    #[test]
    fn pass_through_parts_keep_their_bytes_and_the_rest_stays_strict() {
        let result = r#"{"structuredContent":{"n":9007199254740993,"x":1E+2,"z":-0,"big":1e400},"content":[]}"#;
        let text = format!(r#"{{"jsonrpc":"2.0","id":3,"result":{result}}}"#);
        let message = read(&text).unwrap();
        let Message::Response(Response {
            payload: ResponsePayload::Result(raw),
            ..
        }) = &message
        else {
            panic!("not a result")
        };
        assert_eq!(raw.as_str(), result);
        assert_eq!(
            String::from_utf8(message.to_vec()).unwrap(),
            format!(r#"{{"id":3,"jsonrpc":"2.0","result":{result}}}"#)
        );

        let arguments = r#"{"b": 9007199254740993, "a": 1E+2}"#;
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"t","arguments":{arguments},"_meta":{{"k":1}}}}}}"#
        );
        let Message::Request(request) = read(&call).unwrap() else {
            panic!("not a request")
        };
        assert_eq!(request.arguments.as_ref().unwrap().as_str(), arguments);
        let params = request.params.clone().unwrap();
        assert_eq!(params.get("arguments"), None);
        assert_eq!(params["name"], "t");
        assert_eq!(
            String::from_utf8(Message::Request(request).to_vec()).unwrap(),
            format!(
                r#"{{"id":1,"jsonrpc":"2.0","method":"tools/call","params":{{"_meta":{{"k":1}},"arguments":{arguments},"name":"t"}}}}"#
            )
        );

        // Outside the pass-through parts the reader stays strict.
        for strict in [
            r#"{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"n":9007199254740993}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"n":1e400}}}"#,
        ] {
            let error = read(strict).unwrap_err();
            assert!(
                matches!(error.kind(), MessageErrorKind::Json(_)),
                "{strict}: {error:?}"
            );
            assert_eq!(error.code(), error_codes::PARSE_ERROR);
        }
        // And a duplicate inside a pass-through part is still refused.
        let error = read(r#"{"jsonrpc":"2.0","id":1,"result":{"a":1,"a":2}}"#).unwrap_err();
        assert!(matches!(error.kind(), MessageErrorKind::WellFormed(_)));
    }
}
