//! The audit log writer: entries are committed in groups, each led by the first caller that
//! waits, so that every entry is on disk before its call is answered, a lone call is written by
//! its own thread, and throughput stays high under concurrency.

use std::fs::{File, OpenOptions};
use std::io::{self, BufReader};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use catalog_store::CatalogMeasurement;
use jcs_digest::{CanonicalizeError, Digest};
use serde_json::Value;
use tokio::runtime::RuntimeFlavor;
use tokio::sync::{Notify, oneshot};

use crate::audit::arguments::{ArgumentKey, ArgumentsDigest};
use crate::audit::chain::{AuditReceipt, ChainHead};
use crate::audit::entry::{CallRecord, call_members, catalog_loaded_members, started_members};
use crate::audit::lock::{LockFailure, lock_exclusive};
use crate::audit::members::EntryMembers;
use crate::audit::verify::{BrokenEntry, ChainProblem, VerifyError, verify_reader};

/// How much longer than the write deadline a shutdown waits for a group in progress to finish
/// (a late group is cut from the file before its leader lets go).
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// The default bound on one group's write and sync ([`AuditOptions::write_deadline`]).
pub const DEFAULT_WRITE_DEADLINE: Duration = Duration::from_secs(10);

/// How an [`AuditLog`] writes: the deadline of a write and sync, and the key of argument
/// digests.
#[derive(Clone, Debug)]
pub struct AuditOptions {
    write_deadline: Duration,
    argument_key: Option<ArgumentKey>,
    sync_observer: Option<SyncObserver>,
    replica: Option<String>,
    preallocate: u64,
    reservation: Reservation,
}

/// How the blocks ahead of the entries are reserved ([`AuditOptions::preallocate`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reservation {
    /// `fallocate` keeping the file's length: readers see only entries.
    KeepLength,
    /// Zeros written past the entries: a sync need not commit a new length
    /// ([`AuditOptions::prewritten_zeros`]).
    WrittenZeros,
}

/// Told how long each group commit (write and sync) took: `toolgate serve --metrics`.
#[derive(Clone)]
pub struct SyncObserver(Arc<dyn Fn(Duration) + Send + Sync>);

impl SyncObserver {
    /// Calls `observe` with the duration of every group commit, on the thread of the caller
    /// that led it (keep it short).
    pub fn new(observe: impl Fn(Duration) + Send + Sync + 'static) -> SyncObserver {
        SyncObserver(Arc::new(observe))
    }
}

impl std::fmt::Debug for SyncObserver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SyncObserver")
    }
}

impl AuditOptions {
    /// [`DEFAULT_WRITE_DEADLINE`], unkeyed (SHA-256) argument digests.
    pub fn new() -> AuditOptions {
        AuditOptions {
            write_deadline: DEFAULT_WRITE_DEADLINE,
            argument_key: None,
            sync_observer: None,
            replica: None,
            preallocate: DEFAULT_PREALLOCATE,
            reservation: Reservation::KeepLength,
        }
    }

    /// A record whose entry is not written and synced within `deadline` of its submission
    /// fails ([`AuditError::Deadline`]), and so does every later one: the caller refuses the
    /// call (docs/design.md §5, fail closed). The entries of that late group are cut from the file
    /// when the write finishes, since their calls were refused.
    pub fn write_deadline(&mut self, deadline: Duration) -> &mut Self {
        self.write_deadline = deadline;
        self
    }

    /// Argument digests become HMAC-SHA-256 under `key` ([`AuditLog::arguments_digest`]).
    pub fn argument_key(&mut self, key: ArgumentKey) -> &mut Self {
        self.argument_key = Some(key);
        self
    }

    /// `observer` is told the duration of every group commit after the `gateway_started`
    /// entry.
    pub fn sync_observer(&mut self, observer: SyncObserver) -> &mut Self {
        self.sync_observer = Some(observer);
        self
    }

    /// The `gateway_started` entry names the replica that writes the log (`replica`), so that
    /// the logs of several replicas behind one load balancer are told apart.
    pub fn replica(&mut self, name: impl Into<String>) -> &mut Self {
        self.replica = Some(name.into());
        self
    }

    /// The file's blocks are reserved in steps of `bytes` ahead of the entries (`fallocate`
    /// with `FALLOC_FL_KEEP_SIZE`; default [`DEFAULT_PREALLOCATE`]; 0 turns it off), so that an
    /// append seldom allocates a block and its sync seldom commits an allocation with it. The
    /// file's length stays the entries' length: readers of the log see no tail (unless the
    /// steps are [`prewritten_zeros`](Self::prewritten_zeros)).
    pub fn preallocate(&mut self, bytes: u64) -> &mut Self {
        self.preallocate = bytes;
        self
    }

    /// The steps of [`preallocate`](Self::preallocate) are written as zeros instead (`on`;
    /// off by default), so that an append writes over bytes the file already has and its
    /// `fdatasync` does not also commit a new file length: on the ext4 disk of BENCHMARKS.md
    /// ("The audit sync on the caller's worker, and zeros written ahead of the audit entries")
    /// a sync takes about a third less. **The cost
    /// is the file's readers while the gateway runs:** the file ends in up to one step of zeros,
    /// so a reader that follows it by its length (`tail -f`, a log shipper) reads zeros and then
    /// misses the entries written over them. [`AuditLog::shutdown`] cuts the zeros off;
    /// [`verify_file`](crate::audit::verify_file) accepts them, after a crash too. Use it where
    /// only the gateway and `toolgate audit verify` read the log.
    pub fn prewritten_zeros(&mut self, on: bool) -> &mut Self {
        self.reservation = if on {
            Reservation::WrittenZeros
        } else {
            Reservation::KeepLength
        };
        self
    }
}

impl Default for AuditOptions {
    fn default() -> Self {
        AuditOptions::new()
    }
}

/// Why the audit log cannot record.
#[non_exhaustive]
#[derive(Clone, Debug, thiserror::Error)]
pub enum AuditError {
    /// The file could not be opened, read, written or synced.
    #[error(
        "cannot {action} the audit log {path}: {source}; check the disk and the file's permissions"
    )]
    Io {
        /// `open`, `read`, `write` or `sync`.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: Arc<io::Error>,
    },
    /// The existing log does not verify: the gateway will not append to a broken chain.
    #[error(
        "the audit log {path} does not verify, so the gateway will not append to it: {entry}; \
         run `toolgate audit verify {path}`, keep the file as evidence, and start with a new log"
    )]
    Broken {
        /// The file.
        path: PathBuf,
        /// The first line that breaks the chain.
        entry: Box<BrokenEntry>,
    },
    /// The log ends in an incomplete line: the gateway stopped while writing it.
    #[error(
        "the audit log {path} ends in an incomplete line (line {line}, {torn_bytes} bytes from \
         byte {valid_bytes}): the gateway stopped while writing it, so no client was answered \
         for that entry; the {entries} entries before it verify. The gateway does not cut a log \
         by itself: save the tail (`tail -c {torn_bytes} {path}`), then cut it \
         (`truncate -s {valid_bytes} {path}`) and start again"
    )]
    TornTail {
        /// The file.
        path: PathBuf,
        /// The incomplete line's number.
        line: u64,
        /// The length of the verified part, where the incomplete line starts.
        valid_bytes: u64,
        /// The incomplete line's length.
        torn_bytes: u64,
        /// The number of verified entries before it.
        entries: u64,
    },
    /// Another process holds the log's lock: one gateway writes a log.
    #[error(
        "the audit log {path} is in use by {}: one gateway writes a log (two would break its \
         chain); stop that gateway, or give this one another --audit file",
        match holder {
            Some(pid) => format!("process {pid} (it holds the file's lock, per /proc/locks)"),
            None => "another process (it holds the file's lock; /proc/locks does not name it)".to_owned(),
        }
    )]
    Locked {
        /// The file.
        path: PathBuf,
        /// The pid of the process holding the lock, when known.
        holder: Option<u32>,
    },
    /// The entry was not written and synced within the deadline; the log refuses every later
    /// record.
    #[error(
        "the audit log {path} did not write and sync the entry within {deadline:?} (check the \
         disk); the call was refused, and the log refuses every later call"
    )]
    Deadline {
        /// The file.
        path: PathBuf,
        /// [`AuditOptions::write_deadline`].
        deadline: Duration,
    },
    /// An entry has no canonical form (not reachable with the texts and numbers the writer
    /// records; kept so that it can never panic).
    #[error("the audit entry has no canonical form: {0}")]
    Entry(#[from] CanonicalizeError),
    /// The log was shut down, or an earlier write or sync failed (after which nothing more is
    /// written: the state of the file's tail is unknown).
    #[error("the audit log {path} is closed{}", reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default())]
    Closed {
        /// The file.
        path: PathBuf,
        /// The failure that closed it, if one did.
        reason: Option<String>,
    },
}

/// The hash-chained audit log of docs/design.md §5, open for appending.
///
/// [`AuditLog::open`] verifies an existing log, then appends a `gateway_started` entry;
/// [`AuditLog::record`] returns once the entry is written and synced (`fdatasync`).
///
/// Group commit without a writer thread: the first caller that finds no write in progress
/// leads; it takes every entry queued so far (its own first among them), writes them with one
/// write and syncs them with one `fdatasync` on its own thread, answers them, and hands the
/// lead to a caller whose entry queued meanwhile. A lone caller therefore writes its own entry
/// with no hand-off to another thread; under concurrency the callers that arrive during a sync
/// share the next one. The write and sync block the leading caller's thread; only when recent
/// commits took more than a millisecond (a stalling disk), on a multi-threaded Tokio runtime,
/// inside `block_in_place`, so that the worker's other tasks move to another thread meanwhile.
///
/// The file's blocks are reserved ahead of the entries ([`AuditOptions::preallocate`]:
/// `fallocate` keeping the file's size), so that an append seldom allocates. The file's size
/// still grows with every append, so `fdatasync` still commits the new size; written zeros
/// ([`AuditOptions::prewritten_zeros`]) spare it that, at a cost to the file's readers.
/// [`verify_file`] accepts a tail of zeros after the last entry, which some file systems show
/// after a crash.
///
/// [`verify_file`]: crate::audit::verify_file
#[derive(Debug)]
pub struct AuditLog {
    path: PathBuf,
    state: Mutex<LogState>,
    /// Told when a leader lets go of the lead: what [`AuditLog::shutdown`] waits for.
    idle: Notify,
    counters: Counters,
    /// A running average of the group commits' durations, in nanoseconds.
    recent_commit: AtomicU64,
    sync_observer: Option<SyncObserver>,
    write_deadline: Duration,
    argument_key: Option<ArgumentKey>,
}

/// What the callers share, under one mutex that is never held across file I/O.
///
/// A leader answers a group `Ok` while holding it, and a caller whose deadline passed sets the
/// failure while holding it, so every entry is either answered `Ok` or cut from the file, never
/// both. The queue holds at most one entry per waiting caller (whose number the server
/// bounds), and the entries of callers that went away, which the next group writes.
#[derive(Debug, Default)]
struct LogState {
    failure: Option<String>,
    /// [`AuditLog::shutdown`] began: nothing more is queued.
    closing: bool,
    /// Some caller leads: it writes a group now, or has been handed the lead.
    leading: bool,
    queue: Vec<Queued>,
    next_ticket: u64,
    /// The file and the chain; a leader takes them for the time of its write, so that the
    /// mutex is not held meanwhile. `None` also once shut down (dropping the file releases
    /// its lock).
    file: Option<Box<LogFile>>,
}

#[derive(Debug, Default)]
struct Counters {
    entries: AtomicU64,
    syncs: AtomicU64,
}

/// One entry waiting for a group.
#[derive(Debug)]
struct Queued {
    entry: Entry,
    time: SystemTime,
    ticket: u64,
    /// How a waiting caller is told its answer or that it leads now; `None` for the leader's own
    /// entry, whose answer it takes from the group itself.
    reply: Option<oneshot::Sender<Turn>>,
}

/// Where [`AuditLog::enqueue`] left a caller.
enum Enqueued {
    Leads(u64),
    Follows(u64, oneshot::Receiver<Turn>),
}

#[derive(Debug)]
enum Turn {
    Answer(Result<AuditReceipt, AuditError>),
    Lead,
}

/// The open file and the chain's head, owned by whoever leads.
#[derive(Debug)]
struct LogFile {
    file: File,
    head: ChainHead,
    /// The end of the last complete, synced group: where the next group is written and where a
    /// failed write is cut back to.
    committed_len: u64,
    /// The end of the blocks reserved for the file (at least `committed_len`).
    reserved_end: u64,
    /// Bytes reserved ahead when a group would pass `reserved_end`; 0 when off (also after a
    /// failed attempt).
    preallocate: u64,
    reservation: Reservation,
    /// Reused by every group: the lines, the entries, their receipts.
    lines: Vec<u8>,
    batch: Vec<Queued>,
    receipts: Vec<Result<AuditReceipt, AuditError>>,
}

/// The default step of [`AuditOptions::preallocate`]: about 1,500 entries.
pub const DEFAULT_PREALLOCATE: u64 = 1 << 20;

fn lock_state(state: &Mutex<LogState>) -> MutexGuard<'_, LogState> {
    // A panic while holding it leaves consistent fields: keep using them.
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

impl AuditLog {
    /// Opens the log at `path` for a gateway serving the catalog measured by `catalog`, with
    /// [`AuditOptions::new`]; see [`AuditLog::open_with`].
    ///
    /// # Errors
    ///
    /// As [`AuditLog::open_with`].
    pub fn open(
        path: impl AsRef<Path>,
        catalog: &CatalogMeasurement,
    ) -> Result<AuditLog, AuditError> {
        AuditLog::open_with(path, catalog, &AuditOptions::new())
    }

    /// Opens the log at `path` for a gateway serving the catalog measured by `catalog`,
    /// creating it when it does not exist, and holds an exclusive lock on it until
    /// [`AuditLog::shutdown`] or until the log is dropped.
    ///
    /// A new log's first entry has `prev` = the measurement. An existing log is verified first
    /// and continued from its last `hash` (a tail of zeros after it, which a crash can leave, is
    /// written over); its first `prev` stays the first catalog's measurement. Either way a
    /// `gateway_started` entry is appended, naming this measurement and the one in force
    /// before (so a restart with another catalog is on the record), and synced before this
    /// returns. This blocks on file I/O: call it before serving, or in `spawn_blocking`.
    ///
    /// # Errors
    ///
    /// [`AuditError::Locked`] when another gateway holds the log, [`AuditError::Broken`] when
    /// the log does not verify, [`AuditError::TornTail`] when it ends in an incomplete line
    /// (neither is repaired silently), [`AuditError::Io`].
    pub fn open_with(
        path: impl AsRef<Path>,
        catalog: &CatalogMeasurement,
        options: &AuditOptions,
    ) -> Result<AuditLog, AuditError> {
        let catalog = catalog.digest();
        let catalog = &catalog;
        let path = path.as_ref().to_path_buf();
        let io_error = |action, source| AuditError::Io {
            action,
            path: path.clone(),
            source: Arc::new(source),
        };
        let existed = path.exists();
        // Not `append`: entries are written at the end of the chain, which is before the end
        // of the file when a crash left zeros after it.
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| io_error("open", e))?;
        match lock_exclusive(&file) {
            Ok(()) => {}
            Err(LockFailure::Held(holder)) => return Err(AuditError::Locked { path, holder }),
            Err(LockFailure::Io(error)) => return Err(io_error("lock", error)),
        }
        if !existed {
            sync_parent_directory(&path).map_err(|e| io_error("sync the directory of", e))?;
        }
        let summary = match verify_reader(BufReader::new(&file), None) {
            Ok(summary) => summary,
            Err(VerifyError::Io { source, .. }) => return Err(io_error("read", source)),
            Err(VerifyError::Broken(BrokenEntry {
                line,
                offset,
                problem:
                    ChainProblem::TornLine { length } | ChainProblem::TornPreallocatedTail { length },
                ..
            })) => {
                return Err(AuditError::TornTail {
                    path,
                    line,
                    valid_bytes: offset,
                    torn_bytes: length,
                    entries: line - 1,
                });
            }
            Err(VerifyError::Broken(entry)) => {
                return Err(AuditError::Broken {
                    path,
                    entry: Box::new(entry),
                });
            }
        };

        let previous_catalog = summary.catalog_in_force();
        let detail = match previous_catalog {
            None => "new audit log".to_owned(),
            Some(previous) if previous == *catalog => {
                format!(
                    "appending after {} entries; same catalog",
                    summary.entries()
                )
            }
            Some(_) => format!(
                "appending after {} entries; the catalog changed",
                summary.entries()
            ),
        };
        let mut log = Box::new(LogFile {
            file,
            head: ChainHead::new(summary.entries(), summary.last_hash().unwrap_or(*catalog)),
            committed_len: summary.bytes(),
            reserved_end: summary.bytes(),
            preallocate: options.preallocate,
            reservation: options.reservation,
            lines: Vec::with_capacity(64 * 1024),
            batch: Vec::new(),
            receipts: Vec::new(),
        });
        log.head.append(
            &started_members(
                SystemTime::now(),
                catalog,
                previous_catalog.as_ref(),
                &detail,
                options.replica.as_deref(),
            ),
            &mut log.lines,
        );
        let commit_started = Instant::now();
        if let Err((action, source)) = log.write_group(&path) {
            // A full disk can leave part of the line: cut it, so the log still verifies.
            let _ = log
                .file
                .set_len(summary.bytes())
                .and_then(|()| log.file.sync_all());
            return Err(io_error(action, source));
        }
        log.committed_len += log.lines.len() as u64;
        let counters = Counters::default();
        counters.entries.fetch_add(1, Ordering::Relaxed);
        counters.syncs.fetch_add(1, Ordering::Relaxed);
        Ok(AuditLog {
            path,
            state: Mutex::new(LogState {
                file: Some(log),
                ..LogState::default()
            }),
            idle: Notify::new(),
            counters,
            // The first commit (the `gateway_started` line) also reserved the first step; a
            // commit of entries alone takes less.
            recent_commit: AtomicU64::new(
                u64::try_from(commit_started.elapsed().as_nanos()).unwrap_or(u64::MAX),
            ),
            sync_observer: options.sync_observer.clone(),
            write_deadline: options.write_deadline,
            argument_key: options.argument_key.clone(),
        })
    }

    /// The digest of a call's `arguments` as this log records it: HMAC-SHA-256 under the
    /// [`AuditOptions::argument_key`], else SHA-256, of their RFC 8785 form; or why there is
    /// none (arguments are carried as sent, so they need not have one).
    pub fn arguments_digest(&self, arguments: &Value) -> ArgumentsDigest {
        ArgumentsDigest::of(arguments, self.argument_key.as_ref())
    }

    /// As [`AuditLog::arguments_digest`], for arguments carried as the client's bytes
    /// ([`ArgumentsDigest::of_carried`]).
    pub fn carried_arguments_digest(&self, arguments: &toolgate_mcp::RawJson) -> ArgumentsDigest {
        ArgumentsDigest::of_carried(arguments, self.argument_key.as_ref())
    }

    /// Appends the entry for one decision and returns once it is on disk.
    ///
    /// A caller must not answer the client before this returns `Ok`: a decision that could not
    /// be recorded must be answered as a failure (docs/design.md §5, "durable before the client gets
    /// its answer").
    ///
    /// # Errors
    ///
    /// [`AuditError::Io`] when the write or the sync failed (the file is cut back to its last
    /// complete entry and the log is closed from then on), [`AuditError::Deadline`] when they
    /// did not finish within [`AuditOptions::write_deadline`], [`AuditError::Closed`] after
    /// [`AuditLog::shutdown`] or an earlier failure.
    ///
    /// A caller that leads a group waits for its write and sync however long the disk takes (a
    /// thread cannot leave a system call); when they end past its deadline the group is cut and
    /// refused all the same. Every other caller's wait is bounded by its deadline, and once one
    /// is missed every later record is refused at once.
    ///
    /// # Panics
    ///
    /// Outside a Tokio runtime with its time driver enabled (the deadline is a Tokio timer), as
    /// every Tokio timer does.
    pub async fn record(&self, record: CallRecord) -> Result<AuditReceipt, AuditError> {
        self.submit(Entry::Call(record)).await
    }

    /// Records that the catalog measured `catalog` replaced the one measured `previous` (a
    /// reload), written and synced like a decision; the chain continues through it.
    ///
    /// # Errors
    ///
    /// As [`AuditLog::record`].
    pub async fn record_catalog_loaded(
        &self,
        previous: Digest,
        catalog: Digest,
    ) -> Result<AuditReceipt, AuditError> {
        self.submit(Entry::CatalogLoaded { previous, catalog })
            .await
    }

    async fn submit(&self, entry: Entry) -> Result<AuditReceipt, AuditError> {
        let submitted = Instant::now();
        let (ticket, turn) = match self.enqueue(entry)? {
            Enqueued::Leads(ticket) => return self.lead_and_answer(ticket, submitted),
            Enqueued::Follows(ticket, turn) => (ticket, turn),
        };
        let mut waiting = Follower {
            log: self,
            turn: Some(turn),
        };
        let deadline = tokio::time::Instant::from_std(submitted + self.write_deadline);
        let Some(turn) = waiting.turn.as_mut() else {
            return Err(self.closed(None));
        };
        let answered = tokio::time::timeout_at(deadline, turn).await;
        match answered {
            Ok(turn) => {
                waiting.turn = None;
                match turn {
                    Ok(Turn::Answer(answer)) => answer,
                    Ok(Turn::Lead) => self.lead_and_answer(ticket, submitted),
                    // The sender is gone only with the log.
                    Err(_) => Err(self.closed(None)),
                }
            }
            Err(_) => {
                let (error, handed_the_lead) = match self.missed_deadline(&mut waiting) {
                    Ok(missed) => missed,
                    Err(answer) => return answer,
                };
                if handed_the_lead {
                    // Handed the lead just too late: the group it would write is refused, but
                    // its callers must be told.
                    let _ = self.lead_and_answer(ticket, submitted);
                }
                Err(error)
            }
        }
    }

    /// A follower's deadline passed: its answer if it came meanwhile (`Err` here means
    /// `Ok` there), else the log fails closed; says whether the follower was handed the lead.
    fn missed_deadline(
        &self,
        waiting: &mut Follower<'_>,
    ) -> Result<(AuditError, bool), Result<AuditReceipt, AuditError>> {
        let mut state = lock_state(&self.state);
        // Leaders answer while holding the state: an answer that is not here now will find the
        // failure, and its group is cut from the file.
        let turn = waiting.take_turn();
        if let Some(Turn::Answer(answer)) = turn {
            return Err(answer);
        }
        let error = AuditError::Deadline {
            path: self.path.clone(),
            deadline: self.write_deadline,
        };
        tracing::error!(%error, "audit log failed; every later call will be refused");
        state.failure.get_or_insert_with(|| error.to_string());
        Ok((error, matches!(turn, Some(Turn::Lead))))
    }

    /// Queues `entry`: its caller leads when no one does, and waits for its turn otherwise.
    fn enqueue(&self, entry: Entry) -> Result<Enqueued, AuditError> {
        let mut state = lock_state(&self.state);
        if let Some(reason) = state.failure.clone() {
            return Err(self.closed(Some(reason)));
        }
        if state.closing || state.file.is_none() && !state.leading {
            return Err(self.closed(None));
        }
        let ticket = state.next_ticket;
        state.next_ticket += 1;
        let time = SystemTime::now();
        if !state.leading {
            state.leading = true;
            state.queue.push(Queued {
                entry,
                time,
                ticket,
                reply: None,
            });
            return Ok(Enqueued::Leads(ticket));
        }
        let (reply, turn) = oneshot::channel();
        state.queue.push(Queued {
            entry,
            time,
            ticket,
            reply: Some(reply),
        });
        Ok(Enqueued::Follows(ticket, turn))
    }

    /// Leads one group that holds the entry `ticket`, and returns that entry's answer.
    fn lead_and_answer(&self, ticket: u64, submitted: Instant) -> Result<AuditReceipt, AuditError> {
        in_blocking_section(&self.recent_commit, || self.lead(Some((ticket, submitted))))
            .unwrap_or_else(|| Err(self.closed(None)))
    }

    /// Writes and syncs every queued entry as one group, answers them, then hands the lead on
    /// (or lets go of it). `own` is the leading caller's entry and submission time, whose
    /// answer is returned rather than sent; `None` when shutting down.
    fn lead(&self, own: Option<(u64, Instant)>) -> Option<Result<AuditReceipt, AuditError>> {
        let mut state = lock_state(&self.state);
        let Some(mut log) = state.file.take() else {
            let error = self.closed(state.failure.clone());
            let own_answer = answer_queued(&mut state.queue, own, &error);
            self.let_go(&mut state);
            return own_answer;
        };
        if let Some(reason) = state.failure.clone() {
            let error = self.closed(Some(reason));
            let own_answer = answer_queued(&mut state.queue, own, &error);
            state.file = Some(log);
            self.let_go(&mut state);
            return own_answer;
        }
        std::mem::swap(&mut state.queue, &mut log.batch);
        drop(state);

        log.lines.clear();
        log.receipts.clear();
        let head_before = log.head.clone();
        {
            let LogFile {
                head,
                lines,
                batch,
                receipts,
                ..
            } = &mut *log;
            receipts.extend(
                batch
                    .iter()
                    .map(|queued| Ok(head.append(&queued.entry.members(queued.time), lines))),
            );
        }
        let commit_started = Instant::now();
        let written = log.write_group(&self.path);
        let took = commit_started.elapsed();
        note_commit(&self.recent_commit, took);
        if let Some(observer) = &self.sync_observer {
            (observer.0)(took);
        }
        let late = own.is_some_and(|(_, submitted)| submitted.elapsed() > self.write_deadline);

        let mut state = lock_state(&self.state);
        let error = match (written, state.failure.clone()) {
            (Ok(()), None) if !late => {
                log.committed_len += log.lines.len() as u64;
                let entries = log
                    .receipts
                    .iter()
                    .filter(|receipt| receipt.is_ok())
                    .count();
                self.counters
                    .entries
                    .fetch_add(entries as u64, Ordering::Relaxed);
                self.counters.syncs.fetch_add(1, Ordering::Relaxed);
                let LogFile {
                    batch, receipts, ..
                } = &mut *log;
                let mut own_answer = None;
                for (queued, receipt) in batch.drain(..).zip(receipts.drain(..)) {
                    answer(queued, receipt, own, &mut own_answer);
                }
                state.file = Some(log);
                self.hand_on(&mut state);
                return own_answer;
            }
            (Ok(()), None) => AuditError::Deadline {
                path: self.path.clone(),
                deadline: self.write_deadline,
            },
            // Written, but after a caller's deadline: those calls were refused.
            (Ok(()), Some(reason)) => AuditError::Closed {
                path: self.path.clone(),
                reason: Some(reason),
            },
            (Err((action, source)), _) => AuditError::Io {
                action,
                path: self.path.clone(),
                source: Arc::new(source),
            },
        };
        // Refuse first, then cut: the state is never held across I/O (a caller past its
        // deadline takes it from async code, and a stuck disk must not stall that).
        state.failure.get_or_insert_with(|| error.to_string());
        drop(state);
        // The file's tail is unknown (a partial line on a full disk; a late group whose calls
        // were refused): cut it back to the last complete entry, then write nothing more.
        log.head = head_before;
        let cut = log.cut_back(&self.path);
        tracing::error!(%error, "{cut}; every later call will be refused");
        let mut state = lock_state(&self.state);
        // A failed write or sync names the cut in the reason later calls are refused with; a
        // missed deadline is refused with its own words, as when a waiting caller saw it.
        if let (Some(reason), AuditError::Io { .. }) = (state.failure.as_mut(), &error) {
            if *reason == error.to_string() {
                *reason = format!("{reason}; {cut}");
            }
        }
        // Answered after the cut, so a caller that retries learns what became of the file.
        let mut own_answer = None;
        for queued in log.batch.drain(..) {
            answer(queued, Err(error.clone()), own, &mut own_answer);
        }
        log.receipts.clear();
        let refused = self.closed(state.failure.clone());
        for queued in state.queue.drain(..) {
            answer(queued, Err(refused.clone()), own, &mut own_answer);
        }
        state.file = Some(log);
        self.let_go(&mut state);
        own_answer
    }

    /// Hands the lead to a caller whose entry is queued, or lets go of it when there is none
    /// (the entries of callers that went away are written with the next group).
    fn hand_on(&self, state: &mut LogState) {
        for queued in &mut state.queue {
            if let Some(reply) = queued.reply.take() {
                match reply.send(Turn::Lead) {
                    Ok(()) => return,
                    // That caller went away: its entry is written all the same.
                    Err(_) => continue,
                }
            }
        }
        self.let_go(state);
    }

    fn let_go(&self, state: &mut LogState) {
        state.leading = false;
        self.idle.notify_waiters();
    }

    /// Waits until every entry given before this call is on disk, then closes the log: later
    /// calls to [`AuditLog::record`] fail with [`AuditError::Closed`]. The blocks reserved
    /// past the last entry are released, and so is the lock. Calling it twice is fine.
    pub async fn shutdown(&self) {
        let bound = self.write_deadline.saturating_add(SHUTDOWN_GRACE);
        let until = tokio::time::Instant::now() + bound;
        loop {
            let idle = self.idle.notified();
            tokio::pin!(idle);
            {
                let mut state = lock_state(&self.state);
                state.closing = true;
                if !state.leading {
                    if state.queue.is_empty() {
                        let log = state.file.take();
                        drop(state);
                        if let Some(log) = log {
                            in_blocking_section(&self.recent_commit, || self.close(&log));
                        }
                        return;
                    }
                    // Entries of callers that went away, and no one to lead them.
                    state.leading = true;
                    drop(state);
                    in_blocking_section(&self.recent_commit, || self.lead(None));
                    continue;
                }
                idle.as_mut().enable();
            }
            // Bounded: a leader stuck in a sync past its deadline must not hold the shutdown
            // forever (the file then stays open, and locked, until the log is dropped).
            if tokio::time::timeout_at(until, idle).await.is_err() {
                return;
            }
        }
    }

    /// Releases the blocks reserved past the last entry (and any zeros a crash left there) and
    /// syncs; the caller then drops the file, which releases the lock.
    fn close(&self, log: &LogFile) {
        if let Err(error) = log
            .file
            .set_len(log.committed_len)
            .and_then(|()| log.file.sync_all())
        {
            // Reserved blocks cost disk space only; the log verifies either way.
            tracing::warn!(path = %self.path.display(), %error, "could not release the blocks reserved for the audit log");
        }
        tracing::info!(path = %self.path.display(), last_hash = %log.head.prev, "audit log closed");
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Entries written since [`AuditLog::open`], its `gateway_started` entry included.
    pub fn entries_written(&self) -> u64 {
        self.counters.entries.load(Ordering::Relaxed)
    }

    /// Syncs (`fdatasync`) since [`AuditLog::open`]; fewer than
    /// [`AuditLog::entries_written`] when entries were committed in groups.
    pub fn syncs(&self) -> u64 {
        self.counters.syncs.load(Ordering::Relaxed)
    }

    /// Why the log no longer records (a failed write or sync, a missed deadline), or `None`
    /// while it does.
    pub fn failure(&self) -> Option<String> {
        lock_state(&self.state).failure.clone()
    }

    fn closed(&self, reason: Option<String>) -> AuditError {
        AuditError::Closed {
            path: self.path.clone(),
            reason,
        }
    }
}

impl Drop for AuditLog {
    /// A log dropped without [`AuditLog::shutdown`] still writes the entries of callers that
    /// went away, and releases its reserved blocks.
    fn drop(&mut self) {
        let orphans = {
            let state = self.state.get_mut().unwrap_or_else(PoisonError::into_inner);
            if state.leading {
                return;
            }
            state.leading = !state.queue.is_empty();
            state.leading
        };
        if orphans {
            let _ = self.lead(None);
        }
        let log = self
            .state
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .file
            .take();
        if let Some(log) = log {
            self.close(&log);
        }
    }
}

/// Sends `result` to the caller of `queued`, or keeps it in `own_answer` when it is the
/// leader's own.
fn answer(
    queued: Queued,
    result: Result<AuditReceipt, AuditError>,
    own: Option<(u64, Instant)>,
    own_answer: &mut Option<Result<AuditReceipt, AuditError>>,
) {
    match queued.reply {
        Some(reply) => {
            let _ = reply.send(Turn::Answer(result));
        }
        None if own.is_some_and(|(ticket, _)| ticket == queued.ticket) => {
            *own_answer = Some(result);
        }
        // A caller handed the lead that went away before taking it.
        None => {}
    }
}

/// Answers every queued entry with `error`; returns the leader's own answer.
fn answer_queued(
    queue: &mut Vec<Queued>,
    own: Option<(u64, Instant)>,
    error: &AuditError,
) -> Option<Result<AuditReceipt, AuditError>> {
    let mut own_answer = None;
    for queued in queue.drain(..) {
        answer(queued, Err(error.clone()), own, &mut own_answer);
    }
    own_answer
}

/// A caller waiting for its answer or for the lead. Dropped while waiting (its call was
/// cancelled), it passes on a lead it was handed, so that the queue never stalls.
struct Follower<'a> {
    log: &'a AuditLog,
    turn: Option<oneshot::Receiver<Turn>>,
}

impl Follower<'_> {
    fn take_turn(&mut self) -> Option<Turn> {
        self.turn.take().and_then(|mut turn| turn.try_recv().ok())
    }
}

impl Drop for Follower<'_> {
    fn drop(&mut self) {
        let Some(mut turn) = self.turn.take() else {
            return;
        };
        let mut state = lock_state(&self.log.state);
        if let Ok(Turn::Lead) = turn.try_recv() {
            self.log.hand_on(&mut state);
        }
    }
}

/// Writes `bytes` zeros into `file` from `start`.
fn write_zeros(file: &File, start: u64, bytes: u64) -> io::Result<()> {
    const CHUNK: usize = 64 * 1024;
    let zeros = vec![0; CHUNK];
    let mut written = 0;
    while written < bytes {
        let chunk = usize::try_from(bytes - written).map_or(CHUNK, |left| left.min(CHUNK));
        file.write_all_at(&zeros[..chunk], start + written)?;
        written += chunk as u64;
    }
    Ok(())
}

/// Runs `f`, which blocks on file I/O, on this thread. While recent group commits took at most
/// [`INLINE_COMMIT_LIMIT`] (tmpfs, a disk with a power-loss-protected cache, an ordinary disk's
/// `fdatasync` of a few hundred µs) it simply runs: `block_in_place` would hand the worker's
/// core to another thread and take it back, wake-ups of two threads that cost more than the
/// stall they spare (BENCHMARKS.md, "The audit sync on the caller's worker"). Slower than that
/// (a disk stalling for milliseconds), on a multi-threaded Tokio runtime, it runs inside
/// `block_in_place`, so that the worker's other tasks go on elsewhere during the sync; on a
/// current-thread runtime there is nowhere to move them.
fn in_blocking_section<R>(recent_commit: &AtomicU64, f: impl FnOnce() -> R) -> R {
    let flavor = tokio::runtime::Handle::try_current().map(|handle| handle.runtime_flavor());
    let multi_threaded = matches!(flavor, Ok(RuntimeFlavor::MultiThread));
    if leaves_the_worker(multi_threaded, recent_commit.load(Ordering::Relaxed)) {
        tokio::task::block_in_place(f)
    } else {
        f()
    }
}

/// Whether a commit, on a multi-threaded Tokio runtime or not, after recent commits took
/// `recent_commit_ns` on average, runs inside `block_in_place`.
fn leaves_the_worker(multi_threaded: bool, recent_commit_ns: u64) -> bool {
    multi_threaded && u128::from(recent_commit_ns) > INLINE_COMMIT_LIMIT.as_nanos()
}

/// Group commits up to this long (on average, [`note_commit`]) run on the leader's worker
/// without `block_in_place`.
const INLINE_COMMIT_LIMIT: Duration = Duration::from_millis(1);

/// Folds one commit's duration into the running average [`in_blocking_section`] reads (an
/// exponential average over about eight commits, so that one slow sync does not flip it).
fn note_commit(recent_commit: &AtomicU64, took: Duration) {
    let took = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
    let before = recent_commit.load(Ordering::Relaxed);
    let average = before - before / 8 + took / 8;
    recent_commit.store(average, Ordering::Relaxed);
}

/// What one pending line records.
// A decision is the common entry: no box for it.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum Entry {
    Call(CallRecord),
    CatalogLoaded { previous: Digest, catalog: Digest },
}

impl Entry {
    fn members(&self, time: SystemTime) -> EntryMembers {
        match self {
            Entry::Call(record) => call_members(record, time),
            Entry::CatalogLoaded { previous, catalog } => {
                catalog_loaded_members(time, catalog, previous)
            }
        }
    }
}

impl LogFile {
    /// Writes `lines` at the end of the chain, reserves blocks ahead of them when they pass the
    /// reserved end, and syncs with one `fdatasync`.
    fn write_group(&mut self, path: &Path) -> Result<(), (&'static str, io::Error)> {
        self.file
            .write_all_at(&self.lines, self.committed_len)
            .map_err(|source| ("write", source))?;
        let end = self.committed_len + self.lines.len() as u64;
        if end > self.reserved_end {
            self.reserved_end = end;
            if self.preallocate > 0 {
                self.reserve_ahead(path);
            }
        }
        self.file.sync_data().map_err(|source| ("sync", source))
    }

    /// Reserves [`LogFile::preallocate`] bytes of blocks past the entries: with
    /// `FALLOC_FL_KEEP_SIZE` (a reader never sees them), or as written zeros
    /// ([`AuditOptions::prewritten_zeros`], which spares the syncs of the next appends a new
    /// file length; the zeros mislead a reader that follows the file while the gateway runs,
    /// which is why it is not the default). A failure (a full disk, a file system without
    /// `fallocate`) turns preallocation off for this log, and zeros written in part are cut off
    /// again: the entries do not need them.
    fn reserve_ahead(&mut self, path: &Path) {
        let start = self.reserved_end;
        let reserved = match self.reservation {
            Reservation::KeepLength => rustix::fs::fallocate(
                &self.file,
                rustix::fs::FallocateFlags::KEEP_SIZE,
                start,
                self.preallocate,
            )
            .map_err(io::Error::from),
            Reservation::WrittenZeros => write_zeros(&self.file, start, self.preallocate),
        };
        match reserved {
            Ok(()) => self.reserved_end = start.saturating_add(self.preallocate),
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "cannot reserve space for the audit log; writing it without");
                self.preallocate = 0;
                if self.reservation == Reservation::WrittenZeros {
                    if let Err(error) = self.file.set_len(start) {
                        tracing::warn!(path = %path.display(), %error, "cannot cut the zeros written ahead of the audit log's entries; they verify, and the next append writes over them");
                    }
                }
            }
        }
    }

    /// Truncates the file to the end of the last complete entry; says what it did.
    fn cut_back(&mut self, path: &Path) -> String {
        let length = self.committed_len;
        let last_seq = self.head.next_seq.saturating_sub(1);
        match self
            .file
            .set_len(length)
            .and_then(|()| self.file.sync_all())
        {
            Ok(()) => {
                self.reserved_end = length;
                format!(
                    "the audit log was cut back to {length} bytes, the end of its last complete \
                     entry (seq {last_seq}), so it verifies"
                )
            }
            Err(error) => format!(
                "the audit log could not be cut back to its last complete entry ({error}); cut \
                 it with `truncate -s {length} {}` before starting again",
                path.display()
            ),
        }
    }
}

/// Makes a new file's directory entry durable, so that a crash cannot lose the whole log.
fn sync_parent_directory(path: &Path) -> io::Result<()> {
    let parent = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    File::open(parent)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_slow_commit_on_a_multi_threaded_runtime_leaves_the_worker() {
        let limit = u64::try_from(INLINE_COMMIT_LIMIT.as_nanos()).unwrap_or(u64::MAX);
        assert_eq!(limit, 1_000_000);
        // An ordinary disk's sync (hundreds of µs) stays on the worker.
        assert!(!leaves_the_worker(true, 300_000));
        assert!(!leaves_the_worker(true, limit));
        assert!(leaves_the_worker(true, limit + 1));
        assert!(leaves_the_worker(true, u64::MAX));
        // A current-thread runtime, or none: there is nowhere to move the other tasks.
        assert!(!leaves_the_worker(false, u64::MAX));
    }

    #[test]
    fn one_slow_commit_does_not_flip_the_average() {
        let recent = AtomicU64::new(300_000);
        note_commit(&recent, Duration::from_millis(4));
        // 300,000 - 37,500 + 500,000.
        assert_eq!(recent.load(Ordering::Relaxed), 762_500);
        assert!(!leaves_the_worker(true, 762_500));
        note_commit(&recent, Duration::from_millis(4));
        assert_eq!(recent.load(Ordering::Relaxed), 1_167_188);
    }
}
