//! Fold per-tool digests into one MCP tool-catalog digest, read tools/list documents, diff catalogs.
