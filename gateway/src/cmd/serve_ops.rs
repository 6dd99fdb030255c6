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
    // Colours only for a person at a terminal: a log file, a pipe or journald gets plain text
    // (escape codes there hide the very fields one greps for), and NO_COLOR turns them off.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi)
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

/// What a reload needs: where the catalog is, the audit log and metrics, and the gateway whose
/// router it replaces (the successor is built with that router's options).
pub(crate) struct Reloader {
    pub(crate) path: std::path::PathBuf,
    pub(crate) audit: Arc<toolgate::audit::AuditLog>,
    /// `Some` when `--metrics` counts.
    pub(crate) metrics: Option<Arc<Metrics>>,
    pub(crate) gateway: Arc<toolgate::server::Gateway>,
    /// Held while a replaced router stops its local servers and is dropped: one at a time, so
    /// that each sees whether a router retired meanwhile still holds a server
    /// ([`Router::shutdown_unshared`](toolgate::router::Router::shutdown_unshared)).
    pub(crate) retiring: Arc<tokio::sync::Mutex<()>>,
}

/// How long a replaced router waits for its calls in flight before the local servers that its
/// successor did not carry over are stopped (their processes would otherwise outlive the
/// reload).
const RETIRE_LIMIT: std::time::Duration = std::time::Duration::from_secs(120);

impl Reloader {
    /// Reloads the catalog on every SIGHUP until the task is aborted. The handler is installed
    /// before this returns, so a SIGHUP sent once serving is logged never ends the process.
    pub(crate) fn spawn(self) -> Option<tokio::task::JoinHandle<()>> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let mut hangups = match signal(SignalKind::hangup()) {
                Ok(hangups) => hangups,
                Err(error) => {
                    tracing::warn!("cannot handle SIGHUP ({error}): the catalog is not reloaded");
                    return None;
                }
            };
            Some(tokio::spawn(async move {
                while hangups.recv().await.is_some() {
                    self.reload().await;
                }
            }))
        }
        #[cfg(not(unix))]
        {
            let _ = self;
            None
        }
    }

    /// Loads the catalog file again: refused (the one in force kept) when it does not load,
    /// its router cannot be built or its `catalog_loaded` entry cannot be recorded; otherwise
    /// in force for every later request.
    pub(crate) async fn reload(&self) {
        let count = |result: &str| {
            if let Some(metrics) = &self.metrics {
                metrics.count_reload(result);
            }
        };
        let current = self.gateway.router();
        let previous = current.catalog().measurement().digest();
        let refuse = |why: String| {
            tracing::error!(
                catalog = %self.path.display(),
                in_force = %previous,
                "catalog reload refused, the catalog in force is kept: {why}"
            );
        };
        let catalog = match catalog_store::Catalog::load(&self.path) {
            Ok(catalog) => catalog,
            Err(error) => {
                count("refused");
                return refuse(error.to_string());
            }
        };
        let measurement = catalog.measurement().digest();
        if measurement == previous {
            count("unchanged");
            tracing::info!(catalog = %measurement, "catalog reload: the catalog is unchanged");
            return;
        }
        // Upstreams whose binding is unchanged are carried over with their connections and
        // processes; the others, and every listing, start afresh.
        let router = match current.successor(catalog) {
            Ok(router) => router,
            Err(error) => {
                count("refused");
                return refuse(error.to_string());
            }
        };
        if let Err(error) = self
            .audit
            .record_catalog_loaded(previous, measurement)
            .await
        {
            count("refused");
            return refuse(format!("the audit log cannot record the reload: {error}"));
        }
        drop(current);
        let old = self.gateway.replace_router(Arc::new(router));
        if let Some(metrics) = &self.metrics {
            metrics.catalog_in_force(&measurement.to_string());
        }
        count("loaded");
        tracing::info!(
            catalog = %measurement,
            previous_catalog = %previous,
            "catalog reloaded: later calls are decided under it"
        );
        let retiring = Arc::clone(&self.retiring);
        tokio::spawn(async move {
            let started = tokio::time::Instant::now();
            while Arc::strong_count(&old) > 1 && started.elapsed() < RETIRE_LIMIT {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            let _one_at_a_time = retiring.lock().await;
            old.shutdown_unshared().await;
            drop(old);
        });
    }
}

/// The longest `--replica-name`.
const MAX_REPLICA_NAME: usize = 256;

/// `--replica-name NAME` checked (1 to 256 characters, no control characters), or the host
/// name and the process id.
pub(crate) fn replica_name(given: Option<&str>) -> Result<String, Failure> {
    let Some(name) = given else {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .map(|host| host.trim().to_owned())
            .filter(|host| !host.is_empty())
            .unwrap_or_else(|| "localhost".to_owned());
        return Ok(format!("{host}/{}", std::process::id()));
    };
    let length = name.chars().count();
    if length == 0 || length > MAX_REPLICA_NAME || name.chars().any(char::is_control) {
        return Err(Failure::Usage(format!(
            "--replica-name {name:?}: write 1 to {MAX_REPLICA_NAME} characters without control \
             characters, such as gw-eu-1"
        )));
    }
    Ok(name.to_owned())
}
