//! Accepting connections: plain HTTP or TLS, HTTP/1.1 and HTTP/2, the client-side limits of
//! docs/design.md §5 (a header timeout, connection caps in total and per client address, an idle
//! timeout, HTTP/2 keep-alive), and a graceful shutdown that lets in-flight calls finish.
//!
//! Every await on a client has a bound: the TLS handshake and the first request's headers (or
//! the HTTP/2 preface) by the header timeout, the wait for a next request by the header timeout
//! (HTTP/1.1) and the idle timeout (both), a body by the body timeout of `http.rs`.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_rustls::TlsAcceptor;

use super::Gateway;
use super::client_auth::ClientConnection;
use super::http::handle;
use super::options::ServerOptions;
use super::self_wake::absorbing_self_wakes;
use crate::auth::Principal;

/// How long a shutdown waits for in-flight exchanges before closing their connections.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(30);
/// The HTTP/2 connection preface (RFC 9113 §3.4): how a plain connection says it is HTTP/2.
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

pub(crate) async fn serve(
    gateway: Arc<Gateway>,
    listener: TcpListener,
    tls: Option<Arc<rustls::ServerConfig>>,
    shutdown: impl Future<Output = ()> + Send,
) -> io::Result<()> {
    let options = gateway.options.clone();
    let acceptor = tls.map(TlsAcceptor::from);
    let (stop_sender, stop_receiver) = watch::channel(false);
    let mut connections = JoinSet::new();
    let slots = Arc::new(Semaphore::new(options.max_connections));
    let per_address = Arc::new(AddressCounts::default());
    let builder = connection_builder(&options);
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            accepted = accept(&listener, &slots) => {
                let (stream, peer, slot) = match accepted {
                    Ok(accepted) => accepted,
                    Err(error) => {
                        // Out of file descriptors and the like: keep serving the others.
                        tracing::warn!("accept failed: {error}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let Some(address_slot) = per_address.take(client_key(peer.ip()), options.max_connections_per_address) else {
                    tracing::debug!(%peer, "closed: the address holds --max-connections-per-address connections");
                    continue;
                };
                let _ = stream.set_nodelay(true);
                let connection = Connection {
                    gateway: gateway.clone(),
                    builder: builder.clone(),
                    peer,
                    stop: stop_receiver.clone(),
                };
                let acceptor = acceptor.clone();
                connections.spawn(async move {
                    // Both held for the life of the connection.
                    let _slots = (slot, address_slot);
                    let run = std::pin::pin!(connection.run(stream, acceptor));
                    absorbing_self_wakes(run).await;
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    drop(listener);
    let _ = stop_sender.send(true);
    let drained = tokio::time::timeout(DRAIN_TIMEOUT, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!("closing connections still busy after {DRAIN_TIMEOUT:?}");
        connections.shutdown().await;
    }
    Ok(())
}

/// HTTP/1.1 with the header timeout; HTTP/2 with keep-alive pings.
fn connection_builder(options: &ServerOptions) -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(options.header_timeout);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(options.http2_keep_alive_interval)
        .keep_alive_timeout(options.http2_keep_alive_timeout);
    builder
}

/// Waits for a free connection slot, then for a connection.
async fn accept(
    listener: &TcpListener,
    slots: &Arc<Semaphore>,
) -> io::Result<(TcpStream, SocketAddr, OwnedSemaphorePermit)> {
    let slot = slots
        .clone()
        .acquire_owned()
        .await
        .map_err(io::Error::other)?;
    let (stream, peer) = listener.accept().await?;
    Ok((stream, peer, slot))
}

/// Open connections per client address ([`client_key`]).
#[derive(Debug, Default)]
struct AddressCounts(Mutex<HashMap<IpAddr, usize>>);

impl AddressCounts {
    /// One more connection for `address`, or `None` when it already holds `limit`.
    fn take(self: &Arc<Self>, address: IpAddr, limit: usize) -> Option<AddressSlot> {
        let mut counts = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let count = counts.entry(address).or_default();
        if *count >= limit {
            return None;
        }
        *count += 1;
        Some(AddressSlot {
            counts: Arc::clone(self),
            address,
        })
    }
}

/// One connection of one address, given back when dropped.
struct AddressSlot {
    counts: Arc<AddressCounts>,
    address: IpAddr,
}

impl Drop for AddressSlot {
    fn drop(&mut self) {
        let mut counts = self.counts.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = counts.get_mut(&self.address) {
            *count -= 1;
            if *count == 0 {
                counts.remove(&self.address);
            }
        }
    }
}

/// Which protocol a connection speaks, decided before hyper reads it (hyper's own detection
/// waits for bytes without a bound).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Protocol {
    Http1,
    Http2,
}

/// One accepted connection.
struct Connection {
    gateway: Arc<Gateway>,
    builder: auto::Builder<TokioExecutor>,
    peer: SocketAddr,
    stop: watch::Receiver<bool>,
}

impl Connection {
    async fn run(self, stream: TcpStream, acceptor: Option<TlsAcceptor>) {
        let header_timeout = self.gateway.options.header_timeout;
        let peer = self.peer;
        // Before hyper has the connection nothing is in flight: a shutdown closes it at once.
        let mut stop = self.stop.clone();
        let stopped = async move {
            while !*stop.borrow_and_update() {
                if stop.changed().await.is_err() {
                    break;
                }
            }
        };
        tokio::pin!(stopped);
        match acceptor {
            None => {
                let sniffed = tokio::select! {
                    sniffed = tokio::time::timeout(header_timeout, sniff(&stream)) => sniffed,
                    () = &mut stopped => return,
                };
                match sniffed {
                    Ok(Ok(protocol)) => {
                        let client = ClientConnection {
                            tls: false,
                            certificate: None,
                        };
                        self.serve(TokioIo::new(stream), protocol, client).await
                    }
                    Ok(Err(error)) => {
                        tracing::debug!(%peer, "connection ended before a request: {error}")
                    }
                    Err(_) => {
                        tracing::debug!(%peer, "closed: nothing arrived within --header-timeout")
                    }
                }
            }
            Some(acceptor) => {
                let handshake = tokio::select! {
                    handshake = tokio::time::timeout(header_timeout, acceptor.accept(stream)) => handshake,
                    () = &mut stopped => return,
                };
                match handshake {
                    Ok(Ok(tls)) => {
                        // ALPN decides; a client that offers none speaks HTTP/1.1.
                        let protocol = match tls.get_ref().1.alpn_protocol() {
                            Some(b"h2") => Protocol::Http2,
                            _ => Protocol::Http1,
                        };
                        let client = ClientConnection {
                            tls: true,
                            certificate: tls
                                .get_ref()
                                .1
                                .peer_certificates()
                                .and_then(client_certificate_principal),
                        };
                        self.serve(TokioIo::new(tls), protocol, client).await;
                    }
                    // A client certificate refused by --client-ca is worth an operator's eye.
                    Ok(Err(error)) if is_client_certificate_refusal(&error) => tracing::warn!(
                        %peer,
                        "refused a client in the TLS handshake: its certificate does not chain \
                         to --client-ca ({error})"
                    ),
                    Ok(Err(error)) => tracing::debug!(%peer, "TLS handshake failed: {error}"),
                    Err(_) => tracing::debug!(%peer, "TLS handshake timed out (--header-timeout)"),
                }
            }
        }
    }

    async fn serve<I>(self, io: I, protocol: Protocol, client: ClientConnection)
    where
        I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
    {
        let Connection {
            gateway,
            builder,
            peer,
            mut stop,
        } = self;
        let builder = match protocol {
            Protocol::Http1 => builder.http1_only(),
            Protocol::Http2 => builder.http2_only(),
        };
        let idle_timeout = gateway.options.idle_timeout;
        let activity = Arc::new(Activity::new());
        let service = {
            let activity = Arc::clone(&activity);
            let client = Arc::new(client);
            service_fn(move |request| {
                let gateway = gateway.clone();
                let client = Arc::clone(&client);
                let busy = activity.begin();
                async move {
                    let response = handle(gateway, request, client_key(peer.ip()), &client).await;
                    drop(busy);
                    response
                }
            })
        };
        let connection = builder.serve_connection(io, service);
        tokio::pin!(connection);
        let mut stopping = *stop.borrow();
        if stopping {
            connection.as_mut().graceful_shutdown();
        }
        let mut idle_closing = false;
        loop {
            let idle_deadline = activity.idle_deadline(idle_timeout);
            tokio::select! {
                result = connection.as_mut() => {
                    if let Err(error) = result {
                        tracing::debug!(%peer, "connection ended with an error: {error}");
                    }
                    return;
                }
                changed = stop.changed(), if !stopping => {
                    if changed.is_err() || *stop.borrow() {
                        stopping = true;
                        // Finishes the exchange in flight, then closes; idle connections close now.
                        connection.as_mut().graceful_shutdown();
                    }
                }
                () = tokio::time::sleep_until(idle_deadline), if !idle_closing => {
                    if activity.is_idle_since(idle_timeout) {
                        tracing::debug!(%peer, "closing an idle connection (--idle-timeout)");
                        idle_closing = true;
                        connection.as_mut().graceful_shutdown();
                    }
                }
            }
        }
    }
}

/// The principal of a client certificate the listener's verifier accepted (docs/design.md §7): its
/// SPIFFE ID when it has exactly one, otherwise its key fingerprint.
fn client_certificate_principal(
    chain: &[rustls_pki_types::CertificateDer<'_>],
) -> Option<Principal> {
    let name = rustls_pki_types::ServerName::try_from("client").ok()?;
    let now = rustls_pki_types::UnixTime::now();
    let observed = server_identity::Observation::of_chain(chain, &name, None, now).ok()?;
    Some(match observed.spiffe_ids.as_slice() {
        [one] => Principal::Spiffe(one.as_str().to_owned()),
        _ => Principal::Cert(observed.spki_sha256.to_string()),
    })
}

/// Whether a failed handshake is the verifier refusing the client's certificate (or its
/// absence), as opposed to a client that went away or spoke something else.
fn is_client_certificate_refusal(error: &io::Error) -> bool {
    let Some(tls) = error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
    else {
        return false;
    };
    matches!(
        tls,
        rustls::Error::InvalidCertificate(_)
            | rustls::Error::NoCertificatesPresented
            | rustls::Error::InappropriateHandshakeMessage { .. }
    )
}

/// Waits until a plain connection's first bytes tell HTTP/2's preface from anything else,
/// without consuming them.
async fn sniff(stream: &TcpStream) -> io::Result<Protocol> {
    let mut buffer = [0u8; H2_PREFACE.len()];
    let mut backoff = Duration::from_millis(1);
    loop {
        let seen = stream.peek(&mut buffer).await?;
        if seen == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "closed by the client",
            ));
        }
        if buffer[..seen] != H2_PREFACE[..seen] {
            return Ok(Protocol::Http1);
        }
        if seen == H2_PREFACE.len() {
            return Ok(Protocol::Http2);
        }
        // A prefix of the preface: wait for more. `peek` returns at once while bytes are
        // buffered, so back off (a real client sends the whole preface in one segment; one
        // that dribbles it cannot make the gateway spin).
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_millis(50));
    }
}

/// The address a client's caps count against: an IPv4 address, or the /64 of an IPv6 address
/// (one host commonly holds a whole /64, so counting single IPv6 addresses would give it
/// billions of allowances). An IPv4-mapped IPv6 address counts as its IPv4 address.
pub(crate) fn client_key(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(std::net::Ipv6Addr::from(
                u128::from(v6) & !((1u128 << 64) - 1),
            )),
        },
    }
}

/// Requests in flight on one connection, and when the last one ended.
struct Activity {
    in_flight: AtomicUsize,
    last_end: Mutex<Instant>,
}

impl Activity {
    fn new() -> Activity {
        Activity {
            in_flight: AtomicUsize::new(0),
            last_end: Mutex::new(Instant::now()),
        }
    }

    fn begin(self: &Arc<Self>) -> Busy {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        Busy(Arc::clone(self))
    }

    fn last_end(&self) -> Instant {
        *self.last_end.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// When to look again: `timeout` after the last request ended, or (a request is in
    /// flight) `timeout` from now.
    fn idle_deadline(&self, timeout: Duration) -> Instant {
        if self.in_flight.load(Ordering::SeqCst) > 0 {
            return Instant::now() + timeout;
        }
        self.last_end() + timeout
    }

    fn is_idle_since(&self, timeout: Duration) -> bool {
        self.in_flight.load(Ordering::SeqCst) == 0 && self.last_end().elapsed() >= timeout
    }
}

/// One request in flight; its end is the connection's latest activity.
struct Busy(Arc<Activity>);

impl Drop for Busy {
    fn drop(&mut self) {
        *self
            .0
            .last_end
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Instant::now();
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_client_is_an_ipv4_address_or_an_ipv6_64() {
        let key = |text: &str| client_key(text.parse().unwrap()).to_string();
        assert_eq!(key("192.0.2.7"), "192.0.2.7");
        assert_eq!(key("::ffff:192.0.2.7"), "192.0.2.7");
        assert_eq!(key("2001:db8:1:2:aaaa:bbbb:cccc:dddd"), "2001:db8:1:2::");
        assert_eq!(key("2001:db8:1:2::1"), key("2001:db8:1:2:ffff::9"));
        assert_ne!(key("2001:db8:1:2::1"), key("2001:db8:1:3::1"));
    }
}
