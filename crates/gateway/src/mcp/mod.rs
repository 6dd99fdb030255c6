//! `mcp` (in progress).
