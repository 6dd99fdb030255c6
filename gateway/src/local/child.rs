//! One running child: its stdin writer, its stdout reader dispatching answers to waiting callers
//! by request id, its stderr relay, and the task that owns the process (waits for its exit, and
//! stops it: stdin closed, then SIGTERM, then SIGKILL).

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::{Notify, mpsc, oneshot, watch};

use super::lines::{LineRead, excerpt, read_line};
use super::stderr::{self, StderrCounts};
use crate::mcp::{
    ErrorObject, Message, Notification, RawJson, Request, RequestId, Response, ResponsePayload,
    error_codes, methods,
};
use crate::upstream::{TimeoutPhase, UpstreamError};

/// Lines queued for the child's stdin; a full queue makes writers wait (within their deadline).
const OUTGOING_QUEUE: usize = 64;

/// How long a reader that saw stdout close waits for the exit status, to name it.
const EXIT_STATUS_WAIT: Duration = Duration::from_millis(500);

/// Characters of a malformed line repeated in an error or the log.
const EXCERPT_CHARS: usize = 120;

/// Why a request got no result, before it is named as an [`UpstreamError`].
#[derive(Debug, Clone)]
enum Failure {
    /// The child is gone (or its stdout closed): `detail` says how.
    Closed(String),
    /// The child wrote a line longer than the limit while the request was in flight.
    TooLong(usize),
    /// The child wrote something that is not JSON-RPC while the request was in flight.
    Garbage(String),
    /// A JSON-RPC error answer.
    JsonRpc(ErrorObject),
}

#[derive(Default)]
struct Pending {
    waiters: HashMap<i64, oneshot::Sender<Result<RawJson, Failure>>>,
    /// Set once the child can answer nothing more.
    closed: Option<String>,
}

impl Pending {
    fn fail_all(&mut self, failure: &Failure) {
        for (_, waiter) in self.waiters.drain() {
            let _ = waiter.send(Err(failure.clone()));
        }
    }
}

/// What the process ended with, in words (`exit status: 3`, `signal: 9 (SIGKILL)`).
pub(super) type ExitText = String;

/// A running child process and its conversation.
pub(super) struct RunningChild {
    label: Arc<str>,
    pid: Option<u32>,
    outgoing: mpsc::Sender<Vec<u8>>,
    pending: Arc<Mutex<Pending>>,
    next_id: AtomicI64,
    exited: watch::Receiver<Option<ExitText>>,
    stop: Mutex<Option<oneshot::Sender<()>>>,
    /// The invalidation generation when it was started (see `LocalUpstream::call_tool`).
    pub(super) started_generation: u64,
}

impl std::fmt::Debug for RunningChild {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningChild")
            .field("label", &self.label)
            .field("pid", &self.pid)
            .finish_non_exhaustive()
    }
}

/// Everything a child's tasks need besides the process.
pub(super) struct ChildSetup {
    pub(super) label: Arc<str>,
    pub(super) server_name: Arc<str>,
    pub(super) max_line_bytes: usize,
    pub(super) max_stderr_line_bytes: usize,
    pub(super) stderr_lines_per_second: u32,
    pub(super) stop_grace: Duration,
    pub(super) invalidations: Arc<watch::Sender<u64>>,
    pub(super) stderr_counts: Arc<StderrCounts>,
}

impl RunningChild {
    /// Takes over `child` (spawned with all three pipes) and starts its tasks.
    pub(super) fn start(mut child: Child, setup: ChildSetup) -> Result<RunningChild, String> {
        let (Some(stdin), Some(stdout), Some(stderr_pipe)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err("the process has no stdin, stdout or stderr pipe".to_owned());
        };
        let pid = child.id();
        let started_generation = *setup.invalidations.borrow();
        let (outgoing, queue) = mpsc::channel(OUTGOING_QUEUE);
        let close_stdin = Arc::new(Notify::new());
        let pending = Arc::new(Mutex::new(Pending::default()));
        let (exit_tx, exited) = watch::channel(None);
        let (stop, stop_rx) = oneshot::channel();
        let (reader_done, reader_finished) = oneshot::channel();

        tokio::spawn(write_stdin(stdin, queue, close_stdin.clone()));
        tokio::spawn(stderr::relay(
            setup.server_name.clone(),
            stderr_pipe,
            setup.max_stderr_line_bytes,
            setup.stderr_lines_per_second,
            setup.stderr_counts.clone(),
        ));
        tokio::spawn(read_stdout(Reader {
            stdout,
            label: setup.label.clone(),
            limit: setup.max_line_bytes,
            pending: pending.clone(),
            replies: outgoing.clone(),
            invalidations: setup.invalidations.clone(),
            exited: exited.clone(),
            done: reader_done,
        }));
        tokio::spawn(own(Owner {
            child,
            stop: stop_rx,
            close_stdin,
            grace: setup.stop_grace,
            label: setup.label.clone(),
            pending: pending.clone(),
            exit_tx,
            invalidations: setup.invalidations,
            reader_finished,
        }));
        Ok(RunningChild {
            label: setup.label,
            pid,
            outgoing,
            pending,
            next_id: AtomicI64::new(1),
            exited,
            stop: Mutex::new(Some(stop)),
            started_generation,
        })
    }

    /// The process id.
    pub(super) fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// How it ended, once it has.
    pub(super) fn exit(&self) -> Option<ExitText> {
        self.exited.borrow().clone()
    }

    /// Whether requests can still be answered.
    pub(super) fn is_usable(&self) -> bool {
        self.exit().is_none()
            && self
                .pending
                .lock()
                .map(|pending| pending.closed.is_none())
                .unwrap_or(false)
    }

    /// Why it can answer nothing more, when it cannot.
    pub(super) fn closed_reason(&self) -> Option<String> {
        if let Some(exit) = self.exit() {
            return Some(exited_text(&exit));
        }
        self.pending
            .lock()
            .ok()
            .and_then(|pending| pending.closed.clone())
    }

    /// Sends `method` with `params` and waits for the answer, at most `timeout` in all; the
    /// result read strictly (it is interpreted: a negotiation).
    pub(super) async fn request(
        &self,
        method: &str,
        params: Map<String, Value>,
        timeout: Duration,
    ) -> Result<Value, UpstreamError> {
        let body = |id| {
            Message::Request(Request::new(RequestId::Number(id), method, Some(params))).to_vec()
        };
        self.request_strict(method, body, timeout).await
    }

    /// As [`RunningChild::request`], the message written by `body` given its request id.
    pub(super) async fn request_strict(
        &self,
        method: &str,
        body: impl FnOnce(i64) -> Vec<u8>,
        timeout: Duration,
    ) -> Result<Value, UpstreamError> {
        let result = self.request_written(method, body, timeout).await?;
        result.to_value().map_err(|error| {
            self.error(
                method,
                Failure::Garbage(format!("the result is not strict JSON: {error}")),
            )
        })
    }

    /// As [`RunningChild::request`], with the message written by `body` given its request id
    /// (a `tools/call` carries the client's `arguments` as written:
    /// `crate::upstream::request_body`), and the result as the child wrote it (docs/design.md
    /// §5, "Pass-through data is not rewritten").
    pub(super) async fn request_written(
        &self,
        method: &str,
        body: impl FnOnce(i64) -> Vec<u8>,
        timeout: Duration,
    ) -> Result<RawJson, UpstreamError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        {
            let Ok(mut pending) = self.pending.lock() else {
                return Err(self.error(method, Failure::Closed("internal state lost".into())));
            };
            if let Some(reason) = &pending.closed {
                return Err(self.error(method, Failure::Closed(reason.clone())));
            }
            pending.waiters.insert(id, tx);
        }
        // Removes the waiter however this ends (answer, timeout, or the caller giving up).
        let _waiting = Waiting {
            pending: &self.pending,
            id,
        };
        let line = body(id);
        let exchange = async {
            if self.outgoing.send(line).await.is_err() {
                return Err(Failure::Closed(
                    self.closed_reason()
                        .unwrap_or_else(|| "its stdin is closed".to_owned()),
                ));
            }
            rx.await.unwrap_or_else(|_| {
                Err(Failure::Closed(
                    self.closed_reason()
                        .unwrap_or_else(|| "it stopped answering".to_owned()),
                ))
            })
        };
        match tokio::time::timeout(timeout, exchange).await {
            Ok(answer) => answer.map_err(|failure| self.error(method, failure)),
            Err(_) => {
                // Tell the server to stop working on it (MCP cancellation); best effort.
                let cancel = Message::Notification(Notification {
                    method: methods::NOTIFICATIONS_CANCELLED.to_owned(),
                    params: Some(Map::from_iter([
                        ("requestId".to_owned(), Value::from(id)),
                        (
                            "reason".to_owned(),
                            Value::from("the gateway's request timeout elapsed"),
                        ),
                    ])),
                });
                let _ = self.outgoing.try_send(cancel.to_vec());
                Err(UpstreamError::Timeout {
                    url: self.label.to_string(),
                    phase: TimeoutPhase::Response,
                    timeout,
                })
            }
        }
    }

    /// Sends a notification (no answer expected).
    pub(super) async fn notify(
        &self,
        method: &str,
        timeout: Duration,
    ) -> Result<(), UpstreamError> {
        let line = Message::Notification(Notification {
            method: method.to_owned(),
            params: None,
        })
        .to_vec();
        match tokio::time::timeout(timeout, self.outgoing.send(line)).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err(self.error(
                method,
                Failure::Closed(
                    self.closed_reason()
                        .unwrap_or_else(|| "its stdin is closed".to_owned()),
                ),
            )),
            Err(_) => Err(UpstreamError::Timeout {
                url: self.label.to_string(),
                phase: TimeoutPhase::Response,
                timeout,
            }),
        }
    }

    /// Stops the process (stdin closed, then SIGTERM, then SIGKILL, each after the grace
    /// period) and waits until it is gone; returns how it ended.
    pub(super) async fn stop(&self) -> Option<ExitText> {
        if let Some(stop) = self.stop.lock().ok().and_then(|mut slot| slot.take()) {
            let _ = stop.send(());
        }
        let mut exited = self.exited.clone();
        exited
            .wait_for(Option::is_some)
            .await
            .ok()
            .and_then(|exit| exit.clone())
    }

    fn error(&self, method: &str, failure: Failure) -> UpstreamError {
        let url = self.label.to_string();
        let method = method.to_owned();
        match failure {
            Failure::Closed(detail) => UpstreamError::ConnectionClosed {
                url,
                method,
                detail,
            },
            Failure::TooLong(limit) => UpstreamError::ResponseTooLarge { url, method, limit },
            Failure::Garbage(detail) => UpstreamError::Malformed {
                url,
                method,
                detail,
            },
            Failure::JsonRpc(error) => UpstreamError::JsonRpc {
                url,
                method,
                code: error.code,
                message: error.message,
                data: error.data.map(Box::new),
            },
        }
    }
}

/// `the server process exited (exit status: 3)`.
fn exited_text(exit: &str) -> String {
    format!("the server process exited ({exit})")
}

struct Waiting<'a> {
    pending: &'a Mutex<Pending>,
    id: i64,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if let Ok(mut pending) = self.pending.lock() {
            pending.waiters.remove(&self.id);
        }
    }
}

async fn write_stdin(
    mut stdin: ChildStdin,
    mut queue: mpsc::Receiver<Vec<u8>>,
    close: Arc<Notify>,
) {
    loop {
        let mut line = tokio::select! {
            () = close.notified() => break,
            line = queue.recv() => match line {
                Some(line) => line,
                None => break,
            },
        };
        line.push(b'\n');
        let written = tokio::select! {
            () = close.notified() => break,
            written = async {
                stdin.write_all(&line).await?;
                stdin.flush().await
            } => written,
        };
        if written.is_err() {
            // The child closed its stdin (or exited): the reader and the owner report why.
            break;
        }
    }
    // Dropping stdin closes the pipe: the MCP way of asking a stdio server to exit.
    let _ = stdin.shutdown().await;
}

struct Reader {
    stdout: ChildStdout,
    label: Arc<str>,
    limit: usize,
    pending: Arc<Mutex<Pending>>,
    replies: mpsc::Sender<Vec<u8>>,
    invalidations: Arc<watch::Sender<u64>>,
    exited: watch::Receiver<Option<ExitText>>,
    done: oneshot::Sender<()>,
}

async fn read_stdout(reader: Reader) {
    let Reader {
        stdout,
        label,
        limit,
        pending,
        replies,
        invalidations,
        mut exited,
        done,
    } = reader;
    let mut stdout = BufReader::new(stdout);
    let mut line = Vec::new();
    let ended = loop {
        let read = match read_line(&mut stdout, &mut line, limit).await {
            Ok(read) => read,
            Err(error) => break format!("reading its stdout failed: {error}"),
        };
        let failure = match read {
            LineRead::End => break "it closed its stdout".to_owned(),
            LineRead::TooLong { length } => {
                tracing::warn!(
                    upstream = %label,
                    "local server {label} wrote a {length}-byte line, over the {limit}-byte \
                     limit; discarded, and every request in flight fails"
                );
                Failure::TooLong(limit)
            }
            LineRead::Line if line.iter().all(u8::is_ascii_whitespace) => continue,
            LineRead::Line => match Message::from_slice(&line) {
                Ok(Message::Response(response)) => {
                    answer(&label, &pending, response);
                    continue;
                }
                Ok(Message::Notification(notification)) => {
                    if notification.method == methods::NOTIFICATIONS_TOOLS_LIST_CHANGED {
                        tracing::info!(upstream = %label, "local server {label}: tools/list_changed");
                        invalidations.send_modify(|generation| *generation += 1);
                    }
                    continue;
                }
                Ok(Message::Request(request)) => {
                    answer_server_request(&replies, request);
                    continue;
                }
                Err(error) => {
                    let detail = format!(
                        "it wrote a line that is not JSON-RPC ({error}): {}",
                        excerpt(&line, EXCERPT_CHARS)
                    );
                    tracing::warn!(upstream = %label, "local server {label}: {detail}");
                    Failure::Garbage(detail)
                }
            },
        };
        if let Ok(mut pending) = pending.lock() {
            pending.fail_all(&failure);
        }
    };
    // Name the exit when it follows at once (it usually does), for a precise error.
    let exit = tokio::time::timeout(EXIT_STATUS_WAIT, exited.wait_for(Option::is_some))
        .await
        .ok()
        .and_then(Result::ok)
        .and_then(|exit| exit.clone());
    let reason = exit.as_deref().map(exited_text).unwrap_or(ended);
    if let Ok(mut pending) = pending.lock() {
        if pending.closed.is_none() {
            pending.closed = Some(reason.clone());
        }
        pending.fail_all(&Failure::Closed(reason));
    }
    let _ = done.send(());
}

/// Hands a response to the caller waiting for its id.
fn answer(label: &str, pending: &Mutex<Pending>, response: Response) {
    let Ok(mut pending) = pending.lock() else {
        return;
    };
    let outcome = match response.payload {
        ResponsePayload::Result(result) => Ok(result),
        ResponsePayload::Error(error) => Err(Failure::JsonRpc(error)),
    };
    match response.id {
        Some(RequestId::Number(id)) => match pending.waiters.remove(&id) {
            Some(waiter) => {
                let _ = waiter.send(outcome);
            }
            None => {
                tracing::debug!(upstream = %label, id, "answer to no request in flight (late, after a timeout?)")
            }
        },
        Some(RequestId::String(id)) => {
            tracing::debug!(upstream = %label, %id, "answer with an id the gateway never sent");
        }
        // An error without an id answers a message the server could not read: every request in
        // flight may be the one, so each fails with it rather than waiting for its deadline.
        None => match outcome {
            Err(failure) => pending.fail_all(&failure),
            Ok(_) => tracing::debug!(upstream = %label, "a result with a null id; ignored"),
        },
    }
}

/// Answers what a server asks of its client: `ping`, and -32601 for anything else (the
/// gateway offers no client capabilities: no sampling, roots or elicitation).
fn answer_server_request(replies: &mpsc::Sender<Vec<u8>>, request: Request) {
    let response = if request.method == methods::PING {
        Response::result(request.id, Value::Object(Map::new()))
    } else {
        Response::error(
            Some(request.id),
            ErrorObject::new(
                error_codes::METHOD_NOT_FOUND,
                format!(
                    "Method not found: the gateway does not serve {:?} to its upstreams",
                    excerpt(request.method.as_bytes(), EXCERPT_CHARS)
                ),
            ),
        )
    };
    // Never block the reader on a full queue: a server that asks faster than it reads loses
    // answers, not the gateway's memory.
    let _ = replies.try_send(Message::Response(response).to_vec());
}

struct Owner {
    child: Child,
    stop: oneshot::Receiver<()>,
    close_stdin: Arc<Notify>,
    grace: Duration,
    label: Arc<str>,
    pending: Arc<Mutex<Pending>>,
    exit_tx: watch::Sender<Option<ExitText>>,
    invalidations: Arc<watch::Sender<u64>>,
    reader_finished: oneshot::Receiver<()>,
}

/// Waits for the process to exit, or stops it when asked (or when its `RunningChild` is
/// dropped); then records how it ended, bumps the invalidation generation (a new process may
/// serve other tools), lets the reader deliver the answers still in the pipe, and fails what
/// is still in flight (a grandchild may hold the pipe open: the reader is not waited for
/// long).
async fn own(owner: Owner) {
    let Owner {
        mut child,
        mut stop,
        close_stdin,
        grace,
        label,
        pending,
        exit_tx,
        invalidations,
        reader_finished,
    } = owner;
    let exit = tokio::select! {
        status = child.wait() => describe(status),
        _ = &mut stop => stop_child(&mut child, &close_stdin, grace, &label).await,
    };
    tracing::info!(upstream = %label, "local server {label} exited ({exit})");
    let reason = exited_text(&exit);
    // The bump comes first: a process started after this one is seen gone has a later
    // generation than every listing this one served.
    invalidations.send_modify(|generation| *generation += 1);
    let _ = exit_tx.send(Some(exit));
    let _ = tokio::time::timeout(EXIT_STATUS_WAIT, reader_finished).await;
    if let Ok(mut pending) = pending.lock() {
        pending.closed = Some(reason.clone());
        pending.fail_all(&Failure::Closed(reason));
    }
}

/// The MCP stdio shutdown: close stdin and wait; then SIGTERM and wait; then SIGKILL.
async fn stop_child(
    child: &mut Child,
    close_stdin: &Notify,
    grace: Duration,
    label: &str,
) -> ExitText {
    close_stdin.notify_one();
    if let Ok(status) = tokio::time::timeout(grace, child.wait()).await {
        return describe(status);
    }
    // Still running and not reaped, so its pid cannot have been reused yet. SIGTERM goes
    // through kill(1): the gateway has no unsafe code, and std and tokio only send SIGKILL.
    if let Some(pid) = child.id() {
        tracing::info!(upstream = %label, pid, "local server {label} still running {} ms after its stdin closed; SIGTERM", grace.as_millis());
        let sent = tokio::time::timeout(
            grace,
            tokio::process::Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .kill_on_drop(true)
                .status(),
        )
        .await;
        if matches!(sent, Ok(Ok(status)) if status.success()) {
            if let Ok(status) = tokio::time::timeout(grace, child.wait()).await {
                return describe(status);
            }
        } else {
            tracing::warn!(upstream = %label, pid, "local server {label}: kill -TERM could not be sent ({sent:?})");
        }
    }
    tracing::warn!(upstream = %label, "local server {label} did not stop after SIGTERM; SIGKILL");
    if let Err(error) = child.start_kill() {
        tracing::warn!(upstream = %label, "local server {label}: SIGKILL failed: {error}");
    }
    match tokio::time::timeout(grace, child.wait()).await {
        Ok(status) => describe(status),
        Err(_) => "not reaped after SIGKILL".to_owned(),
    }
}

fn describe(status: std::io::Result<std::process::ExitStatus>) -> ExitText {
    match status {
        Ok(status) => {
            #[cfg(unix)]
            {
                use std::os::unix::process::ExitStatusExt as _;
                if let Some(signal) = status.signal() {
                    let name = match signal {
                        9 => " (SIGKILL)",
                        15 => " (SIGTERM)",
                        6 => " (SIGABRT)",
                        11 => " (SIGSEGV)",
                        _ => "",
                    };
                    return format!("signal: {signal}{name}");
                }
            }
            status.to_string()
        }
        Err(error) => format!("its status could not be read: {error}"),
    }
}
