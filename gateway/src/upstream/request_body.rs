//! The bodies of the requests made on every call (`tools/call`, and `tools/list` in `per-call`
//! mode; also a local server's `server/discover` probe), written as bytes directly: no `Value`
//! tree is built for them, and the arguments the client sent are copied as the bytes received,
//! never re-serialized (docs/design.md §5, "Pass-through data is not rewritten").
//!
//! The text is byte for byte what [`Message::to_vec`](crate::mcp::Message::to_vec) writes for the
//! same request once the 2026-07-28 envelope is stamped into `params._meta`: compact, members in
//! name order, strings escaped as serde_json escapes them. Network and local (stdio) upstreams
//! send the same bytes (stdio adds the line's newline).

use std::io::Write as _;

use jcs_digest::order::{self, Sorted};
use serde_json::{Map, Value};

use crate::mcp::{self, ProtocolVersion, RawJson};

/// The client's name in `clientInfo`.
pub(crate) const CLIENT_NAME: &str = "toolgate";

/// `clientInfo` as a value, for the requests still built as values (`initialize`, the
/// 2026-07-28 listener's envelope); the requests written as bytes write the same members.
pub(crate) fn client_info() -> Value {
    serde_json::json!({"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")})
}

/// A request written as bytes: those every call makes, and the probe made at each start of a
/// local server.
#[derive(Debug, Clone, Copy)]
pub(crate) enum WrittenRequest<'a> {
    /// `tools/call` of `name` (the upstream's name for the tool) with the client's `arguments`,
    /// copied as they are, and the client's `_meta` members passed through.
    ToolsCall {
        name: &'a str,
        arguments: Option<&'a RawJson>,
        meta: Option<&'a Map<String, Value>>,
    },
    /// `tools/list`, from `cursor` when it is not the first page.
    ToolsList { cursor: Option<&'a str> },
    /// `server/discover`: the envelope only.
    ServerDiscover,
}

impl WrittenRequest<'_> {
    /// The JSON-RPC method.
    pub(crate) fn method(&self) -> &'static str {
        match self {
            WrittenRequest::ToolsCall { .. } => mcp::methods::TOOLS_CALL,
            WrittenRequest::ToolsList { .. } => mcp::methods::TOOLS_LIST,
            WrittenRequest::ServerDiscover => mcp::methods::SERVER_DISCOVER,
        }
    }

    /// What the method's `Mcp-Name` header mirrors (2026-07-28): the tool's name.
    pub(crate) fn mirrored_name(&self) -> Option<&str> {
        match self {
            WrittenRequest::ToolsCall { name, .. } => Some(name),
            _ => None,
        }
    }

    /// The message with request id `id`, `params._meta` holding the 2026-07-28 envelope when
    /// `envelope` (whose members replace any of the client's of the same names).
    pub(crate) fn to_bytes(self, id: i64, envelope: bool) -> Vec<u8> {
        // The members besides `_meta`, in name order.
        let (passed, members) = match self {
            WrittenRequest::ToolsCall {
                name,
                arguments,
                meta,
            } => (
                meta,
                [
                    arguments.map(|arguments| ("arguments", Param::Raw(arguments))),
                    Some(("name", Param::Text(name))),
                ],
            ),
            WrittenRequest::ToolsList { cursor } => (
                None,
                [cursor.map(|cursor| ("cursor", Param::Text(cursor))), None],
            ),
            WrittenRequest::ServerDiscover => (None, [None, None]),
        };
        let meta = Meta { passed, envelope };
        request(id, self.method(), meta, &members)
    }
}

/// What `params` holds besides `_meta`.
#[derive(Debug, Clone, Copy)]
enum Param<'a> {
    /// A string, escaped as JSON.
    Text(&'a str),
    /// Pass-through bytes, written as they are (a `tools/call`'s `arguments`).
    Raw(&'a RawJson),
}

/// What `params._meta` holds.
#[derive(Debug, Clone, Copy)]
struct Meta<'a> {
    /// The caller's members (a `tools/call`'s `_meta`, passed through).
    passed: Option<&'a Map<String, Value>>,
    /// Whether the 2026-07-28 envelope (protocol version, client capabilities and client info)
    /// is added; its members replace the caller's of the same names.
    envelope: bool,
}

/// One member of the 2026-07-28 envelope.
enum EnvelopeMember {
    Capabilities,
    ClientInfo,
    ProtocolVersion,
}

/// The envelope's members in name order.
const ENVELOPE: [(&str, EnvelopeMember); 3] = [
    (mcp::META_CLIENT_CAPABILITIES, EnvelopeMember::Capabilities),
    (mcp::META_CLIENT_INFO, EnvelopeMember::ClientInfo),
    (mcp::META_PROTOCOL_VERSION, EnvelopeMember::ProtocolVersion),
];

/// The bytes of a request with id `id` (the client's counter) and `params` holding `_meta`
/// (when `meta` has anything) and the `members` present, which must be given in name order,
/// each name after `_meta` (`arguments`, `cursor`, `name`: every name [`WrittenRequest`] gives).
fn request(
    id: i64,
    method: &str,
    meta: Meta<'_>,
    members: &[Option<(&str, Param<'_>)>],
) -> Vec<u8> {
    let members = || members.iter().flatten();
    let carried: usize = members()
        .map(|(name, param)| {
            name.len()
                + match param {
                    Param::Text(text) => text.len(),
                    Param::Raw(raw) => raw.as_str().len(),
                }
        })
        .sum();
    // Room for the envelope and the fixed text, so that the common request is one allocation.
    let mut out = Vec::with_capacity(256 + method.len() + carried + 8 * members().count());
    out.extend_from_slice(b"{\"id\":");
    // Writing into a `Vec` cannot fail.
    let _ = write!(out, "{id}");
    out.extend_from_slice(b",\"jsonrpc\":\"2.0\",\"method\":");
    write_string(&mut out, method);
    out.extend_from_slice(b",\"params\":{");
    let mut first = true;
    if meta.envelope || meta.passed.is_some() {
        out.extend_from_slice(b"\"_meta\":");
        write_meta(&mut out, meta);
        first = false;
    }
    for (name, param) in members() {
        if !first {
            out.push(b',');
        }
        first = false;
        write_string(&mut out, name);
        out.push(b':');
        match param {
            Param::Text(text) => write_string(&mut out, text),
            Param::Raw(raw) => out.extend_from_slice(raw.as_bytes()),
        }
    }
    out.extend_from_slice(b"}}");
    out
}

/// `_meta`: the caller's members and the envelope's merged in name order.
fn write_meta(out: &mut Vec<u8>, meta: Meta<'_>) {
    let envelope: &[(&str, EnvelopeMember)] = if meta.envelope { &ENVELOPE } else { &[] };
    let mut envelope = envelope.iter().peekable();
    let mut first = true;
    let mut separator = |out: &mut Vec<u8>| {
        if !first {
            out.push(b',');
        }
        first = false;
    };
    out.push(b'{');
    for (name, value) in meta.passed.into_iter().flat_map(order::members) {
        while let Some((member, which)) = envelope.next_if(|(member, _)| *member < name.as_str()) {
            separator(out);
            write_envelope_member(out, member, which);
        }
        if envelope_has(meta.envelope, name) {
            // The envelope's member of this name, still to come, replaces the caller's.
            continue;
        }
        separator(out);
        write_string(out, name);
        out.push(b':');
        // A `Value` always serializes (its member names are strings).
        let _ = serde_json::to_writer(&mut *out, &Sorted(value));
    }
    for (member, which) in envelope {
        separator(out);
        write_envelope_member(out, member, which);
    }
    out.push(b'}');
}

/// Whether the envelope, when added, has a member `name` (which replaces the caller's).
fn envelope_has(envelope: bool, name: &str) -> bool {
    envelope && ENVELOPE.iter().any(|(member, _)| *member == name)
}

fn write_envelope_member(out: &mut Vec<u8>, name: &str, which: &EnvelopeMember) {
    write_string(out, name);
    out.push(b':');
    match which {
        EnvelopeMember::Capabilities => out.extend_from_slice(b"{}"),
        EnvelopeMember::ClientInfo => {
            out.extend_from_slice(b"{\"name\":");
            write_string(out, CLIENT_NAME);
            out.extend_from_slice(b",\"version\":");
            write_string(out, env!("CARGO_PKG_VERSION"));
            out.push(b'}');
        }
        EnvelopeMember::ProtocolVersion => {
            write_string(out, ProtocolVersion::V2026_07_28.as_str());
        }
    }
}

/// `text` as a JSON string, escaped as serde_json escapes it.
fn write_string(out: &mut Vec<u8>, text: &str) {
    // Writing a string into a `Vec` cannot fail.
    let _ = serde_json::to_writer(&mut *out, text);
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::super::client::{Negotiated, stamp};
    use super::*;
    use crate::mcp::{Message, Request, RequestId, methods};
    use proptest::prelude::*;
    use serde_json::json;

    /// The stamp of the requests still made as maps (`client::stamp`): the builder these bytes
    /// replaced stamped the requests of every call with it too.
    fn stamped_map(params: Map<String, Value>, envelope: bool) -> Map<String, Value> {
        let negotiated = if envelope {
            Negotiated::Stateless
        } else {
            Negotiated::Session {
                version: ProtocolVersion::V2025_11_25,
                session_id: None,
            }
        };
        stamp(&negotiated, methods::TOOLS_CALL, params).0
    }

    /// The `tools/call` as the builder before this module wrote it: a `Value` tree serialized
    /// by `Message::to_vec`, the arguments spliced in.
    fn tools_call_as_before(
        id: i64,
        name: &str,
        arguments: Option<&RawJson>,
        meta: Option<&Map<String, Value>>,
        envelope: bool,
    ) -> Vec<u8> {
        let mut params = Map::new();
        params.insert("name".to_owned(), Value::String(name.to_owned()));
        if let Some(meta) = meta {
            params.insert("_meta".to_owned(), Value::Object(meta.clone()));
        }
        Message::Request(Request {
            id: RequestId::Number(id),
            method: methods::TOOLS_CALL.to_owned(),
            params: Some(stamped_map(params, envelope)),
            arguments: arguments.cloned(),
        })
        .to_vec()
    }

    fn as_before(id: i64, method: &str, params: Map<String, Value>, envelope: bool) -> Vec<u8> {
        let params = Some(stamped_map(params, envelope));
        Message::Request(Request::new(RequestId::Number(id), method, params)).to_vec()
    }

    fn tools_list(id: i64, cursor: Option<&str>, envelope: bool) -> Vec<u8> {
        WrittenRequest::ToolsList { cursor }.to_bytes(id, envelope)
    }

    /// The largest integer the strict reader keeps, 2^53 − 1.
    const SAFE: i64 = (1 << 53) - 1;

    /// Texts with controls, quotes, backslashes, multi-byte and astral characters, and the
    /// envelope's own member names.
    fn any_text() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z./:_-]{0,12}",
            "[\\u{0}-\\u{1f}\"\\\\/a-zé€😀\u{7f}\u{2028}]{0,24}",
            Just(mcp::META_CLIENT_INFO.to_owned()),
            Just(mcp::META_PROTOCOL_VERSION.to_owned()),
            Just(mcp::META_CLIENT_CAPABILITIES.to_owned()),
            Just("io.modelcontextprotocol/other".to_owned()),
        ]
    }

    fn any_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            // Integers the strict reader keeps (the client's `_meta` was read by it).
            (-SAFE..=SAFE).prop_map(Value::from),
            (-1e300f64..1e300).prop_map(|n| json!(n)),
            any_text().prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                proptest::collection::vec((any_text(), inner), 0..4)
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        })
    }

    /// Arguments as a client may write them: whitespace, escapes and numbers serde_json would
    /// rewrite (`1E+2`, an integer beyond 2^53, `-0`), which must reach the upstream as written.
    fn any_arguments() -> impl Strategy<Value = Option<RawJson>> {
        prop_oneof![
            Just(None),
            Just(Some(r#"{ "n": 1E+2, "big": 9007199254740993, "z": -0 }"#)),
            Just(Some(r#"{"t":"\u00e9\ud83d\ude00\/","e":{}}"#)),
            Just(Some("{}")),
        ]
        .prop_map(|text| text.map(|text| RawJson::from_slice(text.as_bytes()).unwrap()))
        .boxed()
        .prop_union(
            proptest::collection::vec((any_text(), any_value()), 0..5)
                .prop_map(|members| {
                    let value = Value::Object(members.into_iter().collect());
                    Some(RawJson::from_value(&value))
                })
                .boxed(),
        )
    }

    fn any_meta() -> impl Strategy<Value = Option<Map<String, Value>>> {
        proptest::option::of(
            proptest::collection::vec((any_text(), any_value()), 0..6)
                .prop_map(|members| members.into_iter().collect()),
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// The bytes are those the `Value` builder wrote (so they read as the same `Value`), in
        /// both generations, with and without arguments and `_meta`.
        #[test]
        fn tools_call_bytes_equal_the_value_builders(
            id in -SAFE..=SAFE,
            name in any_text(),
            arguments in any_arguments(),
            meta in any_meta(),
            envelope in any::<bool>(),
        ) {
            let call = WrittenRequest::ToolsCall {
                name: &name,
                arguments: arguments.as_ref(),
                meta: meta.as_ref(),
            };
            let written = call.to_bytes(id, envelope);
            let before = tools_call_as_before(id, &name, arguments.as_ref(), meta.as_ref(), envelope);
            prop_assert_eq!(String::from_utf8(written.clone()).unwrap(), String::from_utf8(before.clone()).unwrap());
            let read: Value = serde_json::from_slice(&written).unwrap();
            prop_assert_eq!(read, serde_json::from_slice::<Value>(&before).unwrap());
            // And the gateway's own strict reader takes it, arguments as they were written.
            let Message::Request(request) = Message::from_slice(&written).unwrap() else {
                panic!("not a request")
            };
            prop_assert_eq!(request.arguments, arguments);
            let params = request.params.unwrap();
            prop_assert_eq!(params["name"].as_str(), Some(name.as_str()));
        }

        #[test]
        fn tools_list_and_discover_bytes_equal_the_value_builders(
            id in any::<i64>(),
            cursor in proptest::option::of(any_text()),
            envelope in any::<bool>(),
        ) {
            let mut params = Map::new();
            if let Some(cursor) = &cursor {
                params.insert("cursor".to_owned(), Value::String(cursor.clone()));
            }
            prop_assert_eq!(
                String::from_utf8(tools_list(id, cursor.as_deref(), envelope)).unwrap(),
                String::from_utf8(as_before(id, methods::TOOLS_LIST, params, envelope)).unwrap()
            );
            prop_assert_eq!(
                String::from_utf8(WrittenRequest::ServerDiscover.to_bytes(id, envelope)).unwrap(),
                String::from_utf8(as_before(id, methods::SERVER_DISCOVER, Map::new(), envelope))
                    .unwrap()
            );
        }
    }

    #[test]
    fn a_stateless_call_carries_the_envelope_and_the_arguments_as_written() {
        let arguments = RawJson::from_slice(br#"{"x": 1E+2}"#).unwrap();
        let mut meta = Map::new();
        meta.insert("progressToken".to_owned(), json!("p\"1"));
        // The envelope's member replaces the caller's.
        meta.insert(mcp::META_CLIENT_INFO.to_owned(), json!({"name": "other"}));
        let call = WrittenRequest::ToolsCall {
            name: "wetter-zürich",
            arguments: Some(&arguments),
            meta: Some(&meta),
        };
        let written = call.to_bytes(7, true);
        assert_eq!(
            String::from_utf8(written).unwrap(),
            format!(
                r#"{{"id":7,"jsonrpc":"2.0","method":"tools/call","params":{{"_meta":{{"io.modelcontextprotocol/clientCapabilities":{{}},"io.modelcontextprotocol/clientInfo":{{"name":"toolgate","version":"{}"}},"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":"p\"1"}},"arguments":{{"x": 1E+2}},"name":"wetter-zürich"}}}}"#,
                env!("CARGO_PKG_VERSION")
            )
        );
        let call = WrittenRequest::ToolsCall {
            name: "a\u{1}",
            arguments: None,
            meta: None,
        };
        let written = call.to_bytes(-3, false);
        assert_eq!(
            String::from_utf8(written).unwrap(),
            r#"{"id":-3,"jsonrpc":"2.0","method":"tools/call","params":{"name":"a\u0001"}}"#
        );
        assert_eq!(
            String::from_utf8(tools_list(2, None, false)).unwrap(),
            r#"{"id":2,"jsonrpc":"2.0","method":"tools/list","params":{}}"#
        );
    }
}
