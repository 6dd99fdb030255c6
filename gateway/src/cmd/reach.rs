//! Reaching an upstream for the catalog's life cycle (`pin`, `catalog verify`, `catalog
//! approve`; docs/design.md §9). A network server: the trust roots and SPIFFE bundles given on
//! the command line, what it presents, and its live `tools/list` read through a connection that
//! enforces given anchors in the handshake. A local (stdio) server: started through
//! `LocalUpstream`, which verifies its entrypoint digests before it spawns anything
//! (docs/design.md §3 "Local (stdio) upstreams"), listed, and stopped.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use catalog_store::UpstreamUrl;
use serde_json::Value;
use server_identity::rustls::RootCertStore;
use server_identity::{IdentityError, Observation, ServerAnchors, TrustBundles};

use crate::observe::ObserveError;
use toolgate::local::{LocalCommand, LocalOptions, LocalUpstream};
use toolgate::upstream::{UpstreamClient, UpstreamError, UpstreamOptions};

use crate::cmd::serve::{parse_duration, spiffe_bundles, trust_roots};
use crate::outcome::Failure;

/// The options of every command that reaches servers.
#[derive(Debug, clap::Args)]
pub(crate) struct ReachArgs {
    /// PEM trust roots (repeatable): what a `tls_trust: webpki` server's chain must validate to
    /// (for `pin`: whether it is written as `webpki` or `pin`). Default: the system bundle.
    #[arg(long = "ca", value_name = "FILE")]
    pub(crate) ca: Vec<PathBuf>,
    /// SPIFFE X.509 bundle of a trust domain, PEM or SPIFFE bundle JSON (repeatable).
    #[arg(long = "spiffe-bundle", value_name = "DOMAIN=FILE")]
    pub(crate) spiffe_bundle: Vec<String>,
    /// How long each server may take (the handshake, then the whole tools/list).
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub(crate) timeout: String,
}

impl ReachArgs {
    /// The trust and the timeout; a bad file or duration is a usage error (exit 2).
    pub(crate) fn parse(&self) -> Result<(Trust, Duration), Failure> {
        let timeout = parse_duration("--timeout", &self.timeout)?;
        Ok((Trust::from_args(&self.ca, &self.spiffe_bundle)?, timeout))
    }
}

/// The trust a command was given: `--ca` roots (or the system bundle) and `--spiffe-bundle`s.
pub(crate) struct Trust {
    pub(crate) roots: Arc<RootCertStore>,
    pub(crate) bundles: TrustBundles,
}

impl Trust {
    /// From the `--ca` files (none: the system bundle) and the `--spiffe-bundle DOMAIN=FILE`
    /// pairs; an unreadable or invalid file is a usage error (exit 2).
    pub(crate) fn from_args(ca: &[PathBuf], spiffe_bundle: &[String]) -> Result<Trust, Failure> {
        Ok(Trust {
            roots: Arc::new(trust_roots(ca)?),
            bundles: spiffe_bundles(spiffe_bundle)?,
        })
    }
}

/// What the server at `url` presents, trusting nothing, with whether its chain validates to
/// `roots` for the URL's host.
pub(crate) async fn observe_identity(
    url: &UpstreamUrl,
    roots: &Arc<RootCertStore>,
) -> Result<Observation, ObserveError> {
    crate::observe::observe(url, Some(roots.clone())).await
}

/// Why a listing under given anchors failed.
pub(crate) enum ListFailure {
    /// The server is not the one the anchors pin (refused inside the handshake).
    Identity(IdentityError),
    /// No listing: the server is unreachable, or answered badly, or too slowly.
    Unavailable(String),
}

impl ListFailure {
    fn of(error: UpstreamError) -> ListFailure {
        match error.identity_error() {
            Some(identity) => ListFailure::Identity(identity.clone()),
            None => ListFailure::Unavailable(error.to_string()),
        }
    }
}

/// Every tool the server at `url` lists (every page, either protocol generation), over
/// connections whose handshake enforces `anchors`; the whole listing bounded by `timeout`.
pub(crate) async fn list_tools(
    url: &UpstreamUrl,
    anchors: &ServerAnchors,
    trust: &Trust,
    timeout: Duration,
) -> Result<Vec<Value>, ListFailure> {
    let tls = server_identity::client_config(anchors, trust.roots.clone(), &trust.bundles)
        .map_err(|error| ListFailure::Unavailable(format!("{url}: {error}")))?;
    let options = UpstreamOptions {
        connect_timeout: timeout,
        request_timeout: timeout,
        // One listing, then the process ends: no event stream to keep open.
        listen_for_notifications: false,
        ..UpstreamOptions::default()
    };
    let client = UpstreamClient::new(url, tls, options);
    match tokio::time::timeout(timeout, client.list_tools()).await {
        Ok(listed) => listed.map_err(ListFailure::of),
        Err(_) => Err(ListFailure::Unavailable(format!(
            "{url}: no complete tools/list within {} ms (raise --timeout if the server is this slow)",
            timeout.as_millis()
        ))),
    }
}

/// Every tool the local server of `command` lists (every page), its entrypoints verified
/// before it is started; the start and the whole listing bounded by `timeout`. The process is
/// stopped before this returns (stdin closed, then SIGTERM, then SIGKILL), whatever happened.
pub(crate) async fn list_local_tools(
    command: LocalCommand,
    timeout: Duration,
) -> Result<Vec<Value>, ListFailure> {
    let options = LocalOptions {
        start_timeout: timeout,
        discover_timeout: timeout.min(LocalOptions::default().discover_timeout),
        request_timeout: timeout,
        stop_grace: Duration::from_secs(1),
        ..LocalOptions::default()
    };
    let upstream = LocalUpstream::new(command, options);
    let label = upstream.url().to_owned();
    let listed = tokio::time::timeout(timeout, upstream.list_tools()).await;
    upstream.shutdown().await;
    match listed {
        Ok(listed) => listed.map_err(ListFailure::of),
        Err(_) => Err(ListFailure::Unavailable(format!(
            "{label}: no complete tools/list within {} ms of starting it (raise --timeout if \
             the server is this slow to start)",
            timeout.as_millis()
        ))),
    }
}

/// A runtime for one command: several servers are reached at once. With `RUST_LOG` set, the
/// log goes to stderr as under `serve` (`RUST_LOG=info` shows what a local server writes on its
/// stderr, the first thing to read when it fails to start); without it, nothing is logged.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    if std::env::var_os("RUST_LOG").is_some() {
        crate::cmd::serve_ops::init_logging_as(crate::cmd::serve_ops::LogFormat::Text);
    }
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|error| Failure::io("cannot start the async runtime", error))
}
