//! The MCP wire pieces both sides of the gateway share: protocol versions and their two
//! generations, header names, JSON-RPC error codes, the JSON-RPC message type with strict
//! parsing, the `params._meta` envelope of 2026-07-28, header-value encoding, and an SSE
//! (`text/event-stream`) parser (docs/design.md §5 "Clients" and "Upstreams").
//!
//! Parsing checks the whole message for well-formedness ([`check_well_formed`]: a message with
//! a duplicate member name is refused, never resolved to the first or last copy, because the
//! gateway is a security boundary and two readers of the same bytes must not see two different
//! requests), reads what is interpreted strictly ([`jcs_digest::parse_strict`]), and carries
//! the pass-through parts (tool-call arguments and results) as received ([`RawJson`]).

mod header_value;
mod jsonrpc;
mod meta;
mod raw;
mod sse;
mod version;
mod well_formed;

pub use self::header_value::{decode_header_value, encode_header_value};
pub use self::jsonrpc::{
    ErrorObject, Message, MessageError, MessageErrorKind, Notification, Request, RequestId,
    Response, ResponsePayload,
};
pub use self::meta::{
    META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION, META_SERVER_INFO,
    name_bearing_param,
};
pub use self::raw::RawJson;
pub use self::sse::{SseError, SseEvent, SseParser, encode_sse_event, parse_sse_messages};
pub use self::version::{Generation, ProtocolVersion, UnknownProtocolVersion};
pub use self::well_formed::{
    DEFAULT_MAX_DEPTH, WellFormedError, WellFormedErrorKind, check_well_formed,
};

/// HTTP header names of MCP Streamable HTTP. HTTP header names are case-insensitive; these are
/// the spellings of the specification, and `http::HeaderName` parsing lowercases them.
pub mod headers {
    /// The session id (session generation: 2025-03-26 to 2025-11-25), issued by the server in
    /// the `initialize` response and echoed by the client on every later request.
    pub const MCP_SESSION_ID: &str = "Mcp-Session-Id";
    /// The negotiated protocol version, on every request after `initialize` (2025-06-18 and
    /// later), and on every request of 2026-07-28, where it must equal
    /// `params._meta["io.modelcontextprotocol/protocolVersion"]`.
    pub const MCP_PROTOCOL_VERSION: &str = "MCP-Protocol-Version";
    /// 2026-07-28: the JSON-RPC method, which must equal the body's `method`.
    pub const MCP_METHOD: &str = "Mcp-Method";
    /// 2026-07-28: for `tools/call` and `prompts/get` the `name` parameter, for
    /// `resources/read` the `uri` ([`super::name_bearing_param`]), encoded with
    /// [`super::encode_header_value`].
    pub const MCP_NAME: &str = "Mcp-Name";
    /// The SSE resumption header (GET streams); the gateway does not resume streams.
    pub const LAST_EVENT_ID: &str = "Last-Event-ID";
}

/// JSON-RPC method names the gateway speaks or recognizes.
pub mod methods {
    /// Session generation: the handshake request.
    pub const INITIALIZE: &str = "initialize";
    /// Session generation: the client's notification that the handshake is complete.
    pub const NOTIFICATIONS_INITIALIZED: &str = "notifications/initialized";
    /// 2026-07-28: the stateless capability probe that replaces `initialize`.
    pub const SERVER_DISCOVER: &str = "server/discover";
    /// Liveness check (session generation).
    pub const PING: &str = "ping";
    /// List tools, one page per request (`cursor` / `nextCursor`).
    pub const TOOLS_LIST: &str = "tools/list";
    /// Call a tool.
    pub const TOOLS_CALL: &str = "tools/call";
    /// The server's signal that its tool list changed.
    pub const NOTIFICATIONS_TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
    /// Cancellation of an in-flight request.
    pub const NOTIFICATIONS_CANCELLED: &str = "notifications/cancelled";
}

/// JSON-RPC error codes: those of JSON-RPC 2.0 and the MCP-specific ones.
pub mod error_codes {
    /// Invalid JSON (including what the strict reader refuses: duplicate members, …).
    pub const PARSE_ERROR: i64 = -32700;
    /// Valid JSON, but not a valid JSON-RPC request.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist or is not offered.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid method parameters.
    pub const INVALID_PARAMS: i64 = -32602;
    /// Internal error. The gateway also uses it for its denials, with `error.data.reason`.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// 2026-07-28: an `MCP-Protocol-Version`, `Mcp-Method` or `Mcp-Name` header disagrees with
    /// the body.
    pub const HEADER_MISMATCH: i64 = -32020;
    /// 2026-07-28: a capability the server requires was not declared by the client.
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
    /// 2026-07-28: the requested protocol version is not served; `data.supported` lists those
    /// that are.
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
}
