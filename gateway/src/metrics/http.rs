//! The metrics listener: `GET /metrics`, `/healthz` and `/readyz` over plain HTTP/1.1, on an
//! address of its own so that it is never exposed where MCP clients connect.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Response, StatusCode, header};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use super::{CONTENT_TYPE, Metrics, Readiness};

/// Scrapers served at once; more wait to be accepted.
const MAX_CONNECTIONS: usize = 32;
/// How long a scraper has to send its request's headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves `/metrics` (OpenMetrics text of `metrics`), `/healthz` (200 while the process
/// serves) and `/readyz` (200, or 503 with the reasons of [`Readiness::check`]) on `listener`
/// until `shutdown` completes.
///
/// # Errors
///
/// None today: a failed accept is logged and retried; the `Result` is for the caller's
/// `select!` symmetry with the MCP listener.
pub async fn serve_metrics(
    listener: TcpListener,
    metrics: Arc<Metrics>,
    readiness: Arc<Readiness>,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let permits = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    tokio::pin!(shutdown);
    loop {
        let Ok(permit) = Arc::clone(&permits).acquire_owned().await else {
            return Ok(());
        };
        let accepted = tokio::select! {
            () = &mut shutdown => return Ok(()),
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(error) => {
                tracing::warn!("metrics listener: cannot accept a connection: {error}");
                // Out of file descriptors, say: do not spin.
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let metrics = Arc::clone(&metrics);
        let readiness = Arc::clone(&readiness);
        tokio::spawn(async move {
            let service = service_fn(move |request| {
                let answer = answer(&request, &metrics, &readiness);
                async move { Ok::<_, Infallible>(answer) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service)
                .await;
            drop(permit);
        });
    }
}

fn answer(
    request: &http::Request<Incoming>,
    metrics: &Metrics,
    readiness: &Readiness,
) -> Response<Full<Bytes>> {
    if request.method() != Method::GET {
        return text(StatusCode::METHOD_NOT_ALLOWED, "only GET is served here\n");
    }
    match request.uri().path() {
        "/metrics" => respond(StatusCode::OK, CONTENT_TYPE, metrics.encode()),
        "/healthz" => text(StatusCode::OK, "ok\n"),
        "/readyz" => match readiness.check() {
            Ok(()) => text(StatusCode::OK, "ready\n"),
            Err(reasons) => respond(
                StatusCode::SERVICE_UNAVAILABLE,
                "text/plain; charset=utf-8",
                format!("not ready: {}\n", reasons.join("; ")),
            ),
        },
        _ => text(
            StatusCode::NOT_FOUND,
            "not found: this listener serves /metrics, /healthz and /readyz\n",
        ),
    }
}

fn text(status: StatusCode, body: &'static str) -> Response<Full<Bytes>> {
    respond(status, "text/plain; charset=utf-8", body.to_owned())
}

fn respond(status: StatusCode, content_type: &str, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    if let Ok(value) = header::HeaderValue::from_str(content_type) {
        response.headers_mut().insert(header::CONTENT_TYPE, value);
    }
    response
}
