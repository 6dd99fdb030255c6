//! The tamper-evident audit log (DESIGN.md §5, "Audit"): one JSON line per decision, each
//! entry hash-chained to the one before it, durable before the client is answered.
//!
//! # Format
//!
//! Every line is one JSON object. Its `hash` is `sha256:<hex>` of the RFC 8785 form of the
//! entry without `hash`; its `prev` is the `hash` of the line before it, and the first line's
//! `prev` is the measurement of the catalog the log was started with; `seq` counts from 0. A
//! verifier needs nothing but a JCS implementation and SHA-256:
//!
//! ```text
//! {"seq":1,"time":"2026-11-30T08:40:50.123456Z","event":"tools/call","tool":"wiki.ask",
//!  "upstream_name":"ask_wiki_question","upstream_url":"https://127.0.0.1:8443/mcp",
//!  "identity":{"fingerprints":["SHA256:…"],"spiffe_id":null},
//!  "expected_definition":"sha256:…","observed_definition":"sha256:…",
//!  "decision":"definition_mismatch","detail":"…","arguments_digest":"sha256:…",
//!  "session_id":"…","request_id":7,"latency_us":812,"prev":"sha256:…","hash":"sha256:…"}
//! ```
//!
//! (one line in the file). `event` is `tools/call` for a decision (`decision` is `allowed` or a
//! [`DenialReason`] string) or `gateway_started` for the start of a gateway run. Arguments are
//! recorded as the digest of their RFC 8785 form ([`arguments_digest`]), never as values.
//!
//! # Decisions
//!
//! - **Durability.** [`AuditLog::record`] returns after the entry is written and
//!   `fdatasync`ed. One writer thread takes every entry that arrived during the previous sync
//!   and commits them with one write and one sync (group commit).
//! - **Restarts.** Every [`AuditLog::open`] appends a `gateway_started` entry carrying the
//!   catalog measurement now in force (`catalog`) and the one in force before
//!   (`previous_catalog`, `null` for a new log). An existing log is verified first and continued
//!   from its last `hash`; the chain's first `prev` stays the first catalog's measurement, so a
//!   restart with another catalog shows as a `gateway_started` entry whose two measurements
//!   differ.
//! - **Torn last line.** A crash during a write can leave a last line without its newline. No
//!   client was answered for it (answers wait for the sync). [`verify_file`] reports it as
//!   [`ChainProblem::TornLine`], and [`AuditLog::open`] refuses to start with
//!   [`AuditError::TornTail`], which gives the exact byte length to cut the file to: the gateway
//!   never cuts evidence by itself.
//! - **Failures.** After a failed write or sync nothing more is written and every later
//!   [`AuditLog::record`] fails; the caller refuses the call rather than answer it unrecorded.
//! - **Limits.** The chain shows an entry that was edited, removed, inserted or reordered, but
//!   not the removal of the last entries: compare [`ChainSummary::last_hash`] with a copy kept
//!   elsewhere (the gateway logs it when it shuts down).
//!
//! # Example
//!
//! ```
//! use toolgate::audit::{AuditLog, CallRecord, Decision, DenialReason, arguments_digest, verify_file};
//! use jcs_digest::Digest;
//!
//! # tokio::runtime::Builder::new_current_thread().build()?.block_on(async {
//! let path = std::env::temp_dir().join(format!("toolgate-doc-{}.jsonl", std::process::id()));
//! # let _ = std::fs::remove_file(&path);
//! let catalog = Digest::of(b"the catalog measurement");
//! let log = AuditLog::open(&path, &catalog)?;
//! let receipt = log
//!     .record(CallRecord {
//!         arguments: Some(arguments_digest(&serde_json::json!({"q": "secret"}))?),
//!         detail: "the tool is not in the catalog".to_owned(),
//!         ..CallRecord::new("no.such.tool", Decision::Denied(DenialReason::ToolNotInCatalog))
//!     })
//!     .await?;
//! assert_eq!(receipt.seq(), 1); // seq 0 is the `gateway_started` entry
//! log.shutdown().await;
//!
//! let summary = verify_file(&path, Some(&catalog))?;
//! assert_eq!(summary.entries(), 2);
//! assert_eq!(summary.last_hash(), Some(receipt.hash()));
//! # std::fs::remove_file(&path)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod chain;
mod entry;
mod time;
mod verify;
mod writer;

pub use chain::AuditReceipt;
pub use entry::{
    CallRecord, Decision, DenialReason, ObservedIdentity, UnknownDecision, arguments_digest,
};
pub use verify::{
    BrokenEntry, ChainProblem, ChainSummary, GatewayStart, MAX_LINE_BYTES, VerifyError,
    verify_file, verify_reader,
};
pub use writer::{AuditError, AuditLog};
