//! Accepting connections: plain HTTP or TLS, HTTP/1.1 and HTTP/2, and a graceful shutdown that
//! lets in-flight calls finish.

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;

use super::Gateway;
use super::http::handle;

/// How long a client may take to complete the TLS handshake, and to send request headers.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a shutdown waits for in-flight exchanges before closing their connections.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(30);
/// The most client connections served at once; past it the gateway stops accepting until one
/// closes (the kernel's backlog holds the rest), so a flood cannot exhaust file descriptors.
const MAX_CONNECTIONS: usize = 4096;

pub(crate) async fn serve(
    gateway: Arc<Gateway>,
    listener: TcpListener,
    tls: Option<Arc<rustls::ServerConfig>>,
    shutdown: impl Future<Output = ()> + Send,
) -> io::Result<()> {
    let acceptor = tls.map(TlsAcceptor::from);
    let (stop_sender, stop_receiver) = watch::channel(false);
    let mut connections = JoinSet::new();
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT);
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
                let _ = stream.set_nodelay(true);
                let gateway = gateway.clone();
                let builder = builder.clone();
                let acceptor = acceptor.clone();
                let stop = stop_receiver.clone();
                connections.spawn(async move {
                    // Held for the life of the connection.
                    let _slot = slot;
                    let service = service_fn(move |request| handle(gateway.clone(), request));
                    match acceptor {
                        None => serve_connection(&builder, TokioIo::new(stream), service, stop).await,
                        Some(acceptor) => match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
                            Ok(Ok(tls)) => serve_connection(&builder, TokioIo::new(tls), service, stop).await,
                            Ok(Err(error)) => tracing::debug!(%peer, "TLS handshake failed: {error}"),
                            Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                        },
                    }
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

/// Waits for a free connection slot, then for a connection.
async fn accept(
    listener: &TcpListener,
    slots: &Arc<tokio::sync::Semaphore>,
) -> io::Result<(
    tokio::net::TcpStream,
    std::net::SocketAddr,
    tokio::sync::OwnedSemaphorePermit,
)> {
    let slot = slots
        .clone()
        .acquire_owned()
        .await
        .map_err(io::Error::other)?;
    let (stream, peer) = listener.accept().await?;
    Ok((stream, peer, slot))
}

async fn serve_connection<I, S>(
    builder: &auto::Builder<TokioExecutor>,
    io: I,
    service: S,
    mut stop: watch::Receiver<bool>,
) where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
    S: hyper::service::Service<
            http::Request<hyper::body::Incoming>,
            Response = http::Response<http_body_util::Full<bytes::Bytes>>,
            Error = std::convert::Infallible,
        > + Send
        + 'static,
    S::Future: Send + 'static,
{
    let connection = builder.serve_connection(io, service);
    tokio::pin!(connection);
    let mut stopping = *stop.borrow();
    if stopping {
        connection.as_mut().graceful_shutdown();
    }
    loop {
        tokio::select! {
            result = connection.as_mut() => {
                if let Err(error) = result {
                    tracing::debug!("connection ended with an error: {error}");
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
        }
    }
}
