//! The `params._meta` envelope keys of 2026-07-28 and the `Mcp-Name` mirror rule
//! (RECIPE.md "Two protocol generations").

/// `params._meta` key carrying the request's protocol version (required in 2026-07-28; must
/// equal the `MCP-Protocol-Version` header).
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `params._meta` key carrying the client's capabilities object (required in 2026-07-28).
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `params._meta` key carrying the client's name and version (optional in 2026-07-28).
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// Result `_meta` key carrying the server's name and version (2026-07-28).
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// The `params` member a method's `Mcp-Name` header mirrors: `name` for `tools/call` and
/// `prompts/get`, `uri` for `resources/read`; `None` for methods without one.
pub fn name_bearing_param(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    }
}
