//! RFC 8785 canonical JSON, a strict JSON reader, and the MCP tool definition digest.
