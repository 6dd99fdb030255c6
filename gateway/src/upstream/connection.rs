//! TLS connections to one upstream and their reuse.
//!
//! Every connection is a fresh TCP connection and a full TLS handshake through the pinning
//! verifier (docs/design.md §3: the identity is enforced inside the handshake, before any
//! application byte; `server_identity::client_config` disables session resumption, so no
//! handshake reuses an earlier verdict). ALPN offers `h2` and `http/1.1`; what the server selects
//! runs on top:
//!
//! - **HTTP/2**: one connection carries every exchange as a stream, as many at once as the
//!   server's `SETTINGS_MAX_CONCURRENT_STREAMS` allows (hyper queues the rest). A [`Lease`] on it
//!   is a clone of its sender that names the same connection, so a `tools/call` checked on it
//!   goes on it (docs/design.md §5, "A check is never outrun"). Once it is closed (GOAWAY, an
//!   error, the peer gone), the next exchange makes a new connection, one for all waiting.
//! - **HTTP/1.1** (or no ALPN): one exchange per connection at a time; idle connections are kept
//!   for the next request.
//!
//! The identity was verified when the connection was made and a TLS session cannot change
//! peers. Each connection keeps what its own handshake presented, so a request is audited with
//! the identity of the connection that carried it. A connection made while no other is live,
//! after an earlier one existed, is a reconnect (the client's invalidation counter follows it)
//! whichever protocol it speaks.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::header::HOST;
use http::uri::{Authority, Scheme};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::client::conn::{TrySendError, http1, http2};
use hyper_util::rt::{TokioExecutor, TokioIo};
use server_identity::{IdentityError, PinMatch, ServerAnchors};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

use super::endpoint::Endpoint;
use super::error::{TimeoutPhase, UpstreamError};
use super::identity::ObservedIdentity;
use crate::audit::ObservedIdentity as AuditIdentity;

/// The ALPN name of HTTP/2 (RFC 9113 §3.2).
const ALPN_H2: &[u8] = b"h2";
/// The ALPN name of HTTP/1.1.
const ALPN_HTTP1: &[u8] = b"http/1.1";

type Request = http::Request<Full<Bytes>>;
type Response = http::Response<Incoming>;

/// The request side of one connection: HTTP/1.1 (one exchange at a time), or HTTP/2 (many
/// streams; the sender is cloned for each exchange and names the same connection).
enum Protocol {
    Http1(http1::SendRequest<Full<Bytes>>),
    Http2 {
        sender: http2::SendRequest<Full<Bytes>>,
        /// `:authority` of every request (HTTP/2 carries no `Host` line).
        authority: Authority,
    },
}

/// The request sender of one connection, counted as live while the connection exists.
pub(super) struct Sender {
    protocol: Protocol,
    live: Arc<Liveness>,
    /// Which connection this is (1 for the first one made): the clones of an HTTP/2 sender
    /// name the same connection.
    connection: u64,
    /// Whether this connection was made while no other connection to the upstream was live
    /// after an earlier one existed: a reconnect, across which notifications may have been
    /// missed.
    pub(super) reconnected: bool,
    /// What the upstream presented in this connection's handshake (docs/design.md §3: the identity
    /// recorded for a request is the one of the connection that carried it).
    pub(super) identity: Option<ObservedIdentity>,
    /// The audit's record of `identity`, made once for the connection and shared by the
    /// entries of all the calls it carries.
    pub(super) audit_identity: Option<Arc<AuditIdentity>>,
}

impl Sender {
    /// Whether the peer closed the connection (or it failed), as far as this side has seen.
    pub(super) fn is_closed(&self) -> bool {
        match &self.protocol {
            Protocol::Http1(sender) => sender.is_closed(),
            Protocol::Http2 { sender, .. } => sender.is_closed(),
        }
    }

    /// Whether the connection speaks HTTP/2 (shared by concurrent exchanges).
    pub(super) fn is_http2(&self) -> bool {
        matches!(self.protocol, Protocol::Http2 { .. })
    }

    /// Sends `request`; on a failure before it was written, the error gives it back.
    pub(super) async fn try_send_request(
        &mut self,
        request: Request,
    ) -> Result<Response, TrySendError<Request>> {
        match &mut self.protocol {
            Protocol::Http1(sender) => sender.try_send_request(request).await,
            Protocol::Http2 { sender, authority } => {
                sender.try_send_request(for_http2(request, authority)).await
            }
        }
    }

    /// Sends `request`.
    pub(super) async fn send_request(&mut self, request: Request) -> hyper::Result<Response> {
        match &mut self.protocol {
            Protocol::Http1(sender) => sender.send_request(request).await,
            Protocol::Http2 { sender, authority } => {
                sender.send_request(for_http2(request, authority)).await
            }
        }
    }

    /// Another sender on the same HTTP/2 connection (same identity, same connection), for one
    /// more concurrent exchange; `None` for HTTP/1.1, whose connection carries one at a time.
    fn share(&self) -> Option<Sender> {
        let Protocol::Http2 { sender, authority } = &self.protocol else {
            return None;
        };
        Some(Sender {
            protocol: Protocol::Http2 {
                sender: sender.clone(),
                authority: authority.clone(),
            },
            live: self.live.clone(),
            connection: self.connection,
            reconnected: false,
            identity: self.identity.clone(),
            audit_identity: self.audit_identity.clone(),
        })
    }
}

/// `request` (origin-form URI and a `Host` header, as HTTP/1.1 sends it) in HTTP/2's form: the
/// scheme and authority in the URI (`:scheme`, `:authority`), no `Host`.
fn for_http2(mut request: Request, authority: &Authority) -> Request {
    let mut parts = request.uri().clone().into_parts();
    parts.scheme = Some(Scheme::HTTPS);
    parts.authority = Some(authority.clone());
    if let Ok(uri) = http::Uri::from_parts(parts) {
        *request.uri_mut() = uri;
    }
    request.headers_mut().remove(HOST);
    request
}

/// One connection's place in the live-connection count: it leaves the count once, when the
/// connection is seen to end or when the last holder drops it, whichever comes first.
struct Liveness {
    live: Arc<AtomicU64>,
    ended: AtomicBool,
}

impl Liveness {
    fn end(&self) {
        if !self.ended.swap(true, Ordering::AcqRel) {
            self.live.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

impl Drop for Liveness {
    fn drop(&mut self) {
        self.end();
    }
}

/// A connection taken from the pool for one exchange.
pub(super) struct Lease {
    pub(super) sender: Sender,
    /// Whether it was idle in the pool, or is the shared HTTP/2 connection (a reused
    /// connection may have been closed by the peer meanwhile; a request that was never written
    /// may then be retried on a new one).
    pub(super) reused: bool,
}

/// The connections of one upstream.
pub(super) struct Pool {
    endpoint: Arc<Endpoint>,
    tls: TlsConnector,
    connect_timeout: Duration,
    max_idle: usize,
    /// Idle HTTP/1.1 connections.
    idle: Mutex<Vec<Sender>>,
    /// The HTTP/2 connection every exchange shares while it is open.
    shared: Mutex<Option<Sender>>,
    /// Whether the newest connection speaks HTTP/2: new connections are then made one at a
    /// time, so that concurrent exchanges share one instead of each making its own.
    multiplexing: AtomicBool,
    connecting: tokio::sync::Mutex<()>,
    connections_made: AtomicU64,
    live: Arc<AtomicU64>,
    observed: Mutex<Option<ObservedIdentity>>,
    /// The anchors the verifier enforces, to say which pin each connection matched.
    anchors: Option<ServerAnchors>,
}

impl Pool {
    /// `offer_http2`: offer `h2` before `http/1.1` in ALPN.
    pub(super) fn new(
        endpoint: Arc<Endpoint>,
        tls: Arc<rustls::ClientConfig>,
        anchors: Option<ServerAnchors>,
        connect_timeout: Duration,
        max_idle: usize,
        offer_http2: bool,
    ) -> Pool {
        // The protocols this client speaks, whatever the given configuration offers. A clone
        // keeps the caller's verifier (and so the anchors) unchanged.
        let mut config = (*tls).clone();
        config.alpn_protocols = if offer_http2 {
            vec![ALPN_H2.to_vec(), ALPN_HTTP1.to_vec()]
        } else {
            vec![ALPN_HTTP1.to_vec()]
        };
        Pool {
            endpoint,
            tls: TlsConnector::from(Arc::new(config)),
            connect_timeout,
            max_idle,
            idle: Mutex::new(Vec::new()),
            shared: Mutex::new(None),
            multiplexing: AtomicBool::new(false),
            connecting: tokio::sync::Mutex::new(()),
            connections_made: AtomicU64::new(0),
            live: Arc::new(AtomicU64::new(0)),
            observed: Mutex::new(None),
            anchors,
        }
    }

    /// The open HTTP/2 connection, an idle HTTP/1.1 connection that is still open, or a new
    /// connection.
    pub(super) async fn checkout(&self) -> Result<Lease, UpstreamError> {
        if let Some(lease) = self.shared_lease() {
            return Ok(lease);
        }
        if self.multiplexing.load(Ordering::Acquire) {
            // One new connection for every exchange waiting, not one each.
            let _connecting = self.connecting.lock().await;
            if let Some(lease) = self.shared_lease() {
                return Ok(lease);
            }
            let sender = self.connect().await?;
            return Ok(Lease {
                sender,
                reused: false,
            });
        }
        loop {
            let candidate = self.idle.lock().map_or(None, |mut idle| idle.pop());
            match candidate {
                // `ready` resolves at once for a connection whose last response was read to the
                // end, and fails for one the peer closed meanwhile.
                Some(mut sender) if !sender.is_closed() => {
                    if let Protocol::Http1(http1) = &mut sender.protocol {
                        if http1.ready().await.is_ok() {
                            sender.reconnected = false;
                            return Ok(Lease {
                                sender,
                                reused: true,
                            });
                        }
                    }
                }
                Some(_closed) => {}
                None => break,
            }
        }
        let sender = self.connect().await?;
        Ok(Lease {
            sender,
            reused: false,
        })
    }

    /// A sender on the shared HTTP/2 connection while it is open; a closed one is retired.
    fn shared_lease(&self) -> Option<Lease> {
        let mut shared = self.shared.lock().ok()?;
        match shared.as_ref() {
            Some(sender) if !sender.is_closed() => Some(Lease {
                sender: sender.share()?,
                reused: true,
            }),
            Some(_) => {
                if let Some(closed) = shared.take() {
                    closed.live.end();
                }
                None
            }
            None => None,
        }
    }

    /// A connection for a long-lived stream (the notification listener): a stream on the
    /// shared HTTP/2 connection, else a new connection of its own.
    pub(super) async fn stream_sender(&self) -> Result<Sender, UpstreamError> {
        if !self.multiplexing.load(Ordering::Acquire) {
            return self.connect().await;
        }
        Ok(self.checkout().await?.sender)
    }

    /// A new connection in place of `dead`, a reused one the request failed on: `dead` leaves
    /// the live count first, so that the new one counts as a reconnect when it was the last.
    pub(super) async fn replace(&self, dead: Sender) -> Result<Sender, UpstreamError> {
        if !dead.is_http2() {
            drop(dead);
            return self.connect().await;
        }
        self.retire(&dead);
        drop(dead);
        let _connecting = self.connecting.lock().await;
        if let Some(lease) = self.shared_lease() {
            // Another exchange replaced it already.
            return Ok(lease.sender);
        }
        self.connect().await
    }

    /// Takes a failed HTTP/2 connection out of use (a closed HTTP/1.1 one is never checked
    /// in): the next exchange makes a new one, and it no longer counts as live.
    pub(super) fn retire(&self, failed: &Sender) {
        if !failed.is_http2() {
            return;
        }
        if let Ok(mut shared) = self.shared.lock() {
            if shared
                .as_ref()
                .is_some_and(|sender| sender.connection == failed.connection)
            {
                *shared = None;
            }
        }
        failed.live.end();
    }

    /// Returns a connection whose last response was read to the end.
    pub(super) fn checkin(&self, sender: Sender) {
        // An HTTP/2 sender is a clone; the pool keeps the shared one.
        if sender.is_closed() || sender.is_http2() {
            return;
        }
        if let Ok(mut idle) = self.idle.lock() {
            if idle.len() < self.max_idle {
                idle.push(sender);
            }
        }
    }

    /// How many kept connections the peer has not closed (as far as this side has seen): the
    /// idle HTTP/1.1 ones and the shared HTTP/2 one.
    pub(super) fn idle_open(&self) -> usize {
        let idle = self.idle.lock().map_or(0, |idle| {
            idle.iter().filter(|sender| !sender.is_closed()).count()
        });
        let shared = self.shared.lock().map_or(0, |shared| {
            usize::from(shared.as_ref().is_some_and(|sender| !sender.is_closed()))
        });
        idle + shared
    }

    /// How many connections were made so far.
    pub(super) fn connections_made(&self) -> u64 {
        self.connections_made.load(Ordering::Relaxed)
    }

    /// What the upstream presented on the newest connection.
    pub(super) fn observed(&self) -> Option<ObservedIdentity> {
        self.observed
            .lock()
            .ok()
            .and_then(|observed| observed.clone())
    }

    /// A new connection: TCP, the TLS handshake with the pinning verifier, then HTTP/2 when
    /// the server selected `h2` in ALPN, else HTTP/1.1. A new HTTP/2 connection becomes the
    /// shared one (unless no connection is to be kept: `max_idle` 0).
    pub(super) async fn connect(&self) -> Result<Sender, UpstreamError> {
        let endpoint = &self.endpoint;
        let timeout = self.connect_timeout;
        let closed = |error: hyper::Error| UpstreamError::ConnectionClosed {
            url: endpoint.url.clone(),
            method: "(connect)".to_owned(),
            detail: error.to_string(),
        };
        let live = Arc::new(Liveness {
            live: self.live.clone(),
            ended: AtomicBool::new(false),
        });
        let connecting = async {
            let tcp = TcpStream::connect((endpoint.host.as_str(), endpoint.port))
                .await
                .map_err(|error| UpstreamError::Connect {
                    url: endpoint.url.clone(),
                    detail: error.to_string(),
                })?;
            // Small JSON-RPC messages: do not let Nagle hold them back.
            let _ = tcp.set_nodelay(true);
            let tls = self
                .tls
                .connect(endpoint.server_name.clone(), tcp)
                .await
                .map_err(|error| match IdentityError::from_io_error(&error) {
                    Some(identity) => UpstreamError::Identity {
                        url: endpoint.url.clone(),
                        error: identity.clone(),
                    },
                    None => UpstreamError::Tls {
                        url: endpoint.url.clone(),
                        detail: error.to_string(),
                    },
                })?;
            let observed =
                tls.get_ref().1.peer_certificates().and_then(|chain| {
                    ObservedIdentity::of_connection(self.anchors.as_ref(), chain)
                });
            let url = endpoint.url.clone();
            let ended = live.clone();
            let protocol = if tls.get_ref().1.alpn_protocol() == Some(ALPN_H2) {
                let (sender, connection) = http2::Builder::new(TokioExecutor::new())
                    .handshake::<_, Full<Bytes>>(TokioIo::new(tls))
                    .await
                    .map_err(closed)?;
                tokio::spawn(async move {
                    if let Err(error) = connection.await {
                        tracing::debug!(upstream = %url, %error, "upstream connection ended");
                    }
                    // Its senders may outlive it; it is no longer live.
                    ended.end();
                });
                Protocol::Http2 {
                    sender,
                    authority: endpoint.authority.parse().map_err(|error| {
                        UpstreamError::InvalidUrl {
                            url: endpoint.url.clone(),
                            detail: format!("no HTTP/2 authority can be made for it: {error}"),
                        }
                    })?,
                }
            } else {
                let (sender, connection) = http1::handshake::<_, Full<Bytes>>(TokioIo::new(tls))
                    .await
                    .map_err(closed)?;
                tokio::spawn(async move {
                    if let Err(error) = connection.await {
                        tracing::debug!(upstream = %url, %error, "upstream connection ended");
                    }
                });
                Protocol::Http1(sender)
            };
            Ok::<_, UpstreamError>((protocol, observed))
        };
        let (protocol, observed) =
            tokio::time::timeout(timeout, connecting)
                .await
                .map_err(|_| UpstreamError::Timeout {
                    url: endpoint.url.clone(),
                    phase: TimeoutPhase::Connect,
                    timeout,
                })??;
        let made_before = self.connections_made.fetch_add(1, Ordering::Relaxed);
        let live_before = self.live.fetch_add(1, Ordering::AcqRel);
        if let Some(PinMatch::Backup(backup)) = observed.as_ref().and_then(|o| o.pin) {
            // A planned rotation is under way: the catalog's primary should be updated.
            tracing::warn!(
                upstream = %endpoint.url,
                %backup,
                "the upstream presented a backup fingerprint, not the primary tls_fingerprint; \
                 update the catalog's primary once the rotation is complete"
            );
        }
        if let (Some(observed), Ok(mut slot)) = (observed.clone(), self.observed.lock()) {
            *slot = Some(observed);
        }
        let audit_identity = observed
            .as_ref()
            .map(|observed| Arc::new(observed.audit_record()));
        let sender = Sender {
            protocol,
            live,
            connection: made_before + 1,
            reconnected: made_before > 0 && live_before == 0,
            identity: observed,
            audit_identity,
        };
        self.multiplexing
            .store(sender.is_http2(), Ordering::Release);
        if self.max_idle > 0 {
            if let (Some(shared), Ok(mut slot)) = (sender.share(), self.shared.lock()) {
                *slot = Some(shared);
            }
        }
        Ok(sender)
    }
}
