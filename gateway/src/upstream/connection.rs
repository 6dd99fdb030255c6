//! TLS connections to one upstream and their reuse.
//!
//! Every connection is a fresh TCP connection and a full TLS handshake through the pinning
//! verifier (docs/design.md §3: the identity is enforced inside the handshake, before any
//! application byte; `server_identity::client_config` disables session resumption, so no
//! handshake reuses an earlier verdict); HTTP/1.1 runs on top. Idle connections are kept for the
//! next request: the identity was verified when the connection was made and a TLS session
//! cannot change peers. Each connection keeps what its own handshake presented, so a request is
//! audited with the identity of the connection that carried it.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use server_identity::{IdentityError, PinMatch, ServerAnchors};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

use super::endpoint::Endpoint;
use super::error::{TimeoutPhase, UpstreamError};
use super::identity::ObservedIdentity;

/// The request sender of one HTTP/1.1 connection, counted as live while it exists (hyper closes
/// a client connection once every sender of it is gone).
pub(super) struct Sender {
    sender: SendRequest<Full<Bytes>>,
    _live: LiveGuard,
    /// Whether this connection was made while no other connection to the upstream was live
    /// after an earlier one existed: a reconnect, across which notifications may have been
    /// missed.
    pub(super) reconnected: bool,
    /// What the upstream presented in this connection's handshake (docs/design.md §3: the identity
    /// recorded for a request is the one of the connection that carried it).
    pub(super) identity: Option<ObservedIdentity>,
}

impl std::ops::Deref for Sender {
    type Target = SendRequest<Full<Bytes>>;

    fn deref(&self) -> &Self::Target {
        &self.sender
    }
}

impl std::ops::DerefMut for Sender {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.sender
    }
}

/// Decrements the live-connection count when the connection's sender is dropped.
struct LiveGuard(Arc<AtomicU64>);

impl Drop for LiveGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A connection taken from the pool for one exchange.
pub(super) struct Lease {
    pub(super) sender: Sender,
    /// Whether it was idle in the pool (a reused connection may have been closed by the peer
    /// while idle; a request that was never written may then be retried on a new one).
    pub(super) reused: bool,
}

/// The connections of one upstream.
pub(super) struct Pool {
    endpoint: Arc<Endpoint>,
    tls: TlsConnector,
    connect_timeout: Duration,
    max_idle: usize,
    idle: Mutex<Vec<Sender>>,
    connections_made: AtomicU64,
    live: Arc<AtomicU64>,
    observed: Mutex<Option<ObservedIdentity>>,
    /// The anchors the verifier enforces, to say which pin each connection matched.
    anchors: Option<ServerAnchors>,
}

impl Pool {
    pub(super) fn new(
        endpoint: Arc<Endpoint>,
        tls: Arc<rustls::ClientConfig>,
        anchors: Option<ServerAnchors>,
        connect_timeout: Duration,
        max_idle: usize,
    ) -> Pool {
        // HTTP/1.1 only: the configuration from `server_identity::client_config` offers h2 too,
        // and this client does not speak h2. A clone keeps the caller's verifier (and so the
        // anchors) unchanged.
        let mut config = (*tls).clone();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Pool {
            endpoint,
            tls: TlsConnector::from(Arc::new(config)),
            connect_timeout,
            max_idle,
            idle: Mutex::new(Vec::new()),
            connections_made: AtomicU64::new(0),
            live: Arc::new(AtomicU64::new(0)),
            observed: Mutex::new(None),
            anchors,
        }
    }

    /// An idle connection that is still open, or a new one.
    pub(super) async fn checkout(&self) -> Result<Lease, UpstreamError> {
        loop {
            let candidate = self.idle.lock().map_or(None, |mut idle| idle.pop());
            match candidate {
                // `ready` resolves at once for a connection whose last response was read to the
                // end, and fails for one the peer closed meanwhile.
                Some(mut sender) if !sender.is_closed() => {
                    if sender.ready().await.is_ok() {
                        sender.reconnected = false;
                        return Ok(Lease {
                            sender,
                            reused: true,
                        });
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

    /// Returns a connection whose last response was read to the end.
    pub(super) fn checkin(&self, sender: Sender) {
        if sender.is_closed() {
            return;
        }
        if let Ok(mut idle) = self.idle.lock() {
            if idle.len() < self.max_idle {
                idle.push(sender);
            }
        }
    }

    /// How many idle connections the peer has not closed (as far as this side has seen).
    pub(super) fn idle_open(&self) -> usize {
        self.idle.lock().map_or(0, |idle| {
            idle.iter().filter(|sender| !sender.is_closed()).count()
        })
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

    /// A new connection: TCP, the TLS handshake with the pinning verifier, HTTP/1.1.
    pub(super) async fn connect(&self) -> Result<Sender, UpstreamError> {
        let endpoint = &self.endpoint;
        let timeout = self.connect_timeout;
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
            let (sender, connection) = http1::handshake::<_, Full<Bytes>>(TokioIo::new(tls))
                .await
                .map_err(|error| UpstreamError::ConnectionClosed {
                    url: endpoint.url.clone(),
                    method: "(connect)".to_owned(),
                    detail: error.to_string(),
                })?;
            Ok::<_, UpstreamError>((sender, connection, observed))
        };
        let (sender, connection, observed) = tokio::time::timeout(timeout, connecting)
            .await
            .map_err(|_| UpstreamError::Timeout {
                url: endpoint.url.clone(),
                phase: TimeoutPhase::Connect,
                timeout,
            })??;
        let url = endpoint.url.clone();
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(upstream = %url, %error, "upstream connection ended");
            }
        });
        let made_before = self.connections_made.fetch_add(1, Ordering::Relaxed);
        let live_before = self.live.fetch_add(1, Ordering::Relaxed);
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
        Ok(Sender {
            sender,
            _live: LiveGuard(self.live.clone()),
            reconnected: made_before > 0 && live_before == 0,
            identity: observed,
        })
    }
}
