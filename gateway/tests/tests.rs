//! Integration tests for the `toolgate` program, run as a real process.

#![allow(clippy::unwrap_used, clippy::expect_used)]

// Running the binary and reading its output; fixture paths.
mod util;

// `toolgate digest`: exact output in both forms, labels, input shapes, exit codes.
mod digest;

// `toolgate key`, `toolgate jcs` and `toolgate diff`.
mod key_jcs_diff;

// The upstream client against the demo upstream over real TLS: generations, pages, SSE, faults.
mod upstream;

// A gateway in front of a demo upstream, both real (TLS on loopback), for the e2e tests.
mod e2e_support;

// Every denial end to end (reason, code, audit entry) in both generations on both sides.
mod e2e_denials;

// Every connection a full handshake (tickets offered, connections closed); the identity of the carrying connection in the audit.
mod e2e_every_connection;

// The gateway over an HTTP/2 upstream: concurrent calls as streams of one connection, the identity per connection.
mod e2e_http2;

// Listings are bounded: bytes across pages, deadline, repeated cursor; a call waiting on one.
mod listing_bounds;

// Pass-through arguments and results byte for byte (both generations, JSON and SSE); definitions strict.
mod e2e_pass_through;

// Definition-check freshness: per-call listings, max-age reuse and its invalidation.
mod e2e_freshness;

// The audit chain after real runs, after a restart that appends, and after tampering.
mod e2e_audit;

// The client-facing transport: Host/Origin, -32020, sessions, sizes, pagination, stdio.
mod server_protocol;

// Client-side limits: header timeout, per-address connection and session caps, the byte budget,
// the Host checks, unsupported versions and malformed Mcp-Name, over raw loopback HTTP/1.1.
mod server_limits;

// `toolgate demo`, in-process.
mod e2e_demo;

// The audit log library: chain across records and restarts, tampering, no argument values, group commit.
mod audit;

// The definition check: mismatch, absent, doubled; max-age, invalidation, per-call, single flight.
mod definition_check;

// A tools/list page digested from its bytes: the tree path's digests, the listing's messages.
mod definition_pages;

// Third-party peers: our client against FastMCP, the Python client and inspector-cli against the
// demo upstream (ignored here: they need the peers; interop/run.sh runs them).
mod upstream_interop;

// The audit log's group commit led by its callers, and its preallocated file (blocks reserved
// ahead, released at shutdown; zeros a crash leaves accepted; torn tails).
mod audit_group;

// The audit log under `toolgate serve`: one writer per log, a full disk (tmpfs), --audit-key.
mod audit_serve;

// `toolgate audit verify`: exit codes 0/1/2, text and JSON, `--catalog`, tampered logs.
mod audit_cli;

// `toolgate demo` and `toolgate serve` as processes: exit codes, SIGTERM, stdio.
mod e2e_cli;

// `toolgate catalog check` and `toolgate identity` as processes (identity against a real TLS server).
mod catalog_identity_cli;

// SPIFFE identity end to end: an SVID upstream, spiffe_id bindings, bundles, serve --spiffe-bundle.
mod e2e_spiffe;

// `toolgate pin`, `catalog verify` and `catalog approve` as processes against the demo upstream over TLS.
mod lifecycle_cli;
// `toolgate pin -- COMMAND`, `catalog verify` and `catalog approve` on a local (stdio) server.
mod lifecycle_local;
// Local (stdio) upstreams with real processes: allowed calls, env and cwd, rug-pull, changed
// entrypoints, crash and restart, a call in flight when the child dies, serve's log and stop.
mod e2e_local;

// Bad local children with LocalUpstream alone: garbage, a 100 MB line, silence, exit at once
// and backoff, stderr flood, SIGTERM ignored; a check never outrun; files changed under a child.
mod e2e_local_children;

// Operating `toolgate serve` as a process: --metrics (exact counters, histograms, /healthz,
// /readyz 503 on a full disk), SIGHUP reloads (unchanged servers keep their connections and
// processes), --log-format json, --replica-name.
mod operations;

// Token signing keys made here (RSA, EC P-256, Ed25519), their JWKs, tokens minted with them.
mod token_keys;

// Who may call: bearer tokens (RS256, ES256, EdDSA minted here), every 401, RFC 9728 metadata,
// the principal in the audit, serve's refusal of an unauthenticated non-loopback listener.
mod e2e_auth;

// --jwks https://…: a real HTTPS JWKS server counting its requests; the fetch at start,
// rotation found by one refetch, one fetch per interval and per crowd, a failed refetch keeping
// the keys, and every way the first fetch fails refusing serve (exit 2, the URL and the cause).
mod e2e_jwks;

// Verified tokens held: the same principal again without a signature check, until exp; refusals
// never held; at most 1,024.
mod verified_tokens;

// Cedar authorization: the example policy, tools/list filtered, not_authorized audited with the
// deciding policies, a policy that does not parse refusing serve.
#[cfg(feature = "cedar")]
mod e2e_policy;

// `toolgate identity --command`: the resolved program and the entrypoint digests to pin.
mod identity_command;
