//! The client: negotiation of the protocol generation, sessions, listing and calling.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use bytes::Bytes;
use catalog_store::UpstreamUrl;
use http::{HeaderName, HeaderValue, StatusCode};
use serde_json::{Map, Value, json};
use server_identity::ServerAnchors;
use tokio::sync::watch;

use super::answer_memo::AnswerMemo;
use super::connection::{Lease, Pool};
use super::endpoint::Endpoint;
use super::error::{TimeoutPhase, UpstreamError};
use super::identity::ObservedIdentity;
use super::listener;
use super::names;
use super::options::UpstreamOptions;
use super::request_body::{WrittenRequest, client_info};
use super::transport::{Answer, Outgoing, Transport};
use crate::audit::ObservedIdentity as AuditIdentity;
use crate::definition_check::{ToolsPage, ToolsPageError};
use crate::mcp::{
    self, Generation, Message, Notification, ProtocolVersion, RawJson, Request, RequestId,
    ResponsePayload,
};

const METHOD_NOT_FOUND: i64 = mcp::error_codes::METHOD_NOT_FOUND;

/// The protocol state agreed with the upstream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Negotiated {
    /// 2026-07-28: no session.
    Stateless,
    /// The session generation, with the session id the server issued (if it issued one).
    Session {
        version: ProtocolVersion,
        session_id: Option<Arc<str>>,
    },
}

/// A client for one upstream MCP server. Cheap to clone; clones share connections, the
/// negotiated session and the invalidation signal.
#[derive(Clone)]
pub struct UpstreamClient {
    inner: Arc<Inner>,
}

pub(super) struct Inner {
    pub(super) transport: Transport,
    options: UpstreamOptions,
    pub(super) invalidations: watch::Sender<u64>,
    next_id: AtomicI64,
    /// What [`UpstreamClient::take_connections_made`] has handed out.
    connections_taken: AtomicU64,
    state: Mutex<Option<Negotiated>>,
    negotiating: tokio::sync::Mutex<()>,
    listener: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Ok(mut listener) = self.listener.lock() {
            if let Some(task) = listener.take() {
                task.abort();
            }
        }
    }
}

impl std::fmt::Debug for UpstreamClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UpstreamClient")
            .field("url", &self.inner.transport.endpoint.url)
            .field("negotiated", &self.inner.current())
            .finish_non_exhaustive()
    }
}

impl UpstreamClient {
    /// A client for the upstream at `url`, connecting with `tls` (from
    /// `server_identity::client_config`, which enforces the catalog's anchors in the handshake;
    /// ALPN is set on a copy to `h2` and `http/1.1`, or `http/1.1` alone without
    /// [`UpstreamOptions::offer_http2`]). Nothing is sent until the first request.
    pub fn new(
        url: &UpstreamUrl,
        tls: Arc<rustls::ClientConfig>,
        options: UpstreamOptions,
    ) -> UpstreamClient {
        UpstreamClient::build(url, tls, None, options)
    }

    /// As [`UpstreamClient::new`], given also the anchors `tls` was made from, so that the
    /// identity of every connection says which pin matched (the primary `tls_fingerprint` or a
    /// backup, [`ObservedIdentity::pin`]); a backup match is logged at warn.
    pub fn with_anchors(
        url: &UpstreamUrl,
        tls: Arc<rustls::ClientConfig>,
        anchors: ServerAnchors,
        options: UpstreamOptions,
    ) -> UpstreamClient {
        UpstreamClient::build(url, tls, Some(anchors), options)
    }

    fn build(
        url: &UpstreamUrl,
        tls: Arc<rustls::ClientConfig>,
        anchors: Option<ServerAnchors>,
        options: UpstreamOptions,
    ) -> UpstreamClient {
        let endpoint = Arc::new(Endpoint::new(url));
        let pool = Pool::new(
            endpoint.clone(),
            tls,
            anchors,
            options.connect_timeout,
            options.max_idle_connections,
            options.offer_http2,
        );
        let (invalidations, _) = watch::channel(0);
        UpstreamClient {
            inner: Arc::new(Inner {
                transport: Transport {
                    endpoint,
                    pool,
                    request_timeout: options.request_timeout,
                    max_response_bytes: options.max_response_bytes,
                    listing_answers: AnswerMemo::new(options.max_listing_bytes),
                },
                options,
                invalidations,
                next_id: AtomicI64::new(1),
                connections_taken: AtomicU64::new(0),
                state: Mutex::new(None),
                negotiating: tokio::sync::Mutex::new(()),
                listener: Mutex::new(None),
            }),
        }
    }

    /// Every tool the upstream lists, every page followed (`nextCursor`), each definition as
    /// received, within the listing's bounds (docs/design.md §5, "Listings are bounded").
    ///
    /// # Errors
    ///
    /// [`UpstreamError`]; see [`UpstreamError::reason`]. The bounds: more pages than
    /// [`UpstreamOptions::max_list_pages`] is [`UpstreamError::TooManyPages`], more bytes
    /// than [`UpstreamOptions::max_listing_bytes`] [`UpstreamError::ListingTooLarge`], longer
    /// than [`UpstreamOptions::listing_deadline`] [`UpstreamError::ListingTimeout`], and a
    /// cursor given twice [`UpstreamError::RepeatedCursor`].
    pub async fn list_tools(&self) -> Result<Vec<Value>, UpstreamError> {
        let mut tools = Vec::new();
        self.list(|result| ToolsPage::read_values(result, &mut tools))
            .await?;
        Ok(tools)
    }

    /// One listing within its deadline, as [`list_tools`](Self::list_tools) makes it: `page`
    /// reads each page's `result` bytes and returns its `nextCursor` (the definition check
    /// digests the tools of each page from those bytes).
    pub(crate) async fn list(
        &self,
        page: impl FnMut(&[u8]) -> Result<Option<String>, ToolsPageError> + Send,
    ) -> Result<(), UpstreamError> {
        let options = &self.inner.options;
        let deadline = options.listing_deadline();
        let mut pages = 0;
        let listing = tokio::time::timeout(deadline, self.list_pages(&mut pages, page)).await;
        listing.unwrap_or_else(|_| {
            // No page came back in as long as a request may take: the upstream did not answer
            // at all, which is a request's timeout (unavailable), not a listing dragged out
            // past its bound. Decided here rather than by which of the two timers (equal by
            // default, the first page's started a moment later) happens to fire first.
            if pages == 0 && deadline >= options.request_timeout {
                return Err(UpstreamError::Timeout {
                    url: self.url().to_owned(),
                    phase: TimeoutPhase::Response,
                    timeout: options.request_timeout,
                });
            }
            Err(UpstreamError::ListingTimeout {
                url: self.url().to_owned(),
                deadline,
                pages,
            })
        })
    }

    /// The pages of one listing; `pages` counts those read whole.
    async fn list_pages(
        &self,
        pages: &mut usize,
        mut page_read: impl FnMut(&[u8]) -> Result<Option<String>, ToolsPageError> + Send,
    ) -> Result<(), UpstreamError> {
        let method = mcp::methods::TOOLS_LIST;
        let options = &self.inner.options;
        let mut cursor: Option<String> = None;
        // Every cursor given so far, with the page that gave it.
        let mut cursors: HashMap<String, usize> = HashMap::new();
        let mut bytes = 0usize;
        for page in 1..=options.max_list_pages {
            let listing = WrittenRequest::ToolsList {
                cursor: cursor.as_deref(),
            };
            // Each page is read with what is left of the budget as its limit, so a listing
            // never holds more than the budget, however its pages are cut.
            let remaining = options.max_listing_bytes.saturating_sub(bytes);
            let exchanged = match self.request(listing, Some(remaining)).await {
                Ok(exchanged) => exchanged,
                Err(UpstreamError::ResponseTooLarge { limit, .. })
                    if limit < options.max_response_bytes =>
                {
                    return Err(UpstreamError::ListingTooLarge {
                        url: self.url().to_owned(),
                        limit: options.max_listing_bytes,
                        pages: *pages,
                        bytes,
                    });
                }
                Err(error) => return Err(error),
            };
            bytes += exchanged.bytes;
            *pages += 1;
            // Definitions are hashed: a page is read strictly.
            let read = page_read(exchanged.result.as_bytes());
            let read = read.map_err(|error| self.malformed(method, &error.to_string()));
            let Some(next) = read? else {
                return Ok(());
            };
            if let Some(first) = cursors.get(&next) {
                return Err(UpstreamError::RepeatedCursor {
                    url: self.url().to_owned(),
                    cursor: next.chars().take(100).collect(),
                    page,
                    first: *first,
                });
            }
            cursors.insert(next.clone(), page);
            cursor = Some(next);
        }
        Err(UpstreamError::TooManyPages {
            url: self.url().to_owned(),
            limit: options.max_list_pages,
        })
    }

    /// Establishes the path a `tools/call` will take: the protocol state, and a connection
    /// that passed the pinning verifier in its own handshake. Made *before* the definition
    /// decision (docs/design.md §5, "A check is never outrun"): a reconnect found here bumps
    /// [`invalidations`](Self::invalidations) first, so a `max-age` listing from before it is
    /// not used. The call then goes on this connection only ([`call_tool_on`](Self::call_tool_on)).
    ///
    /// # Errors
    ///
    /// [`UpstreamError`]: negotiation or the connection failed (an impostor is
    /// [`UpstreamError::Identity`]).
    pub async fn call_path(&self) -> Result<CallPath, UpstreamError> {
        let negotiated = self.ensure_negotiated().await?;
        let mut lease = self.inner.transport.pool.checkout().await?;
        if lease.sender.reconnected {
            // Notifications may have been missed while no connection was open.
            self.inner.bump(1);
            lease.sender.reconnected = false;
        }
        let identity = lease.sender.identity.clone();
        let audit_identity = lease.sender.audit_identity.clone();
        Ok(CallPath {
            lease,
            negotiated,
            identity,
            audit_identity,
        })
    }

    /// Calls the upstream's tool `name` with `arguments` and request `_meta`, and returns the
    /// upstream's `result` object exactly as received (content, structuredContent, isError,
    /// _meta; nothing is deserialized into a typed model): [`call_path`](Self::call_path),
    /// then [`call_tool_on`](Self::call_tool_on).
    ///
    /// # Errors
    ///
    /// As [`call_tool_on`](Self::call_tool_on).
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Option<Value>,
        meta: Option<Map<String, Value>>,
    ) -> Result<Value, UpstreamError> {
        let path = self.call_path().await?;
        let arguments = arguments.as_ref().map(RawJson::from_value);
        let result = self
            .call_tool_on(path, name, arguments, meta.as_ref())
            .await?;
        self.strict(mcp::methods::TOOLS_CALL, &result)
    }

    /// Sends the `tools/call` on `path`, its connection and session only: it is never sent
    /// again on another connection or into a new session (that would outrun the check made
    /// for this path). `arguments` are written as they are, and the result is returned as the
    /// upstream wrote it (docs/design.md §5, "Pass-through data is not rewritten": checked for
    /// well-formedness only, so a large integer or a `1E+2` is carried unchanged). The request
    /// is written as bytes, `arguments` copied into it as they are; `meta`'s members are passed
    /// in `params._meta` (in 2026-07-28 beside the envelope, whose members replace any of the
    /// same names).
    ///
    /// # Errors
    ///
    /// [`UpstreamError`]; a JSON-RPC error answer is [`UpstreamError::JsonRpc`] with the
    /// upstream's code and message. A tool that failed but answered (`isError: true`) is a
    /// result, not an error. A connection that closed before the call was written is
    /// [`UpstreamError::CallNotSent`]; a session the upstream forgot (HTTP 404)
    /// [`UpstreamError::SessionLost`], after which the next request opens a new session.
    pub async fn call_tool_on(
        &self,
        path: CallPath,
        name: &str,
        arguments: Option<RawJson>,
        meta: Option<&Map<String, Value>>,
    ) -> Result<RawJson, UpstreamError> {
        let method = mcp::methods::TOOLS_CALL;
        let CallPath {
            lease, negotiated, ..
        } = path;
        let call = WrittenRequest::ToolsCall {
            name,
            arguments: arguments.as_ref(),
            meta,
        };
        let outgoing = Outbound::written(&negotiated, call);
        let result = match self
            .exchange_with_status(method, outgoing, Some(lease), None)
            .await
        {
            Ok(exchanged) => exchanged.result,
            Err((error @ UpstreamError::JsonRpc { code, .. }, _)) if code == METHOD_NOT_FOUND => {
                return Err(error);
            }
            Err((_, Some(StatusCode::NOT_FOUND))) if has_session(&negotiated) => {
                self.forget_session(&negotiated).await;
                return Err(UpstreamError::SessionLost {
                    url: self.url().to_owned(),
                });
            }
            Err((error, _)) => return Err(error),
        };
        if !result.is_object() {
            return Err(self.malformed(method, "the result is not an object"));
        }
        Ok(result)
    }

    /// A result read strictly, for what is interpreted (a listing, negotiation).
    fn strict(&self, method: &str, result: &RawJson) -> Result<Value, UpstreamError> {
        result.to_value().map_err(|error| {
            self.malformed(method, &format!("the result is not strict JSON: {error}"))
        })
    }

    /// A counter that increases whenever what was learned from the upstream may be stale: a
    /// `notifications/tools/list_changed` (in an SSE answer or on the session's event stream),
    /// a new session, a reopened event stream, or a reconnect (a new connection made while no
    /// other was live, after an earlier one existed: notifications may have been missed in
    /// between). More connections for concurrent calls are not reconnects.
    pub fn invalidations(&self) -> watch::Receiver<u64> {
        self.inner.invalidations.subscribe()
    }

    /// The upstream URL.
    pub fn url(&self) -> &str {
        &self.inner.transport.endpoint.url
    }

    /// What the upstream presented on the newest connection (every connection passed the
    /// pinning verifier). `None` before the first connection. For the audit of one call, use
    /// the identity of the connection that carries it ([`CallPath::identity`]): this one may
    /// be another connection's.
    pub fn observed_identity(&self) -> Option<ObservedIdentity> {
        self.inner.transport.pool.observed()
    }

    /// The protocol version in use, once negotiated.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.inner.current().map(|negotiated| match negotiated {
            Negotiated::Stateless => ProtocolVersion::V2026_07_28,
            Negotiated::Session { version, .. } => version,
        })
    }

    /// The session id the upstream issued, in the session generation.
    pub fn session_id(&self) -> Option<String> {
        match self.inner.current() {
            Some(Negotiated::Session { session_id, .. }) => session_id.map(|id| id.to_string()),
            _ => None,
        }
    }

    /// How many idle connections are kept for reuse and not known to be closed by the peer.
    pub fn idle_connections(&self) -> usize {
        self.inner.transport.pool.idle_open()
    }

    /// How many TLS connections were made so far (each one verified in its handshake).
    pub fn connections_made(&self) -> u64 {
        self.inner.transport.pool.connections_made()
    }

    /// How many TLS connections were made since this was last asked (all of them the first
    /// time): what a handshake counter adds. Exact under concurrency, each connection taken
    /// once; clones share the count. A client built for a changed server on a reload starts
    /// from its own zero, whatever the URL's earlier clients made.
    pub fn take_connections_made(&self) -> u64 {
        let made = self.connections_made();
        made.saturating_sub(
            self.inner
                .connections_taken
                .fetch_max(made, Ordering::Relaxed),
        )
    }

    /// How many `tools/list` answers were the bytes of an earlier answer with only the id
    /// changed, and so were taken without checking the message again (docs/architecture.md,
    /// step 6). Clones share the count.
    pub fn listing_answers_recognized(&self) -> u64 {
        self.inner.transport.listing_answers.recognized()
    }

    fn malformed(&self, method: &str, detail: &str) -> UpstreamError {
        self.inner.transport.malformed(method, detail.to_owned())
    }

    /// One idempotent request, with negotiation first and one re-initialization when the
    /// upstream has forgotten the session (HTTP 404 on a request with a session id, whatever
    /// the body). `max_bytes` bounds the answer below the response limit.
    async fn request(
        &self,
        request: WrittenRequest<'_>,
        max_bytes: Option<usize>,
    ) -> Result<Exchanged, UpstreamError> {
        let method = request.method();
        let negotiated = self.ensure_negotiated().await?;
        match self
            .exchange_with_status(
                method,
                Outbound::written(&negotiated, request),
                None,
                max_bytes,
            )
            .await
        {
            Ok(exchanged) => Ok(exchanged),
            // A 404 carrying "method not found" is about the method, not the session (FastMCP
            // answers unknown methods with HTTP 404).
            Err((
                error @ UpstreamError::JsonRpc {
                    code: METHOD_NOT_FOUND,
                    ..
                },
                _,
            )) => Err(error),
            Err((error, Some(StatusCode::NOT_FOUND))) => {
                if !has_session(&negotiated) {
                    return Err(error);
                }
                let renewed = self.renegotiate(&negotiated).await?;
                self.exchange_with_status(
                    method,
                    Outbound::written(&renewed, request),
                    None,
                    max_bytes,
                )
                .await
                .map_err(|(error, _)| error)
            }
            Err((error, _)) => Err(error),
        }
    }

    /// Sends one request with exactly these params and headers; the result and the answer's
    /// session id.
    async fn exchange(
        &self,
        method: &str,
        params: Map<String, Value>,
        headers: Vec<(HeaderName, HeaderValue)>,
    ) -> Result<(Value, Option<String>), UpstreamError> {
        let outbound = Outbound {
            params: Params::Map(params),
            headers,
        };
        let exchanged = self
            .exchange_with_status(method, outbound, None, None)
            .await
            .map_err(|(error, _)| error)?;
        Ok((
            self.strict(method, &exchanged.result)?,
            exchanged.session_id,
        ))
    }

    /// As [`Self::exchange`], on `lease` when given, reading at most `max_bytes`, with the
    /// HTTP status of a failed answer beside the error.
    async fn exchange_with_status(
        &self,
        method: &str,
        outbound: Outbound<'_>,
        lease: Option<Lease>,
        max_bytes: Option<usize>,
    ) -> Result<Exchanged, (UpstreamError, Option<StatusCode>)> {
        let number = self.inner.next_request_number();
        let id = RequestId::Number(number);
        let Outbound { params, headers } = outbound;
        let body = match params {
            Params::Map(params) => {
                Message::Request(Request::new(id.clone(), method, Some(params))).to_vec()
            }
            Params::Written { request, envelope } => request.to_bytes(number, envelope),
        };
        let answer = self
            .inner
            .transport
            .post(
                Outgoing {
                    method,
                    id: Some(&id),
                    body: Bytes::from(body),
                    headers,
                    idempotent: method != mcp::methods::TOOLS_CALL,
                    max_bytes,
                },
                lease,
            )
            .await
            .map_err(|error| (error, None))?;
        self.note(&answer);
        // Copied only for an error: a result needs no URL.
        let url = || self.url().to_owned();
        let session_id = answer.session_id.clone();
        let status = answer.status;
        let bytes = answer.body_bytes;
        let outcome = match answer.response {
            Some(response) => match response.payload {
                ResponsePayload::Error(error) => Err(UpstreamError::JsonRpc {
                    url: url(),
                    method: method.to_owned(),
                    code: error.code,
                    message: error.message,
                    data: error.data.map(Box::new),
                }),
                ResponsePayload::Result(result) if answer.status.is_success() => Ok(Exchanged {
                    result,
                    session_id,
                    bytes,
                }),
                ResponsePayload::Result(_) => Err(UpstreamError::HttpStatus {
                    url: url(),
                    method: method.to_owned(),
                    status: answer.status.as_u16(),
                    body: answer.body_excerpt,
                }),
            },
            None if !answer.status.is_success() => Err(UpstreamError::HttpStatus {
                url: url(),
                method: method.to_owned(),
                status: answer.status.as_u16(),
                body: answer.body_excerpt,
            }),
            None => Err(self.malformed(
                method,
                &format!(
                    "HTTP {} without a JSON-RPC response",
                    answer.status.as_u16()
                ),
            )),
        };
        outcome.map_err(|error| (error, (!status.is_success()).then_some(status)))
    }

    /// Records what an answer says about freshness.
    fn note(&self, answer: &Answer) {
        let mut bumps = answer.list_changed;
        if answer.reconnected {
            bumps += 1;
        }
        if bumps > 0 {
            self.inner.bump(bumps);
        }
    }

    async fn ensure_negotiated(&self) -> Result<Negotiated, UpstreamError> {
        if let Some(negotiated) = self.inner.current() {
            return Ok(negotiated);
        }
        let _guard = self.inner.negotiating.lock().await;
        if let Some(negotiated) = self.inner.current() {
            return Ok(negotiated);
        }
        let negotiated = self.negotiate().await?;
        self.inner.set(Some(negotiated.clone()));
        self.start_listener(&negotiated);
        Ok(negotiated)
    }

    /// A new session after `stale` was lost, unless another task already made one.
    async fn renegotiate(&self, stale: &Negotiated) -> Result<Negotiated, UpstreamError> {
        let _guard = self.inner.negotiating.lock().await;
        if let Some(current) = self.inner.current() {
            if &current != stale {
                return Ok(current);
            }
        }
        tracing::info!(upstream = %self.url(), "upstream forgot the session; initializing again");
        self.inner.set(None);
        // Whatever was learned under the old session may be stale.
        self.inner.bump(1);
        let negotiated = self.negotiate().await?;
        self.inner.set(Some(negotiated.clone()));
        self.start_listener(&negotiated);
        Ok(negotiated)
    }

    /// Drops `stale`, a session the upstream forgot, unless another task already replaced it;
    /// the next request negotiates again. Whatever was learned under it may be stale.
    async fn forget_session(&self, stale: &Negotiated) {
        let _guard = self.inner.negotiating.lock().await;
        if self.inner.is_current(stale) {
            tracing::info!(upstream = %self.url(), "upstream forgot the session during tools/call");
            self.inner.set(None);
            self.inner.bump(1);
        }
    }

    /// 2026-07-28 first (`server/discover`), `initialize` when the upstream refuses it.
    async fn negotiate(&self) -> Result<Negotiated, UpstreamError> {
        match self.inner.options.generation {
            Some(Generation::Session) => return self.initialize().await,
            Some(Generation::Stateless) => {
                return match self.discover().await? {
                    Some(negotiated) => Ok(negotiated),
                    None => Err(UpstreamError::UnsupportedVersion {
                        url: self.url().to_owned(),
                        offered: "no 2026-07-28 (server/discover refused)".to_owned(),
                    }),
                };
            }
            None => {}
        }
        match self.discover().await? {
            Some(negotiated) => Ok(negotiated),
            None => self.initialize().await,
        }
    }

    /// `server/discover`: `Some(Stateless)` when the upstream speaks 2026-07-28, `None` when it
    /// refuses (a JSON-RPC error, an HTTP 4xx, or a result without 2026-07-28 — as the Python
    /// SDK's probe decides), an error for anything that is not an answer (network, identity,
    /// timeout, 5xx).
    async fn discover(&self) -> Result<Option<Negotiated>, UpstreamError> {
        let method = mcp::methods::SERVER_DISCOVER;
        let (params, headers) = stamp(&Negotiated::Stateless, method, Map::new());
        match self.exchange(method, params, headers).await {
            Ok((result, _)) => {
                let speaks_2026 = result
                    .get("supportedVersions")
                    .and_then(Value::as_array)
                    .is_some_and(|versions| {
                        versions.iter().any(|version| {
                            version.as_str() == Some(ProtocolVersion::V2026_07_28.as_str())
                        })
                    });
                Ok(speaks_2026.then_some(Negotiated::Stateless))
            }
            Err(UpstreamError::JsonRpc { code, message, .. }) => {
                tracing::debug!(upstream = %self.url(), code, %message, "server/discover refused");
                Ok(None)
            }
            Err(UpstreamError::HttpStatus { status, .. }) if (400..500).contains(&status) => {
                tracing::debug!(upstream = %self.url(), status, "server/discover refused");
                Ok(None)
            }
            Err(other) => Err(other),
        }
    }

    /// `initialize` and `notifications/initialized` (session generation).
    async fn initialize(&self) -> Result<Negotiated, UpstreamError> {
        let method = mcp::methods::INITIALIZE;
        let mut params = Map::new();
        params.insert(
            "protocolVersion".to_owned(),
            Value::from(ProtocolVersion::LATEST_SESSION.as_str()),
        );
        params.insert("capabilities".to_owned(), json!({}));
        params.insert("clientInfo".to_owned(), client_info());
        let (result, session_id) = self.exchange(method, params, Vec::new()).await?;
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
        if let Some(id) = &session_id {
            // The id goes back in a header on every request: it must be visible ASCII.
            if id.is_empty() || !id.bytes().all(|byte| (0x21..=0x7e).contains(&byte)) {
                return Err(self.malformed(method, "the Mcp-Session-Id is not visible ASCII"));
            }
        }
        let negotiated = Negotiated::Session {
            version,
            session_id: session_id.map(Arc::from),
        };
        let (_, headers) = stamp(&negotiated, method, Map::new());
        let initialized = Message::Notification(Notification {
            method: mcp::methods::NOTIFICATIONS_INITIALIZED.to_owned(),
            params: None,
        });
        let answer = self
            .inner
            .transport
            .post(
                Outgoing {
                    method: mcp::methods::NOTIFICATIONS_INITIALIZED,
                    id: None,
                    body: Bytes::from(initialized.to_vec()),
                    headers,
                    idempotent: true,
                    max_bytes: None,
                },
                None,
            )
            .await?;
        self.note(&answer);
        if !answer.status.is_success() {
            return Err(UpstreamError::HttpStatus {
                url: self.url().to_owned(),
                method: mcp::methods::NOTIFICATIONS_INITIALIZED.to_owned(),
                status: answer.status.as_u16(),
                body: answer.body_excerpt,
            });
        }
        Ok(negotiated)
    }

    /// Starts listening for notifications between requests: the `GET` stream of a session,
    /// or `subscriptions/listen` in 2026-07-28.
    fn start_listener(&self, negotiated: &Negotiated) {
        if matches!(
            negotiated,
            Negotiated::Session {
                session_id: None,
                ..
            }
        ) || !self.inner.options.listen_for_notifications
        {
            return;
        }
        let task = tokio::spawn(listener::listen(
            Arc::downgrade(&self.inner),
            negotiated.clone(),
        ));
        if let Ok(mut slot) = self.inner.listener.lock() {
            if let Some(previous) = slot.replace(task) {
                previous.abort();
            }
        }
    }
}

impl Inner {
    fn current(&self) -> Option<Negotiated> {
        self.state.lock().ok().and_then(|state| state.clone())
    }

    fn set(&self, negotiated: Option<Negotiated>) {
        if let Ok(mut state) = self.state.lock() {
            *state = negotiated;
        }
    }

    pub(super) fn bump(&self, by: u64) {
        self.invalidations
            .send_modify(|generation| *generation += by);
    }

    /// Whether `negotiated` is still the protocol state in force.
    pub(super) fn is_current(&self, negotiated: &Negotiated) -> bool {
        self.current().as_ref() == Some(negotiated)
    }

    /// A fresh request id.
    pub(super) fn next_request_id(&self) -> RequestId {
        RequestId::Number(self.next_request_number())
    }

    /// A fresh request id's number.
    fn next_request_number(&self) -> i64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }
}

/// One request to send: its params and its headers.
struct Outbound<'a> {
    params: Params<'a>,
    headers: Vec<(HeaderName, HeaderValue)>,
}

/// The params of one request.
enum Params<'a> {
    /// Made as a map, stamped already (negotiation: once per session).
    Map(Map<String, Value>),
    /// Written as bytes ([`WrittenRequest`]): the requests every call makes; with the
    /// 2026-07-28 envelope when `envelope`.
    Written {
        request: WrittenRequest<'a>,
        envelope: bool,
    },
}

impl<'a> Outbound<'a> {
    /// `request` under `negotiated`: its envelope and headers.
    fn written(negotiated: &Negotiated, request: WrittenRequest<'a>) -> Outbound<'a> {
        Outbound {
            params: Params::Written {
                request,
                envelope: *negotiated == Negotiated::Stateless,
            },
            headers: headers(negotiated, request.method(), request.mirrored_name()),
        }
    }
}

/// What one exchange gave: the result as received, the answer's session id, and the bytes of
/// its body.
struct Exchanged {
    result: RawJson,
    session_id: Option<String>,
    bytes: usize,
}

/// The path one `tools/call` takes, established before its definition check
/// ([`UpstreamClient::call_path`]): a connection that passed the pinning verifier and the
/// protocol state (session) it will be sent under.
pub struct CallPath {
    lease: Lease,
    negotiated: Negotiated,
    identity: Option<ObservedIdentity>,
    audit_identity: Option<Arc<AuditIdentity>>,
}

impl CallPath {
    /// What the upstream presented on this path's connection: the identity to record for the
    /// call it carries.
    pub fn identity(&self) -> Option<&ObservedIdentity> {
        self.identity.as_ref()
    }

    /// The audit's record of [`identity`](Self::identity), shared by every call on the same
    /// connection (made when the connection was).
    pub fn audit_identity(&self) -> Option<&Arc<AuditIdentity>> {
        self.audit_identity.as_ref()
    }

    /// Whether the peer has closed this path's connection, as far as this side has seen: a
    /// call on it then fails with [`UpstreamError::CallNotSent`], nothing sent.
    pub fn connection_closed(&self) -> bool {
        self.lease.sender.is_closed()
    }
}

impl std::fmt::Debug for CallPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallPath")
            .field("negotiated", &self.negotiated)
            .field("identity", &self.identity)
            .finish_non_exhaustive()
    }
}

/// Whether `negotiated` is a session the upstream issued an id for (one it can forget).
fn has_session(negotiated: &Negotiated) -> bool {
    matches!(
        negotiated,
        Negotiated::Session {
            session_id: Some(_),
            ..
        }
    )
}

/// Used by the listener, which holds only a weak reference.
pub(super) type WeakInner = Weak<Inner>;

/// The params and headers of a request made as a map under `negotiated` (negotiation and
/// listening; the requests of every call are written as bytes, [`request_body`]).
pub(super) fn stamp(
    negotiated: &Negotiated,
    method: &'static str,
    mut params: Map<String, Value>,
) -> (Map<String, Value>, Vec<(HeaderName, HeaderValue)>) {
    if *negotiated == Negotiated::Stateless {
        // 2026-07-28: the envelope in `params._meta`, mirrored by headers the server checks
        // against the body (RECIPE.md; -32020 on a mismatch).
        let mut meta = match params.remove("_meta") {
            Some(Value::Object(meta)) => meta,
            _ => Map::new(),
        };
        meta.insert(
            mcp::META_PROTOCOL_VERSION.to_owned(),
            Value::from(ProtocolVersion::V2026_07_28.as_str()),
        );
        meta.insert(mcp::META_CLIENT_CAPABILITIES.to_owned(), json!({}));
        meta.insert(mcp::META_CLIENT_INFO.to_owned(), client_info());
        params.insert("_meta".to_owned(), Value::Object(meta));
    }
    let name = mcp::name_bearing_param(method)
        .and_then(|member| params.get(member))
        .and_then(Value::as_str);
    let headers = headers(negotiated, method, name);
    (params, headers)
}

/// The headers of a request under `negotiated`: in 2026-07-28 the version, the method and
/// `name`, what the method's `Mcp-Name` mirrors (the tool's name for `tools/call`); in the
/// session generation the session id and the version.
pub(super) fn headers(
    negotiated: &Negotiated,
    method: &'static str,
    name: Option<&str>,
) -> Vec<(HeaderName, HeaderValue)> {
    let mut headers = Vec::with_capacity(3);
    match negotiated {
        Negotiated::Stateless => {
            let version = ProtocolVersion::V2026_07_28.as_str();
            push_static(&mut headers, names::MCP_PROTOCOL_VERSION, version);
            push_static(&mut headers, names::MCP_METHOD, method);
            if let Some(name) = name {
                let encoded = Bytes::from(mcp::encode_header_value(name));
                if let Ok(value) = HeaderValue::from_maybe_shared(encoded) {
                    headers.push((names::MCP_NAME, value));
                }
            }
        }
        Negotiated::Session {
            version,
            session_id,
        } => {
            if let Some(session_id) = session_id {
                if let Ok(value) = HeaderValue::from_str(session_id) {
                    headers.push((names::MCP_SESSION_ID, value));
                }
            }
            push_static(&mut headers, names::MCP_PROTOCOL_VERSION, version.as_str());
        }
    }
    headers
}

/// A header whose value is one of this program's constants (versions, method names), not
/// copied. Every value here is visible ASCII; one that is not is left out rather than sent
/// altered (and `from_static`, which would panic on it, is not called).
fn push_static(
    headers: &mut Vec<(HeaderName, HeaderValue)>,
    name: HeaderName,
    value: &'static str,
) {
    if value.bytes().all(|byte| (0x20..0x7f).contains(&byte)) {
        headers.push((name, HeaderValue::from_static(value)));
    }
}
