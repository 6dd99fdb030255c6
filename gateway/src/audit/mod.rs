//! The tamper-evident audit log (docs/design.md §5, "Audit"): one JSON line per decision, each
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
//! [`DenialReason`] string), `gateway_started` for the start of a gateway run (with `replica`
//! when [`AuditOptions::replica`] names it), or `catalog_loaded` for a catalog reload
//! ([`AuditLog::record_catalog_loaded`]: `previous_catalog` and `catalog`). Arguments are
//! recorded as the digest of their RFC 8785 form, never as values ([`ArgumentsDigest`]):
//! `sha256:<hex>`, or `hmac-sha256:<hex>` keyed with [`AuditOptions::argument_key`]
//! (`toolgate serve --audit-key FILE`), so that low-entropy arguments cannot be found by
//! hashing guesses. Arguments are carried to the upstream as sent, so they need not have an
//! RFC 8785 form (an integer beyond ±(2^53−1)); then `arguments_digest` is `null` and an
//! `arguments_not_digested` member says why.
//!
//! # Decisions
//!
//! - **Durability.** [`AuditLog::record`] returns after the entry is written and
//!   `fdatasync`ed. Group commit without a writer thread: the first caller that finds no write
//!   in progress leads, writes every entry queued so far with one write and one sync on its own
//!   thread, answers them and hands the lead to a caller that queued meanwhile; a lone call
//!   costs no hand-off between threads.
//! - **Preallocation.** The file's blocks are reserved in steps ahead of the entries
//!   ([`AuditOptions::preallocate`], default [`DEFAULT_PREALLOCATE`]; `fallocate` keeping the
//!   file's size, so readers see only entries; or, behind [`AuditOptions::prewritten_zeros`],
//!   written as zeros, so that a sync does not also commit a new length, while readers that
//!   follow the file see them), and released at shutdown. Zeros after the last
//!   entry, which some file systems show after a crash inside allocated space, are accepted by
//!   the verifier and written over by the next gateway ([`ChainSummary::preallocated_bytes`]);
//!   zeros mixed with other bytes there are a torn tail like a torn last line
//!   ([`ChainProblem::TornPreallocatedTail`]).
//! - **One writer.** [`AuditLog::open`] takes an exclusive lock (`flock`) on the file and holds
//!   it until [`AuditLog::shutdown`] or until the log is dropped; a second gateway on the same
//!   file is refused with [`AuditError::Locked`], naming the holder's pid as `/proc/locks`
//!   shows it.
//! - **Deadline.** An entry not written and synced within [`AuditOptions::write_deadline`]
//!   (default [`DEFAULT_WRITE_DEADLINE`]) fails its record with [`AuditError::Deadline`]: the
//!   call is refused (-32603) and not forwarded, and the log refuses every later record. When
//!   the late write finishes, its entries are cut from the file (their calls were refused).
//! - **Restarts.** Every [`AuditLog::open`] appends a `gateway_started` entry carrying the
//!   catalog measurement now in force (`catalog`) and the one in force before
//!   (`previous_catalog`, `null` for a new log). An existing log is verified first and continued
//!   from its last `hash`; the chain's first `prev` stays the first catalog's measurement, so a
//!   restart with another catalog shows as a `gateway_started` entry whose two measurements
//!   differ. A reload shows as a `catalog_loaded` entry, whose `previous_catalog` must be the
//!   catalog in force ([`ChainSummary::catalog_in_force`]).
//! - **Torn last line.** A crash during a write can leave a last line without its newline. No
//!   client was answered for it (answers wait for the sync). [`verify_file`] reports it as
//!   [`ChainProblem::TornLine`], and [`AuditLog::open`] refuses to start with
//!   [`AuditError::TornTail`], which gives the exact byte length to cut the file to: a tail found
//!   at start is evidence of a crash, and the gateway does not cut it by itself (it only cuts
//!   back its own write that it saw fail, below).
//! - **Failures.** After a failed write or sync (a full disk) the file is cut back to the end
//!   of its last complete entry, so it still verifies, and the gateway's log says so (with the
//!   `truncate` command to run if the cut itself failed). Nothing more is written and every
//!   later [`AuditLog::record`] fails; the caller refuses the call rather than answer it
//!   unrecorded.
//! - **Limits.** The chain shows an entry that was edited, removed, inserted or reordered, but
//!   not the removal of the last entries: compare [`ChainSummary::last_hash`] with a copy kept
//!   elsewhere (the gateway logs it when it shuts down).
//!
//! # Example
//!
//! ```
//! use catalog_store::Catalog;
//! use toolgate::audit::{AuditLog, CallRecord, Decision, DenialReason, verify_file};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_time().build()?.block_on(async {
//! let path = std::env::temp_dir().join(format!("toolgate-doc-{}.jsonl", std::process::id()));
//! # let _ = std::fs::remove_file(&path);
//! let catalog = Catalog::from_slice(br#"[{
//!     "tool_name": "crm.query", "upstream_name": "query",
//!     "server": {"url": "https://crm.example.com/mcp",
//!                "tls_fingerprint": "SHA256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"},
//!     "approved_definition": {"description": "Query CRM records", "input_schema": {"type": "object"}},
//!     "definition_hash": "sha256:d27e33c778705256484428f8af088870389f4e23b9cd2265971c03d9142f38d8",
//!     "added_at": "2026-06-01T00:00:00Z", "approved_by": "security@example.com"
//! }]"#)?;
//! let log = AuditLog::open(&path, catalog.measurement())?;
//! let receipt = log
//!     .record(CallRecord {
//!         arguments: Some(log.arguments_digest(&serde_json::json!({"q": "secret"}))),
//!         detail: "the tool is not in the catalog".to_owned(),
//!         ..CallRecord::new("no.such.tool", Decision::Denied(DenialReason::ToolNotInCatalog))
//!     })
//!     .await?;
//! assert_eq!(receipt.seq(), 1); // seq 0 is the `gateway_started` entry
//! log.shutdown().await;
//!
//! let summary = verify_file(&path, Some(&catalog.measurement().digest()))?;
//! assert_eq!(summary.entries(), 2);
//! assert_eq!(summary.last_hash(), Some(receipt.hash()));
//! # std::fs::remove_file(&path)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod arguments;
mod chain;
mod entry;
mod lock;
mod members;
mod time;
mod verify;
mod writer;

pub use arguments::{ArgumentKey, ArgumentKeyError, ArgumentsDigest, MIN_ARGUMENT_KEY_BYTES};
pub use chain::AuditReceipt;
pub use entry::{
    CallRecord, Decision, DenialReason, ObservedIdentity, UnknownDecision, arguments_digest,
};
pub use verify::{
    BrokenEntry, ChainProblem, ChainSummary, GatewayStart, MAX_LINE_BYTES, VerifyError,
    verify_file, verify_reader,
};
pub use writer::{
    AuditError, AuditLog, AuditOptions, DEFAULT_PREALLOCATE, DEFAULT_WRITE_DEADLINE, SyncObserver,
};
