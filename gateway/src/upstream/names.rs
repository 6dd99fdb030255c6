//! The MCP header names as `http::HeaderName` values (lowercase, as `HeaderName` stores them).

use http::HeaderName;

pub(super) const MCP_SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
pub(super) const MCP_PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
pub(super) const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
pub(super) const MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");
