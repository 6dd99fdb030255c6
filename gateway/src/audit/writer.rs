//! The audit log writer: one thread owns the file and commits entries in groups, so that every
//! entry is on disk before its call is answered and throughput stays high under concurrency.

use std::fs::{File, OpenOptions};
use std::io::{self, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use jcs_digest::{CanonicalizeError, Digest};
use tokio::sync::{mpsc, oneshot};

use crate::audit::chain::{AuditReceipt, ChainHead};
use crate::audit::entry::{CallRecord, call_members, started_members};
use crate::audit::verify::{BrokenEntry, ChainProblem, VerifyError, verify_reader};

/// Most entries committed by one write and one sync; a burst larger than this takes several.
const MAX_BATCH: usize = 4096;
/// Records waiting for the writer before `record` waits for room.
const QUEUE_CAPACITY: usize = 8192;

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

/// The hash-chained audit log of DESIGN.md §5, open for appending.
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
    record: CallRecord,
    time: SystemTime,
    reply: oneshot::Sender<Result<AuditReceipt, AuditError>>,
}

impl AuditLog {
    /// Opens the log at `path` for a gateway serving the catalog whose measurement is `catalog`,
    /// creating it when it does not exist.
    ///
    /// A new log's first entry has `prev` = `catalog`. An existing log is verified first and
    /// continued from its last `hash`; its first `prev` stays the first catalog's measurement.
    /// Either way a `gateway_started` entry is appended, naming `catalog` and the measurement in
    /// force before (so a restart with another catalog is on the record), and synced before this
    /// returns. This blocks on file I/O: call it before serving, or in `spawn_blocking`.
    ///
    /// One gateway per log: two writers on one file would break the chain.
    ///
    /// # Errors
    ///
    /// [`AuditError::Broken`] when the log does not verify, [`AuditError::TornTail`] when it
    /// ends in an incomplete line (neither is repaired silently), [`AuditError::Io`].
    pub fn open(path: impl AsRef<Path>, catalog: &Digest) -> Result<AuditLog, AuditError> {
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
            ),
            &mut line,
        )?;
        file.write_all(&line).map_err(|e| io_error("write", e))?;
        file.sync_data().map_err(|e| io_error("sync", e))?;
        counters.entries.fetch_add(1, Ordering::Relaxed);
        counters.syncs.fetch_add(1, Ordering::Relaxed);

        let (sender, receiver) = mpsc::channel(QUEUE_CAPACITY);
        let writer = Writer {
            path: path.clone(),
            file,
            head,
            counters: Arc::clone(&counters),
            failure: None,
        };
        std::thread::Builder::new()
            .name("toolgate-audit".to_owned())
            .spawn(move || writer.run(receiver))
            .map_err(|e| io_error("start the writer thread of", e))?;
        Ok(AuditLog {
            path,
            sender,
            counters,
        })
    }

    /// Appends the entry for one decision and returns once it is on disk.
    ///
    /// A caller must not answer the client before this returns `Ok`: a decision that could not
    /// be recorded must be answered as a failure (DESIGN.md §5, "durable before the client gets
    /// its answer").
    ///
    /// # Errors
    ///
    /// [`AuditError::Io`] when the write or the sync failed (the log is closed from then on),
    /// [`AuditError::Closed`] after [`AuditLog::shutdown`] or an earlier failure.
    pub async fn record(&self, record: CallRecord) -> Result<AuditReceipt, AuditError> {
        let (reply, receipt) = oneshot::channel();
        let pending = Pending {
            record,
            time: SystemTime::now(),
            reply,
        };
        self.sender
            .send(Command::Record(Box::new(pending)))
            .await
            .map_err(|_| self.closed())?;
        receipt.await.map_err(|_| self.closed())?
    }

    /// Waits until every entry given before this call is on disk, then closes the log: later
    /// calls to [`AuditLog::record`] fail with [`AuditError::Closed`]. Calling it twice is fine.
    pub async fn shutdown(&self) {
        let (done, finished) = oneshot::channel();
        if self.sender.send(Command::Shutdown(done)).await.is_ok() {
            // An error means the writer is gone, which is the goal.
            let _ = finished.await;
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

    fn closed(&self) -> AuditError {
        AuditError::Closed {
            path: self.path.clone(),
            reason: None,
        }
    }
}

/// The writer thread's state.
struct Writer {
    path: PathBuf,
    file: File,
    head: ChainHead,
    counters: Arc<Counters>,
    /// Set by the first failed write or sync; every later record gets it.
    failure: Option<AuditError>,
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
        if let Some(failure) = &self.failure {
            for pending in batch.drain(..) {
                let _ = pending.reply.send(Err(failure.clone()));
            }
            return;
        }
        lines.clear();
        let receipts: Vec<Result<AuditReceipt, AuditError>> = batch
            .iter()
            .map(|pending| {
                self.head
                    .append(call_members(&pending.record, pending.time), lines)
                    .map_err(AuditError::from)
            })
            .collect();
        let written = self
            .file
            .write_all(lines)
            .map_err(|source| ("write", source))
            .and_then(|()| self.file.sync_data().map_err(|source| ("sync", source)));
        match written {
            Ok(()) => {
                let entries = receipts.iter().filter(|receipt| receipt.is_ok()).count() as u64;
                self.counters.entries.fetch_add(entries, Ordering::Relaxed);
                self.counters.syncs.fetch_add(1, Ordering::Relaxed);
                for (pending, receipt) in batch.drain(..).zip(receipts) {
                    let _ = pending.reply.send(receipt);
                }
            }
            Err((action, source)) => {
                // After a failed write or sync the file's tail is unknown (a sync failure may
                // have dropped dirty pages): write nothing more, and say so to every caller.
                let error = AuditError::Io {
                    action,
                    path: self.path.clone(),
                    source: Arc::new(source),
                };
                tracing::error!(%error, "audit log failed; every later call will be refused");
                self.failure = Some(AuditError::Closed {
                    path: self.path.clone(),
                    reason: Some(error.to_string()),
                });
                for pending in batch.drain(..) {
                    let _ = pending.reply.send(Err(error.clone()));
                }
            }
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
