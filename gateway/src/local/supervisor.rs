//! `LocalUpstream`: one local server, started on first use after its entrypoints verify, kept
//! and reused, started again (verified again, with backoff) after it exits, stopped on
//! shutdown.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use server_identity::EntrypointsVerified;
use tokio::sync::watch;

use super::child::{ChildSetup, RunningChild};
use super::command::LocalCommand;
use super::options::LocalOptions;
use super::stderr::StderrCounts;
use crate::definition_check::{ToolsPage, ToolsPageError};
use crate::mcp::{self, Generation, ProtocolVersion, RawJson};
use crate::upstream::request_body::{WrittenRequest, client_info};
use crate::upstream::{TimeoutPhase, UpstreamError};

/// The protocol state agreed with the running child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Negotiated {
    /// 2026-07-28: every request carries the `_meta` envelope.
    Stateless,
    /// The session generation at this version (stdio has no session id).
    Session(ProtocolVersion),
}

#[derive(Debug)]
struct Live {
    child: RunningChild,
    negotiated: Negotiated,
    /// What the entrypoint files looked like when they were last verified.
    stamps: Mutex<Vec<FileStamp>>,
}

/// What `stat` says about an entrypoint (the link itself and what it points to): when it
/// changes, the file is hashed again before the running process is used.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FileStamp {
    link: Option<StatKey>,
    target: Option<StatKey>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct StatKey {
    len: u64,
    modified: Option<std::time::SystemTime>,
    #[cfg(unix)]
    inode: (u64, u64, i64, i64),
}

impl StatKey {
    fn of(metadata: std::io::Result<std::fs::Metadata>) -> Option<StatKey> {
        let metadata = metadata.ok()?;
        Some(StatKey {
            len: metadata.len(),
            modified: metadata.modified().ok(),
            #[cfg(unix)]
            inode: {
                use std::os::unix::fs::MetadataExt as _;
                (
                    metadata.dev(),
                    metadata.ino(),
                    metadata.ctime(),
                    metadata.ctime_nsec(),
                )
            },
        })
    }
}

fn stamps(command: &LocalCommand) -> Vec<FileStamp> {
    command
        .entrypoints
        .iter()
        .map(|(path, _)| FileStamp {
            link: StatKey::of(std::fs::symlink_metadata(path)),
            target: StatKey::of(std::fs::metadata(path)),
        })
        .collect()
}

#[derive(Debug, Default)]
struct Restarts {
    /// Failed starts in a row (reset by a start whose handshake completes).
    failures: u32,
    /// No start before this.
    not_before: Option<Instant>,
    /// Why the last start failed.
    last_failure: Option<String>,
}

/// What a local upstream has done so far, for tests and the operator.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LocalStatus {
    /// Processes spawned (each after its entrypoints verified).
    pub starts: u64,
    /// Starts refused because an entrypoint did not verify (nothing was spawned).
    pub refused_starts: u64,
    /// The running process, if any.
    pub pid: Option<u32>,
    /// Stderr lines written to the gateway's log.
    pub stderr_lines_logged: u64,
    /// Stderr lines dropped by the rate limit.
    pub stderr_lines_dropped: u64,
}

/// A local (stdio) MCP server behind the same surface as
/// [`UpstreamClient`](crate::upstream::UpstreamClient): `list_tools`, `call_tool`,
/// `invalidations`. Cheap to clone; clones share the process.
#[derive(Clone)]
pub struct LocalUpstream {
    inner: Arc<Inner>,
}

struct Inner {
    command: LocalCommand,
    label: Arc<str>,
    options: LocalOptions,
    invalidations: Arc<watch::Sender<u64>>,
    live: Mutex<Option<Arc<Live>>>,
    starting: tokio::sync::Mutex<Restarts>,
    starts: AtomicU64,
    refused_starts: AtomicU64,
    stderr_counts: Arc<StderrCounts>,
    verified: Mutex<Option<EntrypointsVerified>>,
    closed: AtomicBool,
}

impl std::fmt::Debug for LocalUpstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalUpstream")
            .field("label", &self.inner.label)
            .field("status", &self.status())
            .finish_non_exhaustive()
    }
}

impl LocalUpstream {
    /// A local upstream for `command`. Nothing is verified or started until the first request.
    pub fn new(command: LocalCommand, options: LocalOptions) -> LocalUpstream {
        let (invalidations, _) = watch::channel(0);
        LocalUpstream {
            inner: Arc::new(Inner {
                label: Arc::from(command.label()),
                command,
                options,
                invalidations: Arc::new(invalidations),
                live: Mutex::new(None),
                starting: tokio::sync::Mutex::new(Restarts::default()),
                starts: AtomicU64::new(0),
                refused_starts: AtomicU64::new(0),
                stderr_counts: Arc::new(StderrCounts::default()),
                verified: Mutex::new(None),
                closed: AtomicBool::new(false),
            }),
        }
    }

    /// `stdio:` and the argv: where a network upstream has its URL (errors, audit, denials).
    pub fn url(&self) -> &str {
        &self.inner.label
    }

    /// The command it runs.
    pub fn command(&self) -> &LocalCommand {
        &self.inner.command
    }

    /// A counter that increases whenever what was learned from the server may be stale: a
    /// `notifications/tools/list_changed`, or the process exiting (a new one may serve other
    /// tools).
    pub fn invalidations(&self) -> watch::Receiver<u64> {
        self.inner.invalidations.subscribe()
    }

    /// The entrypoint digests verified before the newest start, for the audit record.
    pub fn verified_entrypoints(&self) -> Option<EntrypointsVerified> {
        self.inner.verified.lock().ok().and_then(|v| v.clone())
    }

    /// What it has done so far.
    pub fn status(&self) -> LocalStatus {
        LocalStatus {
            starts: self.inner.starts.load(Ordering::Relaxed),
            refused_starts: self.inner.refused_starts.load(Ordering::Relaxed),
            pid: self
                .current()
                .filter(|live| live.child.is_usable())
                .and_then(|live| live.child.pid()),
            stderr_lines_logged: self.inner.stderr_counts.logged.load(Ordering::Relaxed),
            stderr_lines_dropped: self.inner.stderr_counts.dropped.load(Ordering::Relaxed),
        }
    }

    /// Every tool the server lists, every page followed, each definition as received. Starts
    /// the server (after verifying its entrypoints) when none is running.
    ///
    /// # Errors
    ///
    /// [`UpstreamError::Identity`] with an entrypoint [`server_identity::IdentityError`] when
    /// a file changed (nothing was started); otherwise as for the network client.
    pub async fn list_tools(&self) -> Result<Vec<Value>, UpstreamError> {
        let mut tools = Vec::new();
        self.list(|result| ToolsPage::read_values(result, &mut tools))
            .await?;
        Ok(tools)
    }

    /// One listing, as [`list_tools`](Self::list_tools) makes it: `page` reads each page's
    /// `result` bytes and returns its `nextCursor` (the definition check digests the tools of
    /// each page from those bytes).
    pub(crate) async fn list(
        &self,
        mut page: impl FnMut(&[u8]) -> Result<Option<String>, ToolsPageError> + Send,
    ) -> Result<(), UpstreamError> {
        let method = mcp::methods::TOOLS_LIST;
        let live = self.ensure_live().await?;
        let mut cursor: Option<String> = None;
        for _ in 0..self.inner.options.max_list_pages {
            let listing = WrittenRequest::ToolsList {
                cursor: cursor.as_deref(),
            };
            let envelope = live.negotiated == Negotiated::Stateless;
            let body = |id| listing.to_bytes(id, envelope);
            let result = live
                .child
                .request_written(method, body, self.inner.options.request_timeout)
                .await?;
            let read = page(result.as_bytes());
            match read.map_err(|error| self.malformed(method, &error.to_string()))? {
                None => return Ok(()),
                Some(next) => cursor = Some(next),
            }
        }
        Err(UpstreamError::TooManyPages {
            url: self.url().to_owned(),
            limit: self.inner.options.max_list_pages,
        })
    }

    /// Calls tool `name` on the process whose tools were checked, and returns its `result`
    /// as received.
    ///
    /// `checked_generation` is the [`invalidations`](Self::invalidations) value read before
    /// the definition check. The call goes only to a process started no later than that (so
    /// the listing that was checked came from it) and still running; it never starts one. A
    /// call whose process is gone fails [`UpstreamError::ConnectionClosed`]
    /// (`upstream_unavailable`) unsent, to be checked again (docs/design.md §5, "A check is never
    /// outrun").
    ///
    /// # Errors
    ///
    /// As for the network client; a JSON-RPC error answer is [`UpstreamError::JsonRpc`].
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Option<RawJson>,
        meta: Option<&Map<String, Value>>,
        checked_generation: u64,
    ) -> Result<RawJson, UpstreamError> {
        let method = mcp::methods::TOOLS_CALL;
        let live = self
            .current()
            .filter(|live| live.child.started_generation <= checked_generation);
        let Some(live) = live.filter(|live| live.child.is_usable()) else {
            let why = match self.current() {
                None => "no process is running".to_owned(),
                Some(live) => live
                    .child
                    .closed_reason()
                    .unwrap_or_else(|| "it was started again since".to_owned()),
            };
            return Err(UpstreamError::ConnectionClosed {
                url: self.url().to_owned(),
                method: method.to_owned(),
                detail: format!(
                    "the server process whose tools were checked is gone ({why}); the call was \
                     not sent"
                ),
            });
        };
        // A cached listing may be used (max-age): the files are checked here too.
        self.recheck(&live).await?;
        // Arguments and result are carried as the bytes received.
        let call = WrittenRequest::ToolsCall {
            name,
            arguments: arguments.as_ref(),
            meta,
        };
        let envelope = live.negotiated == Negotiated::Stateless;
        let body = |id| call.to_bytes(id, envelope);
        let result = live
            .child
            .request_written(method, body, self.inner.options.request_timeout)
            .await?;
        if !result.is_object() {
            return Err(self.malformed(method, "the result is not an object"));
        }
        Ok(result)
    }

    /// Stops the running process (stdin closed, SIGTERM, SIGKILL, each after
    /// [`LocalOptions::stop_grace`]) and starts no other. Returns once it is gone, with how it
    /// ended (`exit status: 0`, `signal: 9 (SIGKILL)`), or `None` when none was running.
    pub async fn shutdown(&self) -> Option<String> {
        self.inner.closed.store(true, Ordering::SeqCst);
        // Wait for a start in progress, so that its process is stopped too.
        let _restarts = self.inner.starting.lock().await;
        let live = self.inner.live.lock().ok().and_then(|mut live| live.take());
        let exit = live?.child.stop().await;
        if let Some(exit) = &exit {
            tracing::info!(upstream = %self.url(), "local server stopped ({exit})");
        }
        exit
    }

    /// A pinned file changed on disk while the process runs (it may load it later): hash
    /// again; a mismatch stops the process and refuses, as before a start.
    async fn recheck(&self, live: &Live) -> Result<(), UpstreamError> {
        if self.unchanged(live) {
            return Ok(());
        }
        let now = stamps(&self.inner.command);
        match self.inner.command.entrypoints.verify() {
            Ok(verified) => {
                if let Ok(mut slot) = self.inner.verified.lock() {
                    *slot = Some(verified);
                }
                if let Ok(mut stamps) = live.stamps.lock() {
                    *stamps = now;
                }
                Ok(())
            }
            Err(error) => {
                self.inner.refused_starts.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(
                    upstream = %self.url(),
                    "local server stopped: an entrypoint changed while it ran: {error}"
                );
                if let Ok(mut slot) = self.inner.live.lock() {
                    if slot
                        .as_ref()
                        .is_some_and(|current| std::ptr::eq(&**current, live))
                    {
                        *slot = None;
                    }
                }
                live.child.stop().await;
                Err(UpstreamError::Identity {
                    url: self.url().to_owned(),
                    error,
                })
            }
        }
    }

    /// Whether no entrypoint file changed (by `stat`) since it was last verified.
    fn unchanged(&self, live: &Live) -> bool {
        let now = stamps(&self.inner.command);
        live.stamps.lock().map(|then| *then == now).unwrap_or(false)
    }

    fn current(&self) -> Option<Arc<Live>> {
        self.inner.live.lock().ok().and_then(|live| live.clone())
    }

    fn malformed(&self, method: &str, detail: &str) -> UpstreamError {
        UpstreamError::Malformed {
            url: self.url().to_owned(),
            method: method.to_owned(),
            detail: detail.to_owned(),
        }
    }

    /// The running process, or a new one: backoff after failed starts, the entrypoints
    /// verified, the process spawned, the handshake done.
    async fn ensure_live(&self) -> Result<Arc<Live>, UpstreamError> {
        if let Some(live) = self.current().filter(|live| live.child.is_usable()) {
            if self.unchanged(&live) {
                return Ok(live);
            }
        }
        let mut restarts = self.inner.starting.lock().await;
        if let Some(live) = self.current().filter(|live| live.child.is_usable()) {
            self.recheck(&live).await?;
            return Ok(live);
        }
        if self.inner.closed.load(Ordering::SeqCst) {
            return Err(self.unavailable("the gateway is shutting down".to_owned()));
        }
        if let Some(gone) = self.inner.live.lock().ok().and_then(|mut live| live.take()) {
            let why = gone.child.closed_reason().unwrap_or_default();
            tracing::info!(upstream = %self.url(), "local server gone ({why}); starting it again");
        }
        if let Some(not_before) = restarts.not_before {
            let wait = not_before.saturating_duration_since(Instant::now());
            if wait > self.inner.options.request_timeout {
                return Err(self.unavailable(format!(
                    "{} failed starts in a row (the last: {}); the next start is in {} ms",
                    restarts.failures,
                    restarts.last_failure.as_deref().unwrap_or("unknown"),
                    wait.as_millis()
                )));
            }
            tokio::time::sleep(wait).await;
        }
        match self.start().await {
            Ok(live) => {
                *restarts = Restarts::default();
                let live = Arc::new(live);
                if let Ok(mut slot) = self.inner.live.lock() {
                    *slot = Some(live.clone());
                }
                Ok(live)
            }
            Err(StartFailure::Refused(error)) => Err(error),
            Err(StartFailure::Failed(error)) => {
                restarts.failures = restarts.failures.saturating_add(1);
                let backoff = backoff(
                    self.inner.options.restart_backoff,
                    self.inner.options.max_restart_backoff,
                    restarts.failures,
                );
                restarts.not_before = Some(Instant::now() + backoff);
                restarts.last_failure = Some(error.to_string());
                tracing::warn!(
                    upstream = %self.url(),
                    "local server failed to start ({} in a row): {error}; next start in {} ms at the earliest",
                    restarts.failures,
                    backoff.as_millis()
                );
                Err(error)
            }
        }
    }

    async fn start(&self) -> Result<Live, StartFailure> {
        // Before every spawn: every pinned file read and hashed now (docs/design.md §3). The stamps
        // are taken first, so a change during the hashing shows at the next use.
        let stamps = stamps(&self.inner.command);
        let verified = match self.inner.command.entrypoints.verify() {
            Ok(verified) => verified,
            Err(error) => {
                self.inner.refused_starts.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(upstream = %self.url(), "local server not started: {error}");
                return Err(StartFailure::Refused(UpstreamError::Identity {
                    url: self.url().to_owned(),
                    error,
                }));
            }
        };
        if let Ok(mut slot) = self.inner.verified.lock() {
            *slot = Some(verified);
        }
        let child = self.inner.command.to_command().spawn().map_err(|error| {
            StartFailure::Failed(UpstreamError::Connect {
                url: self.url().to_owned(),
                detail: format!(
                    "cannot start {} in {}: {error}",
                    self.inner.command.program.display(),
                    self.inner.command.cwd.display()
                ),
            })
        })?;
        self.inner.starts.fetch_add(1, Ordering::Relaxed);
        let options = &self.inner.options;
        let setup = ChildSetup {
            label: self.inner.label.clone(),
            server_name: Arc::from(self.inner.command.name.as_str()),
            max_line_bytes: options.max_response_bytes,
            max_stderr_line_bytes: options.max_stderr_line_bytes,
            stderr_lines_per_second: options.stderr_lines_per_second,
            stop_grace: options.stop_grace,
            invalidations: self.inner.invalidations.clone(),
            stderr_counts: self.inner.stderr_counts.clone(),
        };
        let child = RunningChild::start(child, setup)
            .map_err(|detail| StartFailure::Failed(self.unavailable(detail)))?;
        tracing::info!(upstream = %self.url(), pid = child.pid(), "local server started");
        let handshake = tokio::time::timeout(options.start_timeout, self.negotiate(&child)).await;
        let failure = match handshake {
            Ok(Ok(negotiated)) => {
                return Ok(Live {
                    child,
                    negotiated,
                    stamps: Mutex::new(stamps),
                });
            }
            Ok(Err(error)) => error,
            Err(_) => UpstreamError::Timeout {
                url: self.url().to_owned(),
                phase: TimeoutPhase::Response,
                timeout: options.start_timeout,
            },
        };
        child.stop().await;
        Err(StartFailure::Failed(failure))
    }

    /// 2026-07-28 first (`server/discover`), `initialize` when the server refuses it or does
    /// not answer the probe in [`LocalOptions::discover_timeout`].
    async fn negotiate(&self, child: &RunningChild) -> Result<Negotiated, UpstreamError> {
        match self.inner.options.generation {
            Some(Generation::Session) => self.initialize(child).await,
            Some(Generation::Stateless) => match self.discover(child).await? {
                Some(negotiated) => Ok(negotiated),
                None => Err(UpstreamError::UnsupportedVersion {
                    url: self.url().to_owned(),
                    offered: "no 2026-07-28 (server/discover refused)".to_owned(),
                }),
            },
            None => match self.discover(child).await? {
                Some(negotiated) => Ok(negotiated),
                None => self.initialize(child).await,
            },
        }
    }

    async fn discover(&self, child: &RunningChild) -> Result<Option<Negotiated>, UpstreamError> {
        let discover = WrittenRequest::ServerDiscover;
        let body = |id| discover.to_bytes(id, true);
        match child
            .request_strict(discover.method(), body, self.inner.options.discover_timeout)
            .await
        {
            Ok(result) => {
                Ok(supports_2026(result.get("supportedVersions")).then_some(Negotiated::Stateless))
            }
            Err(UpstreamError::JsonRpc { code, message, .. }) => {
                tracing::debug!(upstream = %self.url(), code, %message, "server/discover refused");
                Ok(None)
            }
            Err(UpstreamError::Timeout { .. }) => {
                tracing::debug!(upstream = %self.url(), "server/discover unanswered; initialize");
                Ok(None)
            }
            Err(other) => Err(other),
        }
    }

    async fn initialize(&self, child: &RunningChild) -> Result<Negotiated, UpstreamError> {
        let method = mcp::methods::INITIALIZE;
        let mut params = Map::new();
        params.insert(
            "protocolVersion".to_owned(),
            Value::from(ProtocolVersion::LATEST_SESSION.as_str()),
        );
        params.insert("capabilities".to_owned(), json!({}));
        params.insert("clientInfo".to_owned(), client_info());
        let result = match child
            .request(method, params, self.inner.options.request_timeout)
            .await
        {
            Ok(result) => result,
            // The probe's answer came after its deadline and the server settled on 2026-07-28
            // (FastMCP refuses `initialize` then, naming the versions it serves).
            Err(UpstreamError::JsonRpc {
                code: mcp::error_codes::UNSUPPORTED_PROTOCOL_VERSION,
                data: Some(data),
                ..
            }) if supports_2026(data.get("supported")) => return Ok(Negotiated::Stateless),
            Err(error) => return Err(error),
        };
        let offered = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .ok_or_else(|| self.malformed(method, "the result has no `protocolVersion`"))?;
        let version = ProtocolVersion::from_wire(offered)
            .filter(|version| version.generation() == Generation::Session)
            .ok_or_else(|| UpstreamError::UnsupportedVersion {
                url: self.url().to_owned(),
                offered: offered.to_owned(),
            })?;
        child
            .notify(
                mcp::methods::NOTIFICATIONS_INITIALIZED,
                self.inner.options.request_timeout,
            )
            .await?;
        Ok(Negotiated::Session(version))
    }

    fn unavailable(&self, detail: String) -> UpstreamError {
        UpstreamError::Connect {
            url: self.url().to_owned(),
            detail,
        }
    }
}

enum StartFailure {
    /// Refused before anything ran (an entrypoint did not verify): no backoff, since a start
    /// cost nothing and the answer is the same until the file or the catalog changes.
    Refused(UpstreamError),
    /// A process was started (or could not be) and did not complete the handshake.
    Failed(UpstreamError),
}

/// Whether a list of versions names 2026-07-28.
fn supports_2026(versions: Option<&Value>) -> bool {
    versions.and_then(Value::as_array).is_some_and(|versions| {
        versions
            .iter()
            .any(|version| version.as_str() == Some(ProtocolVersion::V2026_07_28.as_str()))
    })
}

/// `first` doubled per failure after the first, at most `max`.
fn backoff(first: Duration, max: Duration, failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(20);
    first.saturating_mul(1 << doublings).min(max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let first = Duration::from_millis(100);
        let max = Duration::from_secs(1);
        let delays: Vec<u128> = (1..=6)
            .map(|failures| backoff(first, max, failures).as_millis())
            .collect();
        assert_eq!(delays, [100, 200, 400, 800, 1000, 1000]);
        assert_eq!(backoff(first, max, u32::MAX), max);
    }
}
