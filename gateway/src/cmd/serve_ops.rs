//! The operating side of `toolgate serve` (docs/design.md §8): the `--metrics` listener and
//! its readiness, and `--log-format`.

use std::net::SocketAddr;
use std::sync::Arc;

use toolgate::audit::{AuditOptions, SyncObserver};
use toolgate::metrics::{Metrics, Readiness, serve_metrics};

use crate::outcome::Failure;

/// How log lines are written (`--log-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line, every field of the event a member.
    Json,
}

/// `tracing` to standard error, filtered by `RUST_LOG` (default `info`), in `format`.
pub(crate) fn init_logging_as(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .try_init(),
    };
}

/// The metrics and readiness of a running gateway, and the listener serving them.
pub(crate) struct Operations {
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) readiness: Arc<Readiness>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    serving: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl Operations {
    /// Binds `--metrics ADDR` (when given) and starts serving it; the audit log's group commits
    /// are timed through `audit_options`.
    pub(crate) async fn start(
        address: Option<SocketAddr>,
        audit_options: &mut AuditOptions,
    ) -> Result<Operations, Failure> {
        let metrics = Arc::new(Metrics::new());
        let readiness = Arc::new(Readiness::new());
        let mut operations = Operations {
            metrics: Arc::clone(&metrics),
            readiness: Arc::clone(&readiness),
            stop: None,
            serving: None,
        };
        let Some(address) = address else {
            return Ok(operations);
        };
        let observed = Arc::clone(&metrics);
        audit_options.sync_observer(SyncObserver::new(move |duration| {
            observed.observe_audit_sync(duration)
        }));
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .map_err(|error| {
                Failure::io(format!("--metrics: cannot listen on {address}"), error)
            })?;
        let bound = listener.local_addr().unwrap_or(address);
        tracing::info!("serving metrics on http://{bound}/metrics (and /healthz, /readyz)");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        operations.stop = Some(stop);
        operations.serving = Some(tokio::spawn(serve_metrics(
            listener,
            metrics,
            readiness,
            async move {
                let _ = stopped.await;
            },
        )));
        Ok(operations)
    }

    /// Whether `--metrics` was given (the router counts only then).
    pub(crate) fn enabled(&self) -> bool {
        self.serving.is_some()
    }

    /// Closes the metrics listener.
    pub(crate) async fn stop(mut self) {
        self.readiness.set_listener_up(false);
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(serving) = self.serving.take() {
            let _ = serving.await;
        }
    }
}
