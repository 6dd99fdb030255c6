//! Pin MCP upstream servers by TLS key, certificate or SPIFFE ID, enforced inside the rustls handshake.
