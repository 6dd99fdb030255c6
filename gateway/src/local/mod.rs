//! Local (stdio) MCP upstreams: a process started from a command, spoken to with
//! newline-delimited JSON-RPC on its stdin and stdout (docs/design.md §3 "Local (stdio) upstreams").
//!
//! What identifies a local server is what will run: before every start, every file of its
//! `entrypoint_digests` is read and hashed ([`server_identity::EntrypointDigests::verify`]); a
//! file that changed or cannot be read is an `identity_mismatch` with the anchor `entrypoint`,
//! and nothing is started. The child gets exactly the configured environment (`env` plus the
//! `inherit_env` variables), runs in `cwd`, and its stderr goes to the gateway's log, one line
//! at a time, prefixed with the server's name, bounded and rate-limited.
//!
//! The conversation is the network client's: `server/discover` (2026-07-28) where the server
//! speaks it, otherwise `initialize` and `notifications/initialized`; every `tools/list` page;
//! `notifications/tools/list_changed` and the process exiting invalidate what was learned;
//! every request has a deadline. Requests are multiplexed by id: one reader task hands each
//! answer to the caller waiting for it.
//!
//! A process that exits is verified and started again on next use, with a doubling delay after
//! failed starts; calls in flight when it exits fail `upstream_unavailable`. On shutdown the
//! child's stdin is closed (the MCP way to ask a stdio server to exit), then it gets SIGTERM
//! (sent with `kill -TERM PID`, since the gateway has no unsafe code and the standard library
//! sends only SIGKILL), then SIGKILL, each after [`LocalOptions::stop_grace`]; a child whose
//! handle is dropped is killed (`kill_on_drop`) as the last resort.
//!
//! Misbehaving children get bounded outcomes: a line over
//! [`LocalOptions::max_response_bytes`] is read and discarded in bounded memory and fails every
//! request in flight (`upstream_error`, response too large); a line that is not JSON-RPC fails
//! every request in flight (`upstream_error`, malformed); silence hits the request deadline
//! (`upstream_unavailable`); a child that exits before its handshake is started again only
//! after the backoff delay; a stderr flood is cut to the rate limit; a child that ignores
//! SIGTERM gets SIGKILL.

mod child;
mod command;
mod lines;
mod options;
mod stderr;
mod supervisor;

pub use self::command::LocalCommand;
pub use self::options::LocalOptions;
pub use self::supervisor::{LocalStatus, LocalUpstream};
