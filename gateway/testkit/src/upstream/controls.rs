//! The shared state of a running demo upstream and the test controls over it.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{broadcast, watch};

use super::DemoUpstreamError;
use super::config::{DemoUpstreamConfig, ResponseMode};
use super::identity::DemoIdentity;

/// A misbehaviour the demo upstream can be told to show.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fault {
    /// Close the connection instead of answering (the client sees it closed mid-exchange).
    Reset,
    /// Answer after this delay (to trigger the client's timeout).
    Delay(Duration),
    /// HTTP 200 `application/json` with a body that is not JSON.
    NotJson,
    /// A JSON-RPC response with a duplicate member name (the strict reader refuses it).
    DuplicateMember,
    /// A JSON-RPC response whose id is not the request's.
    WrongId,
    /// HTTP 200 with `Content-Type: text/plain`.
    WrongContentType,
    /// This HTTP status with a plain-text body.
    HttpStatus(u16),
    /// An SSE stream that ends without the response.
    SseWithoutResponse,
    /// A JSON-RPC error response with this code and message.
    JsonRpcError(i64, String),
    /// Forget every session, then answer HTTP 404 "Session not found" (a session lost between
    /// the client's last request and this one).
    SessionLost,
}

pub(super) struct State {
    pub(super) config: DemoUpstreamConfig,
    tools: Mutex<Vec<Value>>,
    response_mode: Mutex<ResponseMode>,
    sessions: Mutex<HashSet<String>>,
    next_session: AtomicU64,
    pending_list_changed: AtomicU64,
    pub(super) list_changed: broadcast::Sender<()>,
    fault: Mutex<Option<(Option<String>, Fault)>>,
    delay: Mutex<Option<Duration>>,
    tls: Mutex<Arc<rustls::ServerConfig>>,
    /// The ticket keys and session cache every identity is served with: as a real server
    /// keeps them across a certificate change (so a client that resumed would not notice).
    ticketer: Arc<dyn rustls::server::ProducesTickets>,
    session_cache: Arc<dyn rustls::server::StoresServerSessions>,
    bytes_received: AtomicU64,
    requests: AtomicU64,
    methods: Mutex<HashMap<String, u64>>,
    connections_accepted: AtomicU64,
    handshakes_completed: AtomicU64,
    http2_connections: AtomicU64,
    handshakes_resumed: AtomicU64,
    page_padding: AtomicU64,
    call_result: Mutex<Option<toolgate_mcp::RawJson>>,
    last_arguments: Mutex<Option<String>>,
    repeat_cursor: std::sync::atomic::AtomicBool,
    streams_open: AtomicU64,
    streams_opened: AtomicU64,
    /// Bumped to close every connection (and so every event stream).
    pub(super) close_connections: watch::Sender<u64>,
    /// Bumped to end every event stream (sessions forgotten).
    pub(super) close_streams: watch::Sender<u64>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking holder cannot leave these values half-changed (each is replaced whole), so a
    // poisoned lock is still usable.
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl State {
    pub(super) fn new(
        config: DemoUpstreamConfig,
        identity: &DemoIdentity,
    ) -> Result<State, DemoUpstreamError> {
        let ticketer = rustls::crypto::ring::Ticketer::new().map_err(|error| {
            DemoUpstreamError::Certificate {
                detail: error.to_string(),
            }
        })?;
        let session_cache: Arc<dyn rustls::server::StoresServerSessions> =
            rustls::server::ServerSessionMemoryCache::new(256);
        let tls = resumable(identity, &ticketer, &session_cache, config.http2)?;
        let (list_changed, _) = broadcast::channel(64);
        let page_padding = config.page_padding as u64;
        let repeat_cursor = config.repeat_cursor;
        let (close_connections, _) = watch::channel(0);
        let (close_streams, _) = watch::channel(0);
        Ok(State {
            tools: Mutex::new(config.tools.clone()),
            response_mode: Mutex::new(config.response_mode),
            delay: Mutex::new(config.delay),
            config,
            sessions: Mutex::new(HashSet::new()),
            next_session: AtomicU64::new(1),
            pending_list_changed: AtomicU64::new(0),
            list_changed,
            fault: Mutex::new(None),
            tls: Mutex::new(tls),
            ticketer,
            session_cache,
            bytes_received: AtomicU64::new(0),
            requests: AtomicU64::new(0),
            methods: Mutex::new(HashMap::new()),
            connections_accepted: AtomicU64::new(0),
            handshakes_completed: AtomicU64::new(0),
            http2_connections: AtomicU64::new(0),
            handshakes_resumed: AtomicU64::new(0),
            page_padding: AtomicU64::new(page_padding),
            call_result: Mutex::new(None),
            last_arguments: Mutex::new(None),
            repeat_cursor: std::sync::atomic::AtomicBool::new(repeat_cursor),
            streams_open: AtomicU64::new(0),
            streams_opened: AtomicU64::new(0),
            close_connections,
            close_streams,
        })
    }

    pub(super) fn tools(&self) -> Vec<Value> {
        lock(&self.tools).clone()
    }

    pub(super) fn response_mode(&self) -> ResponseMode {
        *lock(&self.response_mode)
    }

    pub(super) fn open_session(&self) -> String {
        let number = self.next_session.fetch_add(1, Ordering::Relaxed);
        let id = format!("demo-session-{number}");
        lock(&self.sessions).insert(id.clone());
        id
    }

    pub(super) fn has_session(&self, id: &str) -> bool {
        lock(&self.sessions).contains(id)
    }

    pub(super) fn close_session(&self, id: &str) -> bool {
        lock(&self.sessions).remove(id)
    }

    pub(super) fn take_pending_list_changed(&self) -> u64 {
        self.pending_list_changed.swap(0, Ordering::Relaxed)
    }

    /// The fault for `method`, if one is set for it.
    pub(super) fn fault_for(&self, method: &str) -> Option<Fault> {
        match &*lock(&self.fault) {
            Some((None, fault)) => Some(fault.clone()),
            Some((Some(only), fault)) if only == method => Some(fault.clone()),
            _ => None,
        }
    }

    pub(super) fn call_result(&self) -> Option<toolgate_mcp::RawJson> {
        lock(&self.call_result).clone()
    }

    pub(super) fn record_arguments(&self, arguments: &str) {
        *lock(&self.last_arguments) = Some(arguments.to_owned());
    }

    pub(super) fn page_padding(&self) -> usize {
        usize::try_from(self.page_padding.load(Ordering::Relaxed)).unwrap_or(usize::MAX)
    }

    pub(super) fn repeat_cursor(&self) -> bool {
        self.repeat_cursor.load(Ordering::Relaxed)
    }

    pub(super) fn delay(&self) -> Option<Duration> {
        *lock(&self.delay)
    }

    pub(super) fn tls(&self) -> Arc<rustls::ServerConfig> {
        lock(&self.tls).clone()
    }

    pub(super) fn count_bytes(&self, count: usize) {
        self.bytes_received
            .fetch_add(count as u64, Ordering::Relaxed);
    }

    pub(super) fn count_request(&self, method: &str) {
        self.requests.fetch_add(1, Ordering::Relaxed);
        *lock(&self.methods).entry(method.to_owned()).or_insert(0) += 1;
    }

    pub(super) fn count_connection(&self) {
        self.connections_accepted.fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn count_handshake(&self, resumed: bool) {
        self.handshakes_completed.fetch_add(1, Ordering::Relaxed);
        if resumed {
            self.handshakes_resumed.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub(super) fn count_http2_connection(&self) {
        self.http2_connections.fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn stream_opened(&self) {
        self.streams_opened.fetch_add(1, Ordering::Relaxed);
        self.streams_open.fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn stream_closed(&self) {
        self.streams_open.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The test controls of a running demo upstream. Cheap to clone.
#[derive(Clone)]
pub struct DemoControls {
    pub(super) state: Arc<State>,
}

impl std::fmt::Debug for DemoControls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DemoControls").finish_non_exhaustive()
    }
}

impl DemoControls {
    /// Rug-pull: changes the description of `tool` as `tools/list` serves it from now on,
    /// without any notification. Returns whether the tool exists.
    pub fn set_description(&self, tool: &str, description: &str) -> bool {
        let mut tools = lock(&self.state.tools);
        let found = tools
            .iter_mut()
            .find(|definition| definition.get("name").and_then(Value::as_str) == Some(tool));
        match found.and_then(Value::as_object_mut) {
            Some(definition) => {
                definition.insert("description".to_owned(), Value::from(description));
                true
            }
            None => false,
        }
    }

    /// Replaces every tool definition.
    pub fn set_tools(&self, tools: Vec<Value>) {
        *lock(&self.state.tools) = tools;
    }

    /// Removes `tool` from `tools/list` (calls to it then fail with -32602). Returns whether it
    /// was there.
    pub fn remove_tool(&self, tool: &str) -> bool {
        let mut tools = lock(&self.state.tools);
        let before = tools.len();
        tools.retain(|definition| definition.get("name").and_then(Value::as_str) != Some(tool));
        tools.len() != before
    }

    /// Sends `notifications/tools/list_changed` on every open `GET` event stream, and in the
    /// next SSE answer.
    pub fn notify_tools_changed(&self) {
        self.state
            .pending_list_changed
            .fetch_add(1, Ordering::Relaxed);
        let _ = self.state.list_changed.send(());
    }

    /// Answers every `tools/call` with exactly this `result` text from now on (`None`: the
    /// tools' own results): numbers, member order and escapes as written, for pass-through
    /// tests. Returns whether it was well-formed JSON (nothing is set otherwise).
    pub fn set_call_result(&self, result: Option<&str>) -> bool {
        let raw = match result.map(|text| toolgate_mcp::RawJson::from_slice(text.as_bytes())) {
            None => None,
            Some(Ok(raw)) => Some(raw),
            Some(Err(_)) => return false,
        };
        *lock(&self.state.call_result) = raw;
        true
    }

    /// The `params.arguments` of the last `tools/call`, exactly as received.
    pub fn last_arguments(&self) -> Option<String> {
        lock(&self.state.last_arguments).clone()
    }

    /// Pads every `tools/list` page from now on (see `DemoUpstreamConfig::page_padding`).
    pub fn set_page_padding(&self, bytes: usize) {
        self.state
            .page_padding
            .store(bytes as u64, Ordering::Relaxed);
    }

    /// Starts or stops the cursor loop (see `DemoUpstreamConfig::repeat_cursor`).
    pub fn set_repeat_cursor(&self, enabled: bool) {
        self.state.repeat_cursor.store(enabled, Ordering::Relaxed);
    }

    /// Delays every answer by `delay` (`None`: answer at once).
    pub fn set_delay(&self, delay: Option<Duration>) {
        *lock(&self.state.delay) = delay;
    }

    /// Shows `fault` on every request for `method` (every method when `None`) until cleared.
    pub fn set_fault(&self, method: Option<&str>, fault: Fault) {
        *lock(&self.state.fault) = Some((method.map(str::to_owned), fault));
    }

    /// Behaves well again.
    pub fn clear_fault(&self) {
        *lock(&self.state.fault) = None;
    }

    /// Forgets every session: requests with an old `Mcp-Session-Id` get HTTP 404, and open
    /// event streams end.
    pub fn forget_sessions(&self) {
        lock(&self.state.sessions).clear();
        self.state
            .close_streams
            .send_modify(|generation| *generation += 1);
    }

    /// Closes every open connection (clients must reconnect). Over HTTP/2 the connection is
    /// dropped without a GOAWAY, as a crashed server or a broken network drops it.
    pub fn close_connections(&self) {
        self.state
            .close_connections
            .send_modify(|generation| *generation += 1);
    }

    /// Switches between JSON and SSE answers.
    pub fn set_response_mode(&self, mode: ResponseMode) {
        *lock(&self.state.response_mode) = mode;
    }

    /// Presents `identity` on every new connection from now on (an impostor taking over the
    /// address, or a server given a new key). Existing connections keep the identity they were
    /// made with. The ticket keys and session cache stay the same, as a server keeps them when
    /// its certificate changes: a client that resumed a session would not see the new key.
    ///
    /// # Errors
    ///
    /// [`DemoUpstreamError::Certificate`] if no TLS configuration can be made from it.
    pub fn present_identity(&self, identity: &DemoIdentity) -> Result<(), DemoUpstreamError> {
        let config = resumable(
            identity,
            &self.state.ticketer,
            &self.state.session_cache,
            self.state.config.http2,
        )?;
        *lock(&self.state.tls) = config;
        Ok(())
    }

    /// Application bytes received (decrypted HTTP, after a completed handshake), all
    /// connections together. An impostor that a pinning client refused receives none.
    pub fn bytes_received(&self) -> u64 {
        self.state.bytes_received.load(Ordering::Relaxed)
    }

    /// JSON-RPC messages received over `POST`.
    pub fn requests_received(&self) -> u64 {
        self.state.requests.load(Ordering::Relaxed)
    }

    /// JSON-RPC messages received with this method.
    pub fn method_count(&self, method: &str) -> u64 {
        lock(&self.state.methods).get(method).copied().unwrap_or(0)
    }

    /// TCP connections accepted.
    pub fn connections_accepted(&self) -> u64 {
        self.state.connections_accepted.load(Ordering::Relaxed)
    }

    /// TLS handshakes completed (a client that refused the certificate completes none).
    pub fn handshakes_completed(&self) -> u64 {
        self.state.handshakes_completed.load(Ordering::Relaxed)
    }

    /// TLS handshakes that resumed an earlier session (a ticket or a session id) instead of a
    /// full handshake: on such a handshake no certificate is presented, so the client's
    /// verifier does not run. Every handshake is counted in
    /// [`handshakes_completed`](Self::handshakes_completed) too.
    pub fn handshakes_resumed(&self) -> u64 {
        self.state.handshakes_resumed.load(Ordering::Relaxed)
    }

    /// Connections served over HTTP/2 (the client selected `h2`; see
    /// `DemoUpstreamConfig::http2`). Every one is counted in
    /// [`handshakes_completed`](Self::handshakes_completed) too.
    pub fn http2_connections(&self) -> u64 {
        self.state.http2_connections.load(Ordering::Relaxed)
    }

    /// `GET` event streams open now.
    pub fn event_streams_open(&self) -> u64 {
        self.state.streams_open.load(Ordering::Relaxed)
    }

    /// `GET` event streams opened since the start.
    pub fn event_streams_opened(&self) -> u64 {
        self.state.streams_opened.load(Ordering::Relaxed)
    }
}

/// `identity`'s server configuration with the shared ticket keys and session cache: the server
/// issues TLS 1.3 tickets and resumes any session a client offers, as OpenSSL, Go, nginx and
/// rustls servers do by default. `http2`: offer `h2` in ALPN (see `DemoUpstreamConfig::http2`).
fn resumable(
    identity: &DemoIdentity,
    ticketer: &Arc<dyn rustls::server::ProducesTickets>,
    session_cache: &Arc<dyn rustls::server::StoresServerSessions>,
    http2: bool,
) -> Result<Arc<rustls::ServerConfig>, DemoUpstreamError> {
    let mut config = Arc::unwrap_or_clone(identity.server_config()?);
    if http2 {
        // The server's preference decides: h2 whenever the client offers it.
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    }
    config.ticketer = ticketer.clone();
    config.session_storage = session_cache.clone();
    Ok(Arc::new(config))
}
