//! JSON-RPC 2.0 messages as MCP uses them: requests, notifications and responses, read strictly
//! and written back exactly.
//!
//! Unknown top-level members are ignored (JSON-RPC leaves them open); everything that decides
//! what a message means (`jsonrpc`, `id`, `method`, `params`, `result`, `error`) is checked.
//! Batches (JSON arrays) are refused: MCP removed them in 2025-06-18, and one request per POST
//! keeps the gateway's one-decision-per-call audit trail exact.

use std::fmt;

use serde_json::{Map, Value};

use super::error_codes;

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
            RequestId::String(text) => write!(f, "{}", Value::String(text.clone())),
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
    /// The parameters; MCP parameters are always an object.
    pub params: Option<Map<String, Value>>,
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
    /// `result`, kept as received.
    Result(Value),
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
    /// A success response.
    pub fn result(id: RequestId, result: Value) -> Response {
        Response {
            id: Some(id),
            payload: ResponsePayload::Result(result),
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
    /// Not JSON, or JSON the strict reader refuses (duplicate member names, out-of-range
    /// integers, invalid UTF-8, excessive nesting, …).
    #[error("the message is not valid JSON: {0}")]
    Json(#[from] jcs_digest::StrictJsonError),
    /// Not well-formed JSON (duplicate member names, nesting, syntax), found by the reading
    /// that carries large integers ([`Message::from_slice_carried`]).
    #[error("the message is not valid JSON: {0}")]
    Malformed(String),
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
            MessageErrorKind::Json(_) | MessageErrorKind::Malformed(_) => error_codes::PARSE_ERROR,
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

fn read_params(
    object: &Map<String, Value>,
) -> Result<Option<Map<String, Value>>, MessageErrorKind> {
    match object.get("params") {
        None => Ok(None),
        Some(Value::Object(params)) => Ok(Some(params.clone())),
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

impl Message {
    /// Reads one message from bytes, strictly ([`jcs_digest::parse_strict`]).
    ///
    /// # Errors
    ///
    /// [`MessageError`]: unreadable JSON ([`MessageErrorKind::Json`], code -32700) or an
    /// invalid JSON-RPC message (code -32600).
    pub fn from_slice(bytes: &[u8]) -> Result<Message, MessageError> {
        let value = jcs_digest::parse_strict(bytes)
            .map_err(|error| MessageError::new(MessageErrorKind::Json(error), None))?;
        Message::from_value(value)
    }

    /// Reads one message from a client whose parameters the gateway only carries: as
    /// [`Message::from_slice`], except that an integer beyond ±(2^53−1) (in a tool call's
    /// arguments, say) is kept rather than refused; duplicate member names, invalid UTF-8 and
    /// excessive nesting are still refused (DESIGN.md §5, "Pass-through data is not
    /// rewritten").
    ///
    /// # Errors
    ///
    /// As [`Message::from_slice`]; [`MessageErrorKind::Malformed`] for what the range-tolerant
    /// reading refuses.
    pub fn from_slice_carried(bytes: &[u8]) -> Result<Message, MessageError> {
        let value = super::carried::parse_carried(bytes).map_err(|error| {
            let kind = match error {
                super::carried::CarriedError::Strict(error) => MessageErrorKind::Json(error),
                super::carried::CarriedError::Lenient(message) => {
                    MessageErrorKind::Malformed(message)
                }
            };
            MessageError::new(kind, None)
        })?;
        Message::from_value(value)
    }

    /// Reads one message from an already parsed JSON value.
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
        // The id member's shape, read before `result`/`error` are taken out of the object.
        let id_member: Option<bool> = object.get("id").map(Value::is_null);
        let id = object.get("id").and_then(RequestId::from_value);
        let fail =
            |kind: MessageErrorKind, id: &Option<RequestId>| MessageError::new(kind, id.clone());

        if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Err(fail(MessageErrorKind::Version, &id));
        }
        let id_is_valid = match id_member {
            None | Some(true) => true,
            Some(false) => id.is_some(),
        };
        if !id_is_valid {
            return Err(fail(MessageErrorKind::Id, &None));
        }

        if let Some(method) = object.get("method") {
            let Some(method) = method.as_str().map(str::to_owned) else {
                return Err(fail(MessageErrorKind::Method, &id));
            };
            if object.contains_key("result") || object.contains_key("error") {
                return Err(fail(MessageErrorKind::Shape, &id));
            }
            let params = read_params(&object).map_err(|kind| fail(kind, &id))?;
            return match (id_member, id) {
                (None, _) => Ok(Message::Notification(Notification { method, params })),
                (Some(_), Some(id)) => Ok(Message::Request(Request { id, method, params })),
                // `"id": null` in a request: MCP forbids it, and a null id could not be answered.
                (Some(_), None) => Err(fail(MessageErrorKind::Id, &None)),
            };
        }

        let payload = match (object.remove("result"), object.remove("error")) {
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

    /// The message as a JSON value.
    pub fn to_value(&self) -> Value {
        let mut object = Map::new();
        object.insert("jsonrpc".to_owned(), Value::from("2.0"));
        match self {
            Message::Request(request) => {
                object.insert("id".to_owned(), request.id.to_value());
                object.insert("method".to_owned(), Value::String(request.method.clone()));
                if let Some(params) = &request.params {
                    object.insert("params".to_owned(), Value::Object(params.clone()));
                }
            }
            Message::Notification(notification) => {
                object.insert(
                    "method".to_owned(),
                    Value::String(notification.method.clone()),
                );
                if let Some(params) = &notification.params {
                    object.insert("params".to_owned(), Value::Object(params.clone()));
                }
            }
            Message::Response(response) => {
                let id = response
                    .id
                    .as_ref()
                    .map_or(Value::Null, RequestId::to_value);
                object.insert("id".to_owned(), id);
                match &response.payload {
                    ResponsePayload::Result(result) => {
                        object.insert("result".to_owned(), result.clone());
                    }
                    ResponsePayload::Error(error) => {
                        object.insert("error".to_owned(), error.to_value());
                    }
                }
            }
        }
        Value::Object(object)
    }

    /// The message as JSON text (UTF-8 bytes), written without copying the params or result
    /// (the member order is that of [`Message::to_value`]: sorted, as serde_json's map keeps
    /// members).
    pub fn to_vec(&self) -> Vec<u8> {
        let wire = match self {
            Message::Request(request) => Wire {
                error: None,
                id: Some(WireId::Id(&request.id)),
                jsonrpc: "2.0",
                method: Some(&request.method),
                params: request.params.as_ref(),
                result: None,
            },
            Message::Notification(notification) => Wire {
                error: None,
                id: None,
                jsonrpc: "2.0",
                method: Some(&notification.method),
                params: notification.params.as_ref(),
                result: None,
            },
            Message::Response(response) => {
                let id = Some(response.id.as_ref().map_or(WireId::Null, WireId::Id));
                match &response.payload {
                    ResponsePayload::Result(result) => Wire {
                        error: None,
                        id,
                        jsonrpc: "2.0",
                        method: None,
                        params: None,
                        result: Some(result),
                    },
                    ResponsePayload::Error(error) => Wire {
                        error: Some(WireError {
                            code: error.code,
                            data: error.data.as_ref(),
                            message: &error.message,
                        }),
                        id,
                        jsonrpc: "2.0",
                        method: None,
                        params: None,
                        result: None,
                    },
                }
            }
        };
        // Serializing borrowed strings, integers and `Value`s cannot fail; the fallback keeps
        // this infallible without a panic path.
        serde_json::to_vec(&wire).unwrap_or_else(|_| self.to_value().to_string().into_bytes())
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

/// A message as written: members in sorted order, absent ones skipped.
#[derive(serde::Serialize)]
struct Wire<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<WireError<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<WireId<'a>>,
    jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    method: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a Map<String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a Value>,
}

#[derive(serde::Serialize)]
struct WireError<'a> {
    code: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<&'a Value>,
    message: &'a str,
}

/// An id as written: `null` only in an error answering an unreadable message.
enum WireId<'a> {
    Id(&'a RequestId),
    Null,
}

impl serde::Serialize for WireId<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            WireId::Id(RequestId::Number(number)) => serializer.serialize_i64(*number),
            WireId::Id(RequestId::String(text)) => serializer.serialize_str(text),
            WireId::Null => serializer.serialize_unit(),
        }
    }
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
            assert_eq!(message.to_value().to_string(), text);
        }
        assert!(matches!(read(texts[2]), Ok(Message::Notification(_))));
        assert_eq!(read(texts[0]).unwrap().method(), Some("tools/list"),);
    }

    #[test]
    fn duplicate_members_are_a_parse_error_not_a_silent_choice() {
        let error =
            read(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"ping"}"#).unwrap_err();
        assert_eq!(error.code(), error_codes::PARSE_ERROR);
        assert!(matches!(error.kind(), MessageErrorKind::Json(_)));
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
        assert_eq!(response.payload, ResponsePayload::Result(result));
    }
}
