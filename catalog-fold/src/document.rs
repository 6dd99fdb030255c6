//! Reading a `tools/list` document in any of its three shapes (docs/design.md §2).

use jcs_digest::StrictJsonError;
use serde_json::{Map, Value};

/// The shapes [`read_tools_document`] accepts, as error messages list them.
const ACCEPTED_SHAPES: &str = "a bare array of tools, a tools/list result {\"tools\": [...]}, \
     or a JSON-RPC response {\"jsonrpc\": \"2.0\", \"result\": {\"tools\": [...]}}";

/// Why a document is not a readable `tools/list` document.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DocumentError {
    /// The bytes are not strict JSON (docs/design.md §2, "Strict JSON").
    #[error("the tools/list document is not strict JSON: {0}")]
    Json(#[from] StrictJsonError),
    /// The document is JSON of none of the three accepted shapes.
    #[error("the tools/list document is {found}; expected {ACCEPTED_SHAPES}")]
    UnexpectedShape {
        /// What the document is, e.g. `an object with members "id", "tool"`.
        found: String,
    },
    /// The `tools` member is present but is not an array.
    #[error(
        "the \"tools\" member at JSON Pointer {pointer:?} is {found}; it must be an array of tool definitions"
    )]
    ToolsNotAnArray {
        /// JSON Pointer of the `tools` member: `/tools` or `/result/tools`.
        pointer: &'static str,
        /// What it is instead, e.g. `an object`.
        found: String,
    },
    /// A JSON-RPC response whose `jsonrpc` member is not `"2.0"`.
    #[error(
        "the JSON-RPC response has \"jsonrpc\": {found}, expected \"2.0\"; only JSON-RPC 2.0 responses are read"
    )]
    JsonRpcVersion {
        /// The `jsonrpc` member as JSON text (shortened past 200 characters).
        found: String,
    },
    /// A JSON-RPC error response: the server did not return a tool list.
    #[error(
        "the document is a JSON-RPC error response (code {code}, message {message}), not a tools/list result; the server refused the request, so there is no catalog to digest"
    )]
    JsonRpcError {
        /// The error's `code`, as JSON text (`-32601`, or `absent`; shortened past 200
        /// characters).
        code: String,
        /// The error's `message`, as JSON text (`"Method not found"`, or `absent`; shortened
        /// past 200 characters).
        message: String,
    },
}

/// Reads the tool definitions of a `tools/list` document.
///
/// The bytes are read with [`jcs_digest::parse_strict`], then one of three shapes is
/// accepted (docs/design.md §2):
///
/// - a bare array of tool definitions (the seed's input, seed 000 §2);
/// - a `tools/list` result, `{"tools": [...]}`; other members such as `nextCursor` are
///   ignored;
/// - a JSON-RPC 2.0 response, `{"jsonrpc": "2.0", "result": {"tools": [...]}}`. A response
///   with an `error` member is a [`DocumentError::JsonRpcError`] quoting its code and message.
///
/// An object is taken as a JSON-RPC response when it has a `jsonrpc` member. The elements are
/// returned as they are; which of them are tool definitions with a digest is decided by
/// [`CatalogDigest::compute`](crate::CatalogDigest::compute).
pub fn read_tools_document(bytes: &[u8]) -> Result<Vec<Value>, DocumentError> {
    match jcs_digest::parse_strict(bytes)? {
        Value::Array(tools) => Ok(tools),
        Value::Object(mut document) => {
            if document.contains_key("jsonrpc") {
                return read_json_rpc_response(document);
            }
            match document.remove("tools") {
                Some(tools) => tools_array(tools, "/tools"),
                None => Err(DocumentError::UnexpectedShape {
                    found: describe_object(&document),
                }),
            }
        }
        other => Err(DocumentError::UnexpectedShape {
            found: describe(&other),
        }),
    }
}

/// The JSON-RPC response shape: `{"jsonrpc": "2.0", "result": {"tools": [...]}}`.
fn read_json_rpc_response(mut response: Map<String, Value>) -> Result<Vec<Value>, DocumentError> {
    match response.get("jsonrpc") {
        Some(Value::String(version)) if version == "2.0" => {}
        found => {
            return Err(DocumentError::JsonRpcVersion {
                found: json_text(found),
            });
        }
    }
    if let Some(error) = response.get("error") {
        return Err(DocumentError::JsonRpcError {
            code: json_text(error.get("code")),
            message: json_text(error.get("message")),
        });
    }
    match response.remove("result") {
        Some(Value::Object(mut result)) => match result.remove("tools") {
            Some(tools) => tools_array(tools, "/result/tools"),
            None => Err(DocumentError::UnexpectedShape {
                found: format!(
                    "a JSON-RPC response whose result is {}",
                    describe_object(&result)
                ),
            }),
        },
        Some(other) => Err(DocumentError::UnexpectedShape {
            found: format!("a JSON-RPC response whose result is {}", describe(&other)),
        }),
        None => Err(DocumentError::UnexpectedShape {
            found: String::from("a JSON-RPC response with neither \"result\" nor \"error\""),
        }),
    }
}

fn tools_array(tools: Value, pointer: &'static str) -> Result<Vec<Value>, DocumentError> {
    match tools {
        Value::Array(tools) => Ok(tools),
        other => Err(DocumentError::ToolsNotAnArray {
            pointer,
            found: describe(&other),
        }),
    }
}

/// A member's value as compact JSON text, or `absent`; text over 200 characters is shortened
/// with `…` so that a hostile response cannot blow up an error message.
fn json_text(value: Option<&Value>) -> String {
    const LIMIT: usize = 200;
    let Some(value) = value else {
        return String::from("absent");
    };
    let text = jcs_digest::order::to_string(value);
    if text.chars().count() <= LIMIT {
        text
    } else {
        let mut short: String = text.chars().take(LIMIT).collect();
        short.push('…');
        short
    }
}

/// What a JSON value is, for error messages ("a string", "an object with members ...").
pub(crate) fn describe(value: &Value) -> String {
    match value {
        Value::Object(members) => describe_object(members),
        other => String::from(json_type(other)),
    }
}

/// The JSON type of a value with its article: "null", "a boolean", … "an object".
pub(crate) fn json_type(value: &Value) -> &'static str {
    jcs_digest::JsonType::of_value(value).with_article()
}

/// "an empty object", or "an object with members "a", "b"" (the first five names).
fn describe_object(members: &Map<String, Value>) -> String {
    const SHOWN: usize = 5;
    if members.is_empty() {
        return String::from("an empty object");
    }
    let names: Vec<String> = jcs_digest::order::names(members)
        .take(SHOWN)
        .map(|name| quote_short(name))
        .collect();
    let more = if members.len() > SHOWN {
        format!(" and {} more", members.len() - SHOWN)
    } else {
        String::new()
    };
    format!("an object with members {}{more}", names.join(", "))
}

/// A quoted member name, shortened to 40 characters so that hostile input cannot blow up an
/// error message.
fn quote_short(name: &str) -> String {
    const LIMIT: usize = 40;
    if name.chars().count() <= LIMIT {
        format!("{name:?}")
    } else {
        let start: String = name.chars().take(LIMIT).collect();
        format!("{start:?}…")
    }
}
