//! `toolgate serve`: the pinning gateway, over HTTP (optionally TLS) or stdio.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use catalog_store::{Catalog, CatalogLoadError};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use server_identity::TrustBundles;
use server_identity::rustls::RootCertStore;
use toolgate::audit::{ArgumentKey, AuditLog, AuditOptions};
use toolgate::definition_check::Freshness;
use toolgate::router::{Router, RouterOptions};
use toolgate::server::{Gateway, ServerOptions};
use toolgate::upstream::UpstreamOptions;

use crate::cmd::client_auth::ClientAuthArgs;
use crate::cmd::serve_ops::{LogFormat, Operations, Reloader};
use crate::outcome::{Failure, Verdict};

/// The system trust bundle read when no `--ca` is given.
const SYSTEM_BUNDLE: &str = "/etc/ssl/certs/ca-certificates.crt";

/// `toolgate serve`
#[derive(Debug, clap::Args)]
pub(crate) struct ServeArgs {
    /// Boxed, so that the `Command` enum stays small (clippy `large_enum_variant`).
    #[command(flatten)]
    pub(crate) options: Box<ServeOptionArgs>,
}

/// The options of `toolgate serve`.
#[derive(Debug, clap::Args)]
pub(crate) struct ServeOptionArgs {
    /// The catalog file (JSON); the gateway refuses to start when it does not load.
    #[arg(long, value_name = "FILE")]
    pub(crate) catalog: PathBuf,
    /// Address to listen on for MCP Streamable HTTP (POST /mcp).
    #[arg(
        long,
        value_name = "ADDR",
        default_value = "127.0.0.1:8080",
        conflicts_with = "stdio"
    )]
    pub(crate) listen: SocketAddr,
    /// The audit log (JSON Lines, hash-chained); appended to when it exists. The gateway holds
    /// an exclusive lock on it while it runs: a second gateway on the same file exits 2, naming
    /// the process that holds it.
    #[arg(long, value_name = "FILE")]
    pub(crate) audit: PathBuf,
    /// Key the audit log's argument digests with HMAC-SHA-256 (`hmac-sha256:…`), so that
    /// low-entropy arguments cannot be found by hashing guesses. FILE holds at least 32 bytes,
    /// used exactly as they are (`head -c 32 /dev/urandom > FILE`).
    #[arg(long, value_name = "FILE")]
    pub(crate) audit_key: Option<PathBuf>,
    /// How long writing and syncing an audit entry may take; past it the call is refused
    /// (-32603, not forwarded) and so is every later call.
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub(crate) audit_deadline: String,
    /// Reserve the audit log's space ahead of the entries as written zeros, so that a sync
    /// does not also commit a new file length (about a third less per sync on an ext4 disk,
    /// BENCHMARKS.md). While the gateway runs the file then ends in zeros: `tail -f` and log
    /// shippers, which follow a file by its length, miss the entries written over them. The
    /// zeros are cut at shutdown; `toolgate audit verify` accepts them.
    #[arg(long)]
    pub(crate) audit_prewrite_zeros: bool,
    /// Serve one client on standard input and output (newline-delimited JSON-RPC) instead of
    /// HTTP; logs go to standard error.
    #[arg(long)]
    pub(crate) stdio: bool,
    /// PEM trust roots for `tls_trust: webpki` upstreams and an https --jwks (repeatable);
    /// default: the system bundle.
    #[arg(long = "ca", value_name = "FILE")]
    pub(crate) ca: Vec<PathBuf>,
    /// SPIFFE X.509 bundle of a trust domain, PEM or SPIFFE bundle JSON (repeatable).
    #[arg(long = "spiffe-bundle", value_name = "DOMAIN=FILE")]
    pub(crate) spiffe_bundle: Vec<String>,
    /// `per-call` (default: a fresh tools/list for every call) or `max-age=DURATION` (such as
    /// `max-age=30s`), invalidated by notifications/tools/list_changed and reconnects.
    #[arg(long, value_name = "MODE", default_value = "per-call")]
    pub(crate) definition_check: String,
    /// How long an upstream may take to answer one request (`500ms`, `30s`, `2m`).
    #[arg(long, value_name = "DURATION", default_value = "30s")]
    pub(crate) upstream_timeout: String,
    /// How long connecting to an upstream (TCP and TLS) may take.
    #[arg(long, value_name = "DURATION", default_value = "5s")]
    pub(crate) connect_timeout: String,
    /// Speak HTTP/1.1 only to network upstreams (ALPN `http/1.1`), for an upstream or a
    /// middlebox that mishandles HTTP/2. By default `h2` is offered too, and an upstream that
    /// selects it gets every exchange as a stream of one connection.
    #[arg(long)]
    pub(crate) upstream_http1_only: bool,
    /// The largest request body a client may send (larger: HTTP 413).
    #[arg(long, value_name = "BYTES", default_value_t = toolgate::server::DEFAULT_MAX_REQUEST_BYTES)]
    pub(crate) max_request_bytes: usize,
    /// The largest response, from an upstream or to a client.
    #[arg(long, value_name = "BYTES", default_value_t = toolgate::server::DEFAULT_MAX_RESPONSE_BYTES)]
    pub(crate) max_response_bytes: usize,
    /// The most bytes of one upstream tools/list, every page together (larger: upstream_error).
    #[arg(long, value_name = "BYTES", default_value_t = UpstreamOptions::default().max_listing_bytes)]
    pub(crate) max_listing_bytes: usize,
    /// The request-body bytes all requests in flight may hold together; a request that would
    /// exceed it is answered 503 at once (it counts its Content-Length, or --max-request-bytes
    /// when it sends none).
    #[arg(long, value_name = "BYTES", default_value_t = toolgate::server::DEFAULT_MAX_REQUEST_BYTES_IN_FLIGHT)]
    pub(crate) max_request_bytes_in_flight: usize,
    /// Client connections served at once; past it no more are accepted until one closes.
    #[arg(long, value_name = "N", default_value_t = toolgate::server::DEFAULT_MAX_CONNECTIONS)]
    pub(crate) max_connections: usize,
    /// Connections one client address may hold open; one more is closed at once.
    #[arg(long, value_name = "N", default_value_t = toolgate::server::DEFAULT_MAX_CONNECTIONS_PER_ADDRESS)]
    pub(crate) max_connections_per_address: usize,
    /// Live sessions (protocol versions up to 2025-11-25); past it the least recently used of
    /// the address holding the most is dropped.
    #[arg(long, value_name = "N", default_value_t = toolgate::server::DEFAULT_MAX_SESSIONS)]
    pub(crate) max_sessions: usize,
    /// Live sessions one client address may hold; past it that address's own least recently
    /// used session is dropped, never another address's.
    #[arg(long, value_name = "N", default_value_t = toolgate::server::DEFAULT_MAX_SESSIONS_PER_ADDRESS)]
    pub(crate) max_sessions_per_address: usize,
    /// How long a new connection has for its TLS handshake and its first request's headers
    /// (or HTTP/2 preface), and an HTTP/1.1 keep-alive connection for its next request's
    /// headers; a silent connection is closed after it.
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub(crate) header_timeout: String,
    /// How long a connection may stay open with no request in flight (HTTP/1.1 and HTTP/2).
    #[arg(long, value_name = "DURATION", default_value = "60s")]
    pub(crate) idle_timeout: String,
    /// HTTP/2: ping a quiet connection after this long.
    #[arg(long, value_name = "DURATION", default_value = "20s")]
    pub(crate) http2_keep_alive_interval: String,
    /// HTTP/2: close the connection when a keep-alive ping is not answered within this.
    #[arg(long, value_name = "DURATION", default_value = "20s")]
    pub(crate) http2_keep_alive_timeout: String,
    /// Tools per tools/list page.
    #[arg(long, value_name = "N", default_value_t = toolgate::server::DEFAULT_PAGE_SIZE)]
    pub(crate) page_size: usize,
    /// Another Host value to accept: NAME (any port) or NAME:PORT (repeatable). Loopback names
    /// and the listen address are always accepted.
    #[arg(long = "allowed-host", value_name = "HOST")]
    pub(crate) allowed_host: Vec<String>,
    /// Another Origin to accept, such as `https://app.example` (repeatable).
    #[arg(long = "allowed-origin", value_name = "ORIGIN")]
    pub(crate) allowed_origin: Vec<String>,
    /// Serve HTTPS with this certificate chain (PEM); needs --tls-key.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub(crate) tls_cert: Option<PathBuf>,
    /// The private key (PEM) of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub(crate) tls_key: Option<PathBuf>,
    /// Serve /metrics (OpenMetrics text), /healthz and /readyz over plain HTTP on this address
    /// of its own (keep it off the network clients reach).
    #[arg(long, value_name = "ADDR")]
    pub(crate) metrics: Option<SocketAddr>,
    /// The name of this replica, recorded in the audit log's `gateway_started` entry (default:
    /// the host name and the process id, `HOST/PID`).
    #[arg(long, value_name = "NAME")]
    pub(crate) replica_name: Option<String>,
    /// Log lines as `text` (default) or `json` (one object per line).
    #[arg(long, value_name = "FORMAT", value_enum, default_value = "text")]
    pub(crate) log_format: LogFormat,
    /// Threads that run the gateway's work (default: one per CPU). On a machine shared with its
    /// clients and upstreams, 1 keeps a call on one thread from request to answer, which saves
    /// the wake-ups of handing it between threads; more threads serve more calls at once.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub(crate) worker_threads: Option<u16>,
    /// After each request, keep a worker polling for I/O for this long (at most 1s; units us,
    /// ms, s) instead of sleeping, so that neither the next request nor the upstream's answer
    /// waits for an idle CPU to wake. Trades CPU for latency: one CPU stays busy through each
    /// window. Helps most on VMs whose idle vCPUs halt at once; use with --worker-threads 1.
    #[arg(long, value_name = "DURATION")]
    pub(crate) busy_poll: Option<String>,
    /// Who may call (bearer tokens, client certificates).
    #[command(flatten)]
    pub(crate) client_auth: ClientAuthArgs,
}

pub(crate) fn run(args: &ServeArgs) -> Result<Verdict, Failure> {
    let args: &ServeOptionArgs = &args.options;
    crate::cmd::serve_ops::init_logging_as(args.log_format);
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    if let Some(threads) = args.worker_threads {
        runtime.worker_threads(usize::from(threads));
    }
    let runtime = runtime
        .enable_all()
        .build()
        .map_err(|error| Failure::io("cannot start the async runtime", error))?;
    let verdict = runtime.block_on(serve(args));
    // A blocking read of stdin cannot be cancelled; do not wait for it forever.
    runtime.shutdown_timeout(Duration::from_secs(1));
    verdict
}

async fn serve(args: &ServeOptionArgs) -> Result<Verdict, Failure> {
    // Every option first (usage errors, exit 2), then the catalog (an invalid one is exit 1):
    // an operator fixing a catalog should not discover a bad option only afterwards.
    let freshness = parse_freshness(&args.definition_check)?;
    let upstream = UpstreamOptions {
        request_timeout: parse_duration("--upstream-timeout", &args.upstream_timeout)?,
        connect_timeout: parse_duration("--connect-timeout", &args.connect_timeout)?,
        max_response_bytes: args.max_response_bytes,
        max_listing_bytes: args.max_listing_bytes,
        offer_http2: !args.upstream_http1_only,
        ..UpstreamOptions::default()
    };
    let mut router_options = RouterOptions::new(Arc::new(trust_roots(&args.ca)?));
    router_options.bundles = spiffe_bundles(&args.spiffe_bundle)?;
    router_options.local = toolgate::local::LocalOptions::from_upstream(&upstream);
    router_options.upstream = upstream;
    router_options.freshness = freshness;
    router_options.policy = args.client_auth.policy()?;
    args.client_auth.check_exposure(args.listen, args.stdio)?;
    let catalog = Catalog::load(&args.catalog).map_err(|error| match error {
        CatalogLoadError::Invalid { .. } => Failure::Invalid(error.to_string()),
        other => Failure::Usage(other.to_string()),
    })?;

    let mut server_options = ServerOptions::for_listen_address(args.listen);
    server_options
        .max_request_bytes(args.max_request_bytes)
        .max_response_bytes(args.max_response_bytes)
        .page_size(args.page_size)
        .max_request_bytes_in_flight(args.max_request_bytes_in_flight)
        .max_connections(args.max_connections)
        .max_connections_per_address(args.max_connections_per_address)
        .max_sessions(args.max_sessions)
        .max_sessions_per_address(args.max_sessions_per_address)
        .header_timeout(parse_duration("--header-timeout", &args.header_timeout)?)
        .idle_timeout(parse_duration("--idle-timeout", &args.idle_timeout)?)
        .busy_poll(parse_busy_poll(args.busy_poll.as_deref())?)
        .http2_keep_alive(
            parse_duration(
                "--http2-keep-alive-interval",
                &args.http2_keep_alive_interval,
            )?,
            parse_duration("--http2-keep-alive-timeout", &args.http2_keep_alive_timeout)?,
        );
    for host in &args.allowed_host {
        server_options
            .allow_host(host)
            .map_err(|error| Failure::Usage(error.to_string()))?;
    }
    for origin in &args.allowed_origin {
        server_options
            .allow_origin(origin)
            .map_err(|error| Failure::Usage(error.to_string()))?;
    }
    args.client_auth
        .apply(&mut server_options, &router_options.roots)
        .await?;
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => {
            Some(server_tls(cert, key, args.client_auth.client_verifier()?)?)
        }
        _ => None,
    };

    let mut audit_options = AuditOptions::new();
    audit_options.write_deadline(parse_duration("--audit-deadline", &args.audit_deadline)?);
    audit_options.prewritten_zeros(args.audit_prewrite_zeros);
    if let Some(key) = &args.audit_key {
        let key = ArgumentKey::read(key).map_err(|error| Failure::Usage(error.to_string()))?;
        audit_options.argument_key(key);
    }
    audit_options.replica(crate::cmd::serve_ops::replica_name(
        args.replica_name.as_deref(),
    )?);
    let operations = Operations::start(args.metrics, &mut audit_options).await?;
    let measurement = catalog.measurement().digest();
    let audit = AuditLog::open_with(&args.audit, catalog.measurement(), &audit_options)
        .map_err(|error| Failure::Usage(error.to_string()))?;
    let audit = Arc::new(audit);
    let tools = catalog.entries().len();
    let upstreams = catalog.servers().len();
    let mut router = Router::new(catalog, router_options, audit.clone())
        .map_err(|error| Failure::Usage(error.to_string()))?;
    if operations.enabled() {
        router = router.with_metrics(operations.metrics.clone());
        operations
            .metrics
            .catalog_in_force(&measurement.to_string());
    }
    operations.readiness.set_catalog_loaded();
    operations.readiness.set_audit(audit.clone());
    let router = Arc::new(router);
    let gateway = Gateway::new(router, server_options);
    let reloads = Reloader {
        path: args.catalog.clone(),
        audit: audit.clone(),
        metrics: operations.enabled().then(|| operations.metrics.clone()),
        gateway: gateway.clone(),
        retiring: Arc::default(),
    }
    .spawn();

    let served = if args.stdio {
        tracing::info!(tools, upstreams, catalog = %measurement, "serving MCP on stdio");
        operations.readiness.set_listener_up(true);
        gateway
            .clone()
            .serve_stdio(tokio::io::stdin(), tokio::io::stdout(), shutdown_signal())
            .await
    } else {
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .map_err(|error| Failure::io(format!("cannot listen on {}", args.listen), error))?;
        if !args.listen.ip().is_loopback() && args.allowed_host.is_empty() {
            tracing::warn!(
                "listening on {} but only loopback names and that address are allowed as Host; \
                 add the names clients use with --allowed-host",
                args.listen
            );
        }
        let scheme = if tls.is_some() { "https" } else { "http" };
        let address = listener.local_addr().unwrap_or(args.listen);
        tracing::info!(tools, upstreams, catalog = %measurement, "serving MCP on {scheme}://{address}/mcp");
        operations.readiness.set_listener_up(true);
        gateway
            .clone()
            .serve_http(listener, tls, shutdown_signal())
            .await
    };
    if let Some(reloads) = reloads {
        reloads.abort();
    }
    operations.stop().await;
    // Local servers' processes are stopped (SIGTERM, then SIGKILL), never left running.
    gateway.router().shutdown().await;
    audit.shutdown().await;
    tracing::info!(
        entries = audit.entries_written(),
        audit = %args.audit.display(),
        "stopped; the audit log is flushed (keep its last hash elsewhere to detect truncation: \
         `toolgate audit verify` prints it)"
    );
    served.map_err(|error| Failure::io("serving failed", error))?;
    Ok(Verdict::Pass)
}

/// Completes on SIGINT or SIGTERM.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = terminate.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
    tracing::info!("shutting down: finishing calls in flight");
}

/// `per-call` or `max-age=DURATION` ([`Freshness`]'s syntax).
pub(crate) fn parse_freshness(text: &str) -> Result<Freshness, Failure> {
    text.parse::<Freshness>()
        .map_err(|error| Failure::Usage(format!("--definition-check: {error}")))
}

/// `250ms`, `30s`, `5m`, `1h` (a whole number and a unit).
pub(crate) fn parse_duration(option: &str, text: &str) -> Result<Duration, Failure> {
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let value: u64 = digits.parse().map_err(|_| invalid_duration(option, text))?;
    let duration = match unit {
        "us" => Duration::from_micros(value),
        "ms" => Duration::from_millis(value),
        "s" => Duration::from_secs(value),
        "m" => Duration::from_secs(value.saturating_mul(60)),
        "h" => Duration::from_secs(value.saturating_mul(3600)),
        _ => return Err(invalid_duration(option, text)),
    };
    if duration.is_zero() {
        return Err(invalid_duration(option, text));
    }
    Ok(duration)
}

/// `--busy-poll`: a duration of at most [`MAX_BUSY_POLL`](toolgate::server::MAX_BUSY_POLL).
fn parse_busy_poll(text: Option<&str>) -> Result<Option<Duration>, Failure> {
    let Some(text) = text else {
        return Ok(None);
    };
    let window = parse_duration("--busy-poll", text)?;
    if window > toolgate::server::MAX_BUSY_POLL {
        return Err(Failure::Usage(format!(
            "--busy-poll {text:?} is longer than 1s: a worker kept polling that long saves \
             nothing a sleep would not; give a window such as 200us"
        )));
    }
    Ok(Some(window))
}

fn invalid_duration(option: &str, text: &str) -> Failure {
    Failure::Usage(format!(
        "{option} {text:?} is not a duration: write a positive whole number and a unit, such as 250ms, 30s, 5m or 1h"
    ))
}

/// The `--ca` files, or the system bundle when none is given.
pub(crate) fn trust_roots(files: &[PathBuf]) -> Result<RootCertStore, Failure> {
    if files.is_empty() {
        let mut roots = RootCertStore::empty();
        match std::fs::read(SYSTEM_BUNDLE) {
            Ok(pem) => {
                let certificates = CertificateDer::pem_slice_iter(&pem).filter_map(Result::ok);
                let (added, ignored) = roots.add_parsable_certificates(certificates);
                tracing::debug!(added, ignored, "trust roots from {SYSTEM_BUNDLE}");
            }
            Err(error) => tracing::warn!(
                "no --ca given and {SYSTEM_BUNDLE} is unreadable ({error}): tls_trust webpki upstreams will be refused"
            ),
        }
        return Ok(roots);
    }
    let mut roots = RootCertStore::empty();
    for file in files {
        let pem = read(file, "--ca")?;
        let store = server_identity::roots_from_pem(&pem)
            .map_err(|error| Failure::Usage(format!("--ca {}: {error}", file.display())))?;
        roots.roots.extend(store.roots);
    }
    Ok(roots)
}

/// `DOMAIN=FILE` pairs: PEM, or SPIFFE bundle JSON when the file name ends in `.json`.
pub(crate) fn spiffe_bundles(pairs: &[String]) -> Result<TrustBundles, Failure> {
    let mut bundles = TrustBundles::new();
    for pair in pairs {
        let Some((domain, file)) = pair.split_once('=') else {
            return Err(Failure::Usage(format!(
                "--spiffe-bundle {pair:?}: write TRUST_DOMAIN=FILE, such as corp.example=bundle.pem"
            )));
        };
        let path = Path::new(file);
        let bytes = read(path, "--spiffe-bundle")?;
        let added = if file.ends_with(".json") {
            bundles.add_spiffe_json(domain, &bytes)
        } else {
            bundles.add_pem(domain, &bytes)
        };
        added.map_err(|error| Failure::Usage(format!("--spiffe-bundle {pair}: {error}")))?;
    }
    Ok(bundles)
}

fn read(path: &Path, option: &str) -> Result<Vec<u8>, Failure> {
    std::fs::read(path).map_err(|error| {
        Failure::io(
            format!(
                "{option} {}: cannot read the file (check the path and its permissions)",
                path.display()
            ),
            error,
        )
    })
}

/// A TLS server configuration for the listener (HTTP/2 and HTTP/1.1 by ALPN).
fn server_tls(
    cert: &Path,
    key: &Path,
    clients: Option<Arc<dyn rustls::server::danger::ClientCertVerifier>>,
) -> Result<Arc<rustls::ServerConfig>, Failure> {
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .and_then(|iter| iter.collect::<Result<Vec<_>, _>>())
        .map_err(|error| Failure::Usage(format!("--tls-cert {}: {error}", cert.display())))?;
    if chain.is_empty() {
        return Err(Failure::Usage(format!(
            "--tls-cert {}: no CERTIFICATE in the file",
            cert.display()
        )));
    }
    let key = PrivateKeyDer::from_pem_file(key)
        .map_err(|error| Failure::Usage(format!("--tls-key {}: {error}", key.display())))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|error| Failure::Usage(format!("TLS: {error}")))?;
    let builder = match clients {
        Some(verifier) => builder.with_client_cert_verifier(verifier),
        None => builder.with_no_client_auth(),
    };
    let mut config = builder
        .with_single_cert(chain, key)
        .map_err(|error| Failure::Usage(format!("--tls-cert/--tls-key: {error}")))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_freshness_modes_parse() {
        assert_eq!(
            parse_duration("x", "250ms").ok(),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            parse_duration("x", "2m").ok(),
            Some(Duration::from_secs(120))
        );
        assert_eq!(
            parse_duration("x", "200us").ok(),
            Some(Duration::from_micros(200))
        );
        assert_eq!(
            parse_busy_poll(Some("1s")).ok(),
            Some(Some(Duration::from_secs(1)))
        );
        assert_eq!(parse_busy_poll(None).ok(), Some(None));
        assert!(parse_busy_poll(Some("1001ms")).is_err());
        assert!(parse_duration("x", "0s").is_err());
        assert!(parse_duration("x", "5").is_err());
        assert!(parse_duration("x", "s").is_err());
        assert!(matches!(
            parse_freshness("per-call"),
            Ok(Freshness::PerCall)
        ));
        assert!(
            matches!(parse_freshness("max-age=30s"), Ok(Freshness::MaxAge(d)) if d == Duration::from_secs(30))
        );
        assert!(parse_freshness("sometimes").is_err());
    }
}
