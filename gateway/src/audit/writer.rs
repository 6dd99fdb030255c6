//! The audit log writer: one thread owns the file and commits entries in groups, so that every
//! entry is on disk before its call is answered and throughput stays high under concurrency.

use std::fs::{File, OpenOptions};
use std::io::{self, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use catalog_store::CatalogMeasurement;
use jcs_digest::{CanonicalizeError, Digest};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use crate::audit::arguments::{ArgumentKey, ArgumentsDigest};
use crate::audit::chain::{AuditReceipt, ChainHead};
use crate::audit::entry::{CallRecord, call_members, catalog_loaded_members, started_members};
use crate::audit::lock::{LockFailure, lock_exclusive};
use crate::audit::verify::{BrokenEntry, ChainProblem, VerifyError, verify_reader};

/// Most entries committed by one write and one sync; a burst larger than this takes several.
const MAX_BATCH: usize = 4096;
/// Records waiting for the writer before `record` waits for room.
const QUEUE_CAPACITY: usize = 8192;

/// How much longer than the write deadline a shutdown waits for the writer to finish (a late
/// group is cut from the file before the writer ends).
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
}

/// Told how long each group commit (write and sync) took: `toolgate serve --metrics`.
#[derive(Clone)]
pub struct SyncObserver(Arc<dyn Fn(Duration) + Send + Sync>);

impl SyncObserver {
    /// Calls `observe` with the duration of every group commit, on the writer thread (keep it
    /// short).
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
/// [`AuditLog::record`] returns once the entry is written and synced (`fdatasync`). One writer
/// thread commits every entry that arrived during the previous sync with one write and one sync
/// (group commit). Dropping the log, or [`AuditLog::shutdown`], lets the writer finish what it
/// was given.
#[derive(Debug)]
pub struct AuditLog {
    path: PathBuf,
    sender: mpsc::Sender<Command>,
    counters: Arc<Counters>,
    state: Arc<Mutex<LogState>>,
    write_deadline: Duration,
    argument_key: Option<ArgumentKey>,
}

/// What the writer and the callers share: the failure that closed the log. The writer answers
/// a group `Ok` while holding it, and a caller whose deadline passed sets the failure while
/// holding it, so every entry is either answered `Ok` or cut from the file, never both. It is
/// never held across file I/O.
#[derive(Debug, Default)]
struct LogState {
    failure: Option<String>,
}

fn lock_state(state: &Mutex<LogState>) -> MutexGuard<'_, LogState> {
    // A panic while holding it leaves a consistent `Option`: keep using it.
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

#[derive(Debug, Default)]
struct Counters {
    entries: AtomicU64,
    syncs: AtomicU64,
}

#[derive(Debug)]
enum Command {
    Record(Box<Pending>),
    Shutdown(oneshot::Sender<()>),
}

#[derive(Debug)]
struct Pending {
    record: Entry,
    time: SystemTime,
    reply: oneshot::Sender<Result<AuditReceipt, AuditError>>,
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
    /// creating it when it does not exist, and holds an exclusive lock on it until the writer
    /// ends ([`AuditLog::shutdown`], or the log is dropped).
    ///
    /// A new log's first entry has `prev` = the measurement. An existing log is verified first
    /// and continued from its last `hash`; its first `prev` stays the first catalog's
    /// measurement. Either way a `gateway_started` entry is appended, naming this measurement
    /// and the one in force before (so a restart with another catalog is on the record), and
    /// synced before this returns. This blocks on file I/O: call it before serving, or in
    /// `spawn_blocking`.
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
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
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
                problem: ChainProblem::TornLine { length },
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

        let mut head = ChainHead {
            next_seq: summary.entries(),
            prev: summary.last_hash().unwrap_or(*catalog),
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
        let counters = Arc::new(Counters::default());
        let mut line = Vec::new();
        head.append(
            started_members(
                SystemTime::now(),
                catalog,
                previous_catalog.as_ref(),
                &detail,
                options.replica.as_deref(),
            ),
            &mut line,
        )?;
        let started = file
            .write_all(&line)
            .map_err(|e| io_error("write", e))
            .and_then(|()| file.sync_data().map_err(|e| io_error("sync", e)));
        if let Err(error) = started {
            // A full disk can leave part of the line: cut it, so the log still verifies.
            let _ = file.set_len(summary.bytes()).and_then(|()| file.sync_all());
            return Err(error);
        }
        let committed_len = summary.bytes() + line.len() as u64;
        counters.entries.fetch_add(1, Ordering::Relaxed);
        counters.syncs.fetch_add(1, Ordering::Relaxed);

        let (sender, receiver) = mpsc::channel(QUEUE_CAPACITY);
        let state = Arc::new(Mutex::new(LogState::default()));
        let writer = Writer {
            path: path.clone(),
            file: Some(file),
            head,
            committed_len,
            counters: Arc::clone(&counters),
            state: Arc::clone(&state),
            sync_observer: options.sync_observer.clone(),
        };
        std::thread::Builder::new()
            .name("toolgate-audit".to_owned())
            .spawn(move || writer.run(receiver))
            .map_err(|e| io_error("start the writer thread of", e))?;
        Ok(AuditLog {
            path,
            sender,
            counters,
            state,
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

    async fn submit(&self, record: Entry) -> Result<AuditReceipt, AuditError> {
        if let Some(reason) = lock_state(&self.state).failure.clone() {
            return Err(self.closed(Some(reason)));
        }
        let (reply, mut receipt) = oneshot::channel();
        let pending = Pending {
            record,
            time: SystemTime::now(),
            reply,
        };
        let deadline = self.write_deadline;
        let submitted = async {
            self.sender
                .send(Command::Record(Box::new(pending)))
                .await
                .map_err(|_| self.closed(None))?;
            (&mut receipt).await.map_err(|_| self.closed(None))?
        };
        match tokio::time::timeout(deadline, submitted).await {
            Ok(answer) => answer,
            Err(_) => {
                let mut state = lock_state(&self.state);
                // The writer answers while holding the state: an answer that is not here now
                // will find the failure, and the writer cuts the entry from the file.
                if let Ok(answer) = receipt.try_recv() {
                    return answer;
                }
                let error = AuditError::Deadline {
                    path: self.path.clone(),
                    deadline,
                };
                tracing::error!(%error, "audit log failed; every later call will be refused");
                state.failure.get_or_insert_with(|| error.to_string());
                Err(error)
            }
        }
    }

    /// Waits until every entry given before this call is on disk, then closes the log: later
    /// calls to [`AuditLog::record`] fail with [`AuditError::Closed`]. Calling it twice is fine.
    pub async fn shutdown(&self) {
        let (done, finished) = oneshot::channel();
        if self.sender.send(Command::Shutdown(done)).await.is_ok() {
            // An error means the writer is gone, which is the goal. Bounded: a writer stuck in
            // a sync past its deadline must not hold the shutdown forever.
            let bound = self.write_deadline.saturating_add(SHUTDOWN_GRACE);
            let _ = tokio::time::timeout(bound, finished).await;
        }
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
        let reason = reason.or_else(|| lock_state(&self.state).failure.clone());
        AuditError::Closed {
            path: self.path.clone(),
            reason,
        }
    }
}

/// What one pending line records.
// A decision is the common entry, and `Pending` is boxed already: no second box for it.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum Entry {
    Call(CallRecord),
    CatalogLoaded { previous: Digest, catalog: Digest },
}

impl Entry {
    fn members(&self, time: SystemTime) -> Vec<(&'static str, Value)> {
        match self {
            Entry::Call(record) => call_members(record, time),
            Entry::CatalogLoaded { previous, catalog } => {
                catalog_loaded_members(time, catalog, previous)
            }
        }
    }
}

/// The writer thread's state.
struct Writer {
    path: PathBuf,
    /// `None` once shut down: dropping the file releases the lock.
    file: Option<File>,
    head: ChainHead,
    /// The file's length after the last complete, synced group: where a failed write is cut.
    committed_len: u64,
    counters: Arc<Counters>,
    state: Arc<Mutex<LogState>>,
    sync_observer: Option<SyncObserver>,
}

impl Writer {
    fn run(mut self, mut receiver: mpsc::Receiver<Command>) {
        let mut batch = Vec::new();
        let mut lines = Vec::with_capacity(64 * 1024);
        // `blocking_recv` waits for the first record; everything that queued up meanwhile is
        // taken at once: that is the group commit.
        while let Some(first) = receiver.blocking_recv() {
            let mut shutdown = None;
            let mut next = Some(first);
            while let Some(command) = next.take() {
                match command {
                    Command::Record(pending) => batch.push(*pending),
                    // Records queued after a shutdown are not written: they get `Closed`.
                    Command::Shutdown(done) => {
                        shutdown = Some(done);
                        break;
                    }
                }
                if batch.len() < MAX_BATCH {
                    next = receiver.try_recv().ok();
                }
            }
            self.commit(&mut batch, &mut lines);
            if let Some(done) = shutdown {
                tracing::info!(path = %self.path.display(), last_hash = %self.head.prev, "audit log closed");
                // Unlock before saying so: a gateway started right after may take the log.
                self.file = None;
                let _ = done.send(());
                return;
            }
        }
    }

    /// Writes and syncs `batch` with one write and one sync, then answers each record.
    fn commit(&mut self, batch: &mut Vec<Pending>, lines: &mut Vec<u8>) {
        if batch.is_empty() {
            return;
        }
        let failure = lock_state(&self.state).failure.clone();
        let (Some(file), None) = (self.file.as_mut(), failure.as_ref()) else {
            let error = AuditError::Closed {
                path: self.path.clone(),
                reason: failure,
            };
            for pending in batch.drain(..) {
                let _ = pending.reply.send(Err(error.clone()));
            }
            return;
        };
        lines.clear();
        let head_before = self.head.clone();
        let receipts: Vec<Result<AuditReceipt, AuditError>> = batch
            .iter()
            .map(|pending| {
                self.head
                    .append(pending.record.members(pending.time), lines)
                    .map_err(AuditError::from)
            })
            .collect();
        let commit_started = std::time::Instant::now();
        let written = file
            .write_all(lines)
            .map_err(|source| ("write", source))
            .and_then(|()| file.sync_data().map_err(|source| ("sync", source)));
        if let Some(observer) = &self.sync_observer {
            (observer.0)(commit_started.elapsed());
        }
        let shared = Arc::clone(&self.state);
        let mut state = lock_state(&shared);
        let error = match (written, state.failure.clone()) {
            (Ok(()), None) => {
                self.committed_len += lines.len() as u64;
                let entries = receipts.iter().filter(|receipt| receipt.is_ok()).count() as u64;
                self.counters.entries.fetch_add(entries, Ordering::Relaxed);
                self.counters.syncs.fetch_add(1, Ordering::Relaxed);
                for (pending, receipt) in batch.drain(..).zip(receipts) {
                    let _ = pending.reply.send(receipt);
                }
                return;
            }
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
        self.head = head_before;
        let cut = self.cut_back();
        tracing::error!(%error, "{cut}; every later call will be refused");
        {
            let mut state = lock_state(&shared);
            if let Some(reason) = state.failure.as_mut() {
                if *reason == error.to_string() {
                    *reason = format!("{reason}; {cut}");
                }
            }
        }
        // Answered after the cut, so a caller that retries learns what became of the file.
        for pending in batch.drain(..) {
            let _ = pending.reply.send(Err(error.clone()));
        }
    }

    /// Truncates the file to the end of the last complete entry; says what it did.
    fn cut_back(&mut self) -> String {
        let length = self.committed_len;
        let last_seq = self.head.next_seq.saturating_sub(1);
        let Some(file) = self.file.as_mut() else {
            return "the log was already closed".to_owned();
        };
        match file.set_len(length).and_then(|()| file.sync_all()) {
            Ok(()) => format!(
                "the audit log was cut back to {length} bytes, the end of its last complete \
                 entry (seq {last_seq}), so it verifies"
            ),
            Err(error) => format!(
                "the audit log could not be cut back to its last complete entry ({error}); cut \
                 it with `truncate -s {length} {}` before starting again",
                self.path.display()
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
