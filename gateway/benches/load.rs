//! Load harness for the gateway (issue 6): latency percentiles and throughput for N concurrent
//! clients, direct to a fast upstream and through the gateway in both definition-check
//! freshness modes, with the audit log on.
//!
//! ```text
//! cargo bench -p toolgate --bench load -- [--clients 1,16,64] [--duration SECS | --calls N]
//!     [--warmup SECS]
//!     [--scenario all|direct|list|upstream-client|max-age|per-call|stdio-direct|stdio-per-call,…]
//!     [--audit DIR] [--keep-audit] [--metrics] [--upstream-http2] [--compare [--cmcp-venv DIR]]
//!     [--rounds N] [--threads N] [--gateway-threads N] [--busy-poll-us MICROSECONDS]
//!     [--upstream-tools FILE]
//! ```
//!
//! One process, loopback only: a [`DemoUpstream`] over TLS with a generated certificate (the
//! tool `echo`), a catalog pinning its key and `echo`'s definition (built as `toolgate demo`
//! builds it), an [`AuditLog`] in `DIR` (default: a directory under `target/tmp`, a real disk,
//! `fdatasync`ed; `--audit /dev/shm/…` measures the gateway without the cost of a disk sync),
//! and a [`Gateway`] on `127.0.0.1:0` over plain HTTP. Each simulated client holds its own
//! keep-alive HTTP/1.1 connection and sends stateless 2026-07-28 `tools/call` requests (the
//! `_meta` envelope and the `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers; no
//! session to set up) back to back. Every answer is checked; a failure is counted and printed
//! with its message.
//!
//! Scenarios: `direct` (the clients call the upstream over TLS with the pinned configuration:
//! the baseline), `list` (one upstream `tools/list` round trip, direct, the unit of the per-call
//! goal), `upstream-client` (the gateway's own upstream client called in-process, no gateway
//! server: splits the overhead between the client side and the upstream side), `max-age`
//! (`Freshness::MaxAge(60 s)`), `per-call` (`Freshness::PerCall`); and a local (stdio)
//! upstream, the testkit's stdio server run as `toolgate demo-upstream --stdio --tools FILE`
//! (pinned by the binary and the tools file): `stdio-direct` (the gateway's `LocalUpstream`
//! called in-process, every client sharing the one child, requests multiplexed by id: the
//! baseline) and `stdio-per-call` (the gateway, per-call, in front of that server, entrypoints
//! verified at its start). Every run stops by itself:
//! a warm-up (default 1 s), then a measured duration (default 3 s) or a number of calls.
//!
//! The gateway runs on a Tokio runtime of its own (threads named `tg-gateway`), as it would in
//! a process of its own; the load generator and the upstream share the other. Besides the
//! whole process's CPU per call, the table shows the **gateway's CPU per call** (utime + stime
//! of its threads, from `/proc/self/task/TID/stat`, over the measured part of the run, divided
//! by the calls answered) and its **heap allocations per call** (a counting global allocator,
//! `load/alloc.rs`, that counts every thread but the load runtime's).
//!
//! `--compare` runs the same clients, with every answer checked, through the other gateways
//! installed from their packages, in the same process after the scenarios at each
//! concurrency, each as a process of its own in front of the same upstream: cMCP
//! (`cmcp-runtime` 0.7.1 from PyPI), from the venv `bash bench/compare-gateways.sh` creates
//! (`bench/out/compare-venv`, or `--cmcp-venv DIR`, or `TOOLGATE_CMCP_VENV`). Its rows show
//! the peer process's CPU per call (`/proc/PID/stat`) in the gateway CPU column and no
//! allocation count. cMCP admits 10 calls per session and nothing in its configuration lifts
//! that: the harness closes its session every 10 calls (`load/peer.rs` says how, and what it
//! costs). `--rounds N` runs it all N times, the order reversed in every second round (the
//! peers first), and reports each round. When a peer is not installed, `--compare` stops
//! before measuring anything (exit status 2), naming the peer and the command that installs
//! it.
//!
//! The goals (benchmark goals, not tests), issue 16: in `max-age` with the audit log on tmpfs,
//! at least half the direct throughput at 16 clients, at most 50 µs added at p50 with one client
//! and at most 30 µs of gateway CPU per call; in `per-call` at most one `tools/list` round trip
//! plus 50 µs at one client.

#[path = "load/alloc.rs"]
mod alloc;
#[path = "load/client.rs"]
mod client;
#[path = "load/peer.rs"]
mod peer;
#[path = "load/report.rs"]
mod report;

use std::collections::BTreeMap;
use std::error::Error;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use catalog_store::Catalog;
use clap::{Parser, ValueEnum};
use serde_json::{Value, json};
use server_identity::rustls::RootCertStore;
use server_identity::{EntrypointDigests, digest_file};
use server_identity::{ServerAnchors, TlsTrust, TrustBundles, client_config};
use toolgate::audit::{AuditLog, AuditOptions, SyncObserver, verify_file};
use toolgate::definition_check::Freshness;
use toolgate::local::{LocalCommand, LocalOptions, LocalUpstream};
use toolgate::mcp::{RawJson, methods};
use toolgate::metrics::Metrics;
use toolgate::router::{Router, RouterOptions};
use toolgate::server::{Gateway, MCP_PATH, ServerOptions};
use toolgate::upstream::observe_tools;
use toolgate::upstream::{UpstreamClient, UpstreamOptions};
use toolgate_testkit::{DemoUpstream, DemoUpstreamConfig, RunningUpstream};
use toolgate_testkit::{approved_entry, pinned_entry};

use self::client::{Connection, ECHO_TEXT, Exchange, Target};
use self::report::{
    CpuSample, GATEWAY_THREAD_NAME, Measurement, Sampled, TABLE_HEADER, WARM_UP_PREFIX,
    difference_us, load_average, micros,
};

#[global_allocator]
static ALLOCATOR: alloc::CountingAllocator = alloc::CountingAllocator;

/// The catalog name of the pinned `echo` tool.
const TOOL: &str = "demo.echo";
/// The upstream's name of it.
const UPSTREAM_TOOL: &str = "echo";
/// The `max-age` of the max-age scenario: longer than any run, so only the first call (and a
/// reconnect) lists.
const MAX_AGE: Duration = Duration::from_secs(60);
/// The most distinct error messages kept per run (the rest are counted together).
const MAX_DISTINCT_ERRORS: usize = 50;
/// The goals of issue 16.
const GOAL_OVERHEAD_US: f64 = 50.0;
const GOAL_GATEWAY_CPU_US: f64 = 30.0;
const GOAL_THROUGHPUT_RATIO: f64 = 0.5;

#[derive(Debug, Parser)]
#[command(
    name = "load",
    about = "Latency and throughput of tools/call, direct and through the gateway"
)]
struct Args {
    /// Concurrent clients, one connection each; a comma-separated list runs each in turn.
    #[arg(long, value_delimiter = ',', default_value = "1,16,64")]
    clients: Vec<usize>,
    /// Measured seconds per run (after the warm-up).
    #[arg(long, default_value_t = 3.0, conflicts_with = "calls")]
    duration: f64,
    /// Measured calls per run, shared among the clients, instead of a duration.
    #[arg(long)]
    calls: Option<u64>,
    /// Warm-up seconds per run (calls made, not measured).
    #[arg(long, default_value_t = 1.0)]
    warmup: f64,
    /// Scenarios, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "all")]
    scenario: Vec<ScenarioArg>,
    /// Directory for the audit logs (one fresh log per gateway run). Default: under target/tmp.
    #[arg(long)]
    audit: Option<PathBuf>,
    /// Keep the audit logs after they are verified (they are removed by default).
    #[arg(long)]
    keep_audit: bool,
    /// Tokio worker threads of each of the two runtimes (one for the load generator and the
    /// upstream, one for the gateway). Default: one per CPU.
    #[arg(long)]
    threads: Option<usize>,
    /// Tokio worker threads of the gateway's runtime alone (`toolgate serve --worker-threads`),
    /// over `--threads`: a worker blocked in an audit sync then leaves as many others running.
    #[arg(long)]
    gateway_threads: Option<usize>,
    /// Count every gateway call in `toolgate::metrics`, as `toolgate serve --metrics` does
    /// (calls, stage histograms, handshakes, listings, audit sync time).
    #[arg(long)]
    metrics: bool,
    /// Also run the load, at each concurrency after the scenarios, through the other gateways
    /// installed by `bench/compare-gateways.sh` (cMCP); refused, saying how to install them,
    /// when they are not.
    #[arg(long)]
    compare: bool,
    /// The venv holding cMCP (default: $TOOLGATE_CMCP_VENV, else bench/out/compare-venv).
    #[arg(long)]
    cmcp_venv: Option<PathBuf>,
    /// Runs everything this many times, alternating the order: odd rounds run the scenarios at
    /// each concurrency in the order listed (the peers of `--compare` last), even rounds in the
    /// reverse order (the peers first), so that neither side always runs first on a machine
    /// whose load drifts. Each round is reported in a table of its own.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=20))]
    rounds: u32,
    /// Serve HTTP/2 from the demo upstream (ALPN `h2`): the gateway's calls and listings are
    /// then streams of one connection. `direct` and `list` stay HTTP/1.1.
    #[arg(long)]
    upstream_http2: bool,
    /// Tool definitions (a JSON array, e.g. part of a catalog from bench/gen_catalog.rs) the
    /// demo upstream lists after its own: larger listings, which `per-call` reads on every call
    /// and `list` fetches.
    #[arg(long, value_name = "FILE")]
    upstream_tools: Option<PathBuf>,
    /// Reserve the audit log's space as written zeros (`AuditOptions::prewritten_zeros`,
    /// `toolgate serve --audit-prewrite-zeros`).
    #[arg(long)]
    audit_prewrite_zeros: bool,
    /// Keep a gateway worker polling for I/O for this many microseconds after each request
    /// (`ServerOptions::busy_poll`, `toolgate serve --busy-poll`); pair it with
    /// `--gateway-threads 1`.
    #[arg(long, value_name = "MICROSECONDS")]
    busy_poll_us: Option<u64>,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ScenarioArg {
    All,
    Direct,
    List,
    UpstreamClient,
    MaxAge,
    PerCall,
    StdioDirect,
    StdioPerCall,
}

/// One scenario, in the order they run at each concurrency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Scenario {
    Direct,
    List,
    UpstreamClient,
    MaxAge,
    PerCall,
    StdioDirect,
    StdioPerCall,
    /// cMCP in front of the same upstream (`--compare`; not in [`Scenario::ALL`]).
    Cmcp,
}

impl Scenario {
    const ALL: [Scenario; 7] = [
        Scenario::Direct,
        Scenario::List,
        Scenario::UpstreamClient,
        Scenario::MaxAge,
        Scenario::PerCall,
        Scenario::StdioDirect,
        Scenario::StdioPerCall,
    ];

    fn label(self) -> &'static str {
        match self {
            Scenario::Direct => "direct tools/call (TLS)",
            Scenario::List => "direct tools/list (TLS)",
            Scenario::UpstreamClient => "upstream client in-process",
            Scenario::MaxAge => "gateway max-age=60s",
            Scenario::PerCall => "gateway per-call",
            Scenario::StdioDirect => "direct tools/call (stdio)",
            Scenario::StdioPerCall => "gateway per-call, stdio upstream",
            Scenario::Cmcp => peer::CMCP_LABEL,
        }
    }

    /// The scenario whose p50 this one is compared with.
    fn baseline(self) -> Scenario {
        match self {
            Scenario::StdioDirect | Scenario::StdioPerCall => Scenario::StdioDirect,
            _ => Scenario::Direct,
        }
    }

    fn freshness(self) -> Option<Freshness> {
        match self {
            Scenario::MaxAge => Some(Freshness::MaxAge(MAX_AGE)),
            Scenario::PerCall | Scenario::StdioPerCall => Some(Freshness::PerCall),
            _ => None,
        }
    }
}

/// When a run stops.
#[derive(Debug, Clone, Copy)]
enum Plan {
    /// Measure for this long.
    Duration(Duration),
    /// Measure this many calls in total.
    Calls(u64),
}

/// What the scenarios share: the upstream, its pinned TLS configuration and the catalog; the
/// local server's command and its catalog.
struct Setup {
    upstream: RunningUpstream,
    pinned_tls: Arc<rustls::ClientConfig>,
    catalog: Catalog,
    local_command: LocalCommand,
    local_catalog: Catalog,
    audit_dir: PathBuf,
    audit_kind: &'static str,
    keep_audit: bool,
    metrics: bool,
    audit_prewrite_zeros: bool,
    /// How long a gateway worker keeps polling after each request (`--busy-poll-us`).
    busy_poll: Option<Duration>,
    /// Worker threads of the gateway's runtime (`--gateway-threads`, else `--threads`).
    threads: Option<usize>,
    /// The round being run with `--rounds` above 1 (0 for a single round): it names the audit
    /// logs and cMCP's directory, so that logs kept from one round are not replaced by the next.
    round: std::sync::atomic::AtomicU32,
}

impl Setup {
    /// `name` with the round appended when there are several (`load-max-age-1-round2`).
    fn per_round(&self, name: String) -> String {
        match self.round.load(std::sync::atomic::Ordering::Relaxed) {
            0 => name,
            round => format!("{name}-round{round}"),
        }
    }
}

/// How one simulated client makes its calls.
enum Driver {
    /// Raw HTTP/1.1 on one connection (to the gateway, or over TLS to the upstream).
    Http {
        connection: Connection,
        exchange: Exchange,
    },
    /// The gateway's upstream client, in-process.
    Upstream(UpstreamClient),
    /// The gateway's local upstream, in-process (its child already started).
    Local(LocalUpstream),
    /// Raw HTTP/1.1 to cMCP, in its shared session.
    Cmcp(peer::CmcpClient),
}

impl Driver {
    /// One exchange: its latency (request prepared before, answer checked after the clock).
    async fn step(&mut self, id: u64) -> Result<Duration, String> {
        match self {
            Driver::Cmcp(client) => client.step(id).await,
            Driver::Http {
                connection,
                exchange,
            } => {
                if connection.is_closed() {
                    *connection = Connection::open(&connection.target().clone())
                        .await
                        .map_err(|error| format!("reconnecting: {error}"))?;
                }
                let request = exchange.request(connection.target(), id)?;
                let started = Instant::now();
                let (status, body) = connection.send(request).await?;
                let latency = started.elapsed();
                exchange.check(id, status, &body)?;
                Ok(latency)
            }
            Driver::Local(local) => {
                let arguments = Some(RawJson::from_value(&json!({"text": ECHO_TEXT})));
                let generation = *local.invalidations().borrow();
                let started = Instant::now();
                let result = local
                    .call_tool(UPSTREAM_TOOL, arguments, None, generation)
                    .await
                    .map_err(|error| error.to_string())?;
                let latency = started.elapsed();
                let result = result.to_value().map_err(|error| error.to_string())?;
                if result["content"][0]["text"].as_str() == Some(ECHO_TEXT) {
                    Ok(latency)
                } else {
                    Err(format!("unexpected result: {result}"))
                }
            }
            Driver::Upstream(client) => {
                let arguments = Some(json!({"text": ECHO_TEXT}));
                let started = Instant::now();
                let result = client
                    .call_tool(UPSTREAM_TOOL, arguments, None)
                    .await
                    .map_err(|error| error.to_string())?;
                let latency = started.elapsed();
                if result["content"][0]["text"].as_str() == Some(ECHO_TEXT) {
                    Ok(latency)
                } else {
                    Err(format!("unexpected result: {result}"))
                }
            }
        }
    }
}

/// What one client measured.
#[derive(Default)]
struct ClientResult {
    latencies: Vec<Duration>,
    errors: BTreeMap<String, u64>,
    sent: u64,
    finished: Option<Instant>,
}

fn count_error(errors: &mut BTreeMap<String, u64>, message: String) {
    if errors.len() < MAX_DISTINCT_ERRORS || errors.contains_key(&message) {
        *errors.entry(message).or_default() += 1;
    } else {
        *errors
            .entry("(other messages beyond the first 50)".to_owned())
            .or_default() += 1;
    }
}

async fn client_loop(
    mut driver: Driver,
    warm_end: Instant,
    plan: Plan,
    quota: u64,
) -> ClientResult {
    let mut result = ClientResult::default();
    let mut measured = 0u64;
    let mut id = 1u64;
    loop {
        let now = Instant::now();
        let measuring = now >= warm_end;
        let done = match plan {
            Plan::Duration(duration) => now >= warm_end + duration,
            Plan::Calls(_) => measuring && measured >= quota,
        };
        if done {
            break;
        }
        let outcome = driver.step(id).await;
        id += 1;
        result.sent += 1;
        match outcome {
            Ok(latency) if measuring => result.latencies.push(latency),
            Ok(_) => {}
            Err(message) => {
                let message = if measuring {
                    message
                } else {
                    format!("{WARM_UP_PREFIX}{message}")
                };
                count_error(&mut result.errors, message);
                // A broken target must not turn into a busy loop.
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
        if measuring {
            measured += 1;
        }
    }
    result.finished = Some(Instant::now());
    result
}

/// Opens `clients` drivers, runs them together, and merges what they measured. Returns the
/// measurement and the number of requests sent (warm-up included).
async fn run_load(
    scenario: Scenario,
    audit: &'static str,
    sampled: Option<Sampled>,
    clients: usize,
    plan: Plan,
    warmup: Duration,
    open: impl AsyncFn() -> Result<Driver, String>,
) -> Result<(Measurement, u64), Box<dyn Error>> {
    let mut drivers = Vec::with_capacity(clients);
    for _ in 0..clients {
        drivers.push(open().await?);
    }
    let start = Instant::now();
    let warm_end = start + warmup;
    let total_calls = match plan {
        Plan::Calls(calls) => calls,
        Plan::Duration(_) => 0,
    };
    let mut tasks = tokio::task::JoinSet::new();
    for (index, driver) in drivers.into_iter().enumerate() {
        let quota =
            total_calls / clients as u64 + u64::from((index as u64) < total_calls % clients as u64);
        tasks.spawn(client_loop(driver, warm_end, plan, quota));
    }
    // The CPU window starts with the measurement (after the warm-up).
    tokio::time::sleep_until(warm_end.into()).await;
    let cpu_before = CpuSample::now();
    let gateway_before = sampled.map(Sampled::now);
    let mut latencies = Vec::new();
    let mut errors = BTreeMap::new();
    let mut sent = 0;
    let mut last = warm_end;
    while let Some(joined) = tasks.join_next().await {
        let result = joined?;
        latencies.extend(result.latencies);
        for (message, count) in result.errors {
            *errors.entry(message).or_default() += count;
        }
        sent += result.sent;
        last = last.max(result.finished.unwrap_or(last));
    }
    let cpu_after = CpuSample::now();
    let gateway = gateway_before.zip(sampled.map(Sampled::now));
    latencies.sort_unstable();
    Ok((
        Measurement {
            scenario: scenario.label(),
            audit,
            clients,
            latencies,
            errors,
            elapsed: last.saturating_duration_since(warm_end),
            cpu_before,
            cpu_after,
            gateway,
            load_average: load_average(),
        },
        sent,
    ))
}

/// Runs one scenario at one concurrency. Gateway scenarios also print the audit log's figures
/// and verify its chain.
async fn run_scenario(
    setup: &Setup,
    scenario: Scenario,
    clients: usize,
    plan: Plan,
    warmup: Duration,
) -> Result<Measurement, Box<dyn Error>> {
    // `https://127.0.0.1:PORT/PATH`: the path is what follows the third `/`.
    let upstream_path = setup.upstream.url().splitn(4, '/').nth(3).unwrap_or("mcp");
    let upstream_target = Target {
        address: setup.upstream.address(),
        path: format!("/{upstream_path}"),
        tls: Some(setup.pinned_tls.clone()),
    };
    let Some(freshness) = scenario.freshness() else {
        let (measurement, _) = match scenario {
            Scenario::StdioDirect => {
                let local =
                    LocalUpstream::new(setup.local_command.clone(), LocalOptions::default());
                // Start the child (entrypoints verified) before the clock.
                local.list_tools().await?;
                let outcome = run_load(scenario, "-", None, clients, plan, warmup, async || {
                    Ok(Driver::Local(local.clone()))
                })
                .await;
                local.shutdown().await;
                outcome?
            }
            Scenario::UpstreamClient => {
                run_load(scenario, "-", None, clients, plan, warmup, async || {
                    let url: catalog_store::UpstreamUrl = setup
                        .upstream
                        .url()
                        .parse()
                        .map_err(|error: catalog_store::UrlProblem| error.to_string())?;
                    let client = UpstreamClient::new(
                        &url,
                        setup.pinned_tls.clone(),
                        UpstreamOptions::default(),
                    );
                    Ok(Driver::Upstream(client))
                })
                .await?
            }
            _ => {
                let exchange = if scenario == Scenario::List {
                    Exchange::list()
                } else {
                    Exchange::call(UPSTREAM_TOOL)
                };
                run_load(scenario, "-", None, clients, plan, warmup, async || {
                    Ok(Driver::Http {
                        connection: Connection::open(&upstream_target).await?,
                        exchange: exchange.clone(),
                    })
                })
                .await?
            }
        };
        return Ok(measurement);
    };

    let stdio = scenario == Scenario::StdioPerCall;
    let catalog = if stdio {
        setup.local_catalog.clone()
    } else {
        setup.catalog.clone()
    };
    let measurement_digest = catalog.measurement().digest();
    let mode = match (stdio, freshness) {
        (true, _) => "stdio-per-call",
        (false, Freshness::PerCall) => "per-call",
        (false, _) => "max-age",
    };
    let path = setup
        .audit_dir
        .join(setup.per_round(format!("load-{mode}-{clients}")) + ".jsonl");
    let _ = std::fs::remove_file(&path);
    // The gateway runs on a runtime of its own, as it would in its own process: its threads are
    // told apart by name (CPU from /proc/self/task) and are the ones whose allocations count.
    // They are kept for the whole run, so that no thread leaves with its CPU time.
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(threads) = setup.threads {
        builder.worker_threads(threads.max(1));
    }
    let gateway_runtime = builder
        .thread_name(GATEWAY_THREAD_NAME)
        .thread_keep_alive(Duration::from_secs(3600))
        .enable_all()
        .build()?;
    let metrics = setup.metrics.then(|| Arc::new(Metrics::new()));
    let busy_poll = setup.busy_poll;
    let mut audit_options = AuditOptions::new();
    audit_options.prewritten_zeros(setup.audit_prewrite_zeros);
    if let Some(metrics) = &metrics {
        let metrics = Arc::clone(metrics);
        audit_options.sync_observer(SyncObserver::new(move |took| {
            metrics.observe_audit_sync(took)
        }));
    }
    let started = {
        let path = path.clone();
        let metrics = metrics.clone();
        gateway_runtime.spawn(async move {
            let audit = Arc::new(AuditLog::open_with(
                &path,
                catalog.measurement(),
                &audit_options,
            )?);
            let mut options = RouterOptions::new(Arc::new(RootCertStore::empty()));
            options.freshness = freshness;
            let mut router = Router::new(catalog, options, audit.clone())?;
            if let Some(metrics) = &metrics {
                router = router.with_metrics(Arc::clone(metrics));
            }
            let router = Arc::new(router);
            let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
            let address = listener.local_addr()?;
            let mut server_options = ServerOptions::for_listen_address(address);
            server_options.busy_poll(busy_poll);
            let gateway = Gateway::new(router.clone(), server_options);
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            let serving = tokio::spawn(gateway.serve_http(listener, None, async move {
                let _ = stopped.await;
            }));
            Ok::<_, Box<dyn Error + Send + Sync>>((audit, router, address, stop, serving))
        })
    };
    let (audit, router, address, stop, serving) =
        started.await?.map_err(|error| error.to_string())?;
    let target = Target {
        address,
        path: MCP_PATH.to_owned(),
        tls: None,
    };
    let exchange = Exchange::call(TOOL);
    let controls = setup.upstream.controls();
    let (lists_before, calls_before) = (
        controls.method_count(methods::TOOLS_LIST),
        controls.method_count(methods::TOOLS_CALL),
    );
    let outcome = run_load(
        scenario,
        setup.audit_kind,
        Some(Sampled::GatewayThreads),
        clients,
        plan,
        warmup,
        async || {
            Ok(Driver::Http {
                connection: Connection::open(&target).await?,
                exchange: exchange.clone(),
            })
        },
    )
    .await;
    let _ = stop.send(());
    serving.await??;
    {
        let (router, audit) = (router.clone(), audit.clone());
        gateway_runtime
            .spawn(async move {
                router.shutdown().await;
                audit.shutdown().await;
            })
            .await?;
    }
    gateway_runtime.shutdown_background();
    let (measurement, sent) = outcome?;
    if stdio {
        let status = router
            .upstreams()
            .first()
            .and_then(|upstream| upstream.local())
            .map(|local| local.status());
        eprintln!("    local server: {status:?}");
    } else {
        let lists = controls.method_count(methods::TOOLS_LIST) - lists_before;
        let calls = controls.method_count(methods::TOOLS_CALL) - calls_before;
        eprintln!(
            "    upstream received {lists} tools/list and {calls} tools/call ({:.3} listings per call)",
            lists as f64 / calls.max(1) as f64
        );
    }
    let written = audit.entries_written();
    let syncs = audit.syncs();
    let summary = verify_file(&path, Some(&measurement_digest))?;
    eprintln!(
        "    audit log {}: chain verified, {} entries for {sent} calls sent (+1 gateway_started), \
         {syncs} syncs ({:.1} entries per sync)",
        path.display(),
        summary.entries(),
        written as f64 / syncs.max(1) as f64,
    );
    if summary.entries() != sent + 1 {
        eprintln!(
            "    NOTE: the log holds {} entries, expected {} (one per call plus gateway_started)",
            summary.entries(),
            sent + 1
        );
    }
    if !setup.keep_audit {
        let _ = std::fs::remove_file(&path);
    }
    Ok(measurement)
}

/// The filesystem type holding `path`, from `/proc/mounts` (the longest matching mount point).
fn filesystem_of(path: &Path) -> String {
    let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    mounts
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let _device = fields.next()?;
            let mount_point = fields.next()?;
            let kind = fields.next()?;
            path.starts_with(mount_point)
                .then(|| (mount_point.len(), kind.to_owned()))
        })
        .max()
        .map(|(_, kind)| kind)
        .unwrap_or_else(|| "unknown".to_owned())
}

/// Builds the setup: the upstream, a catalog pinning its `echo`, the pinned TLS configuration.
async fn setup(args: &Args) -> Result<Setup, Box<dyn Error>> {
    let mut upstream_config = DemoUpstreamConfig::new();
    upstream_config.http2(args.upstream_http2);
    if let Some(path) = &args.upstream_tools {
        let read =
            std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let Value::Array(tools) = serde_json::from_slice(&read)
            .map_err(|e| format!("{} is not JSON: {e}", path.display()))?
        else {
            return Err(
                format!("{} is not a JSON array of tool definitions", path.display()).into(),
            );
        };
        upstream_config.append_tools(tools);
    }
    let upstream = DemoUpstream::start(&upstream_config).await?;
    let pin = upstream.spki_fingerprint();
    let url: catalog_store::UpstreamUrl = upstream.url().parse()?;
    let listed = observe_tools(&url, &pin).await?;
    let definition = listed
        .iter()
        .find(|tool| tool["name"] == UPSTREAM_TOOL)
        .ok_or("the demo upstream does not list echo")?;
    let entry = pinned_entry(TOOL, definition, upstream.url(), &pin)?;
    let catalog = Catalog::from_slice(Value::Array(vec![entry]).to_string().as_bytes())?;
    let (local_command, local_catalog) = local_setup(definition)?;

    let mut anchors = ServerAnchors::builder();
    anchors.fingerprint(pin).tls_trust(TlsTrust::Pin);
    let anchors = anchors.build()?;
    let config = client_config(
        &anchors,
        Arc::new(RootCertStore::empty()),
        &TrustBundles::new(),
    )?;
    // The raw clients of `direct` and `list` speak HTTP/1.1 (the gateway's client sets its own
    // ALPN).
    let mut http1 = (*config).clone();
    http1.alpn_protocols = vec![b"http/1.1".to_vec()];

    let audit_dir = args
        .audit
        .clone()
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("toolgate-load"));
    std::fs::create_dir_all(&audit_dir)?;
    let mut kind = filesystem_of(&audit_dir);
    if args.audit_prewrite_zeros {
        kind.push_str(", zeros");
    }
    Ok(Setup {
        upstream,
        pinned_tls: Arc::new(http1),
        catalog,
        local_command,
        local_catalog,
        audit_dir,
        // A label for the table: `Box::leak` once per process is fine in a bench binary.
        audit_kind: Box::leak(kind.into_boxed_str()),
        keep_audit: args.keep_audit,
        round: std::sync::atomic::AtomicU32::new(0),
        metrics: args.metrics,
        audit_prewrite_zeros: args.audit_prewrite_zeros,
        busy_poll: args.busy_poll_us.map(Duration::from_micros),
        threads: args.gateway_threads.or(args.threads),
    })
}

/// The local server: `toolgate demo-upstream --stdio --tools FILE` serving `echo` (the same
/// definition as the TLS upstream's), pinned by the binary and the tools file, and a catalog
/// naming it `demo.echo`.
fn local_setup(echo: &Value) -> Result<(LocalCommand, Catalog), Box<dyn Error>> {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("toolgate-load-stdio");
    std::fs::create_dir_all(&dir)?;
    let tools = dir.join("tools.json");
    std::fs::write(&tools, Value::Array(vec![echo.clone()]).to_string())?;
    let program = PathBuf::from(env!("CARGO_BIN_EXE_toolgate"));
    let mut entrypoints = EntrypointDigests::new();
    let mut digests = serde_json::Map::new();
    for path in [program.clone(), tools.clone()] {
        let digest = digest_file(&path)?;
        digests.insert(path.display().to_string(), Value::from(digest.to_string()));
        entrypoints.insert(path, digest)?;
    }
    let args: Vec<String> = ["demo-upstream", "--stdio", "--tools", "tools.json"]
        .iter()
        .map(|arg| arg.to_string())
        .collect();
    let mut command = LocalCommand::new("load stdio", &program, &dir);
    command.args = args.clone();
    command.entrypoints = entrypoints;
    let mut argv = vec![program.display().to_string()];
    argv.extend(args);
    let server = json!({
        "command": argv,
        "cwd": dir.display().to_string(),
        "entrypoint_digests": Value::Object(digests),
    });
    let entry = approved_entry(TOOL, echo, server)?;
    let catalog = Catalog::from_slice(Value::Array(vec![entry]).to_string().as_bytes())?;
    Ok((command, catalog))
}

fn selected(args: &Args) -> Vec<Scenario> {
    let mut scenarios: Vec<Scenario> = args
        .scenario
        .iter()
        .flat_map(|choice| match choice {
            ScenarioArg::All => Scenario::ALL.to_vec(),
            ScenarioArg::Direct => vec![Scenario::Direct],
            ScenarioArg::List => vec![Scenario::List],
            ScenarioArg::UpstreamClient => vec![Scenario::UpstreamClient],
            ScenarioArg::MaxAge => vec![Scenario::MaxAge],
            ScenarioArg::PerCall => vec![Scenario::PerCall],
            ScenarioArg::StdioDirect => vec![Scenario::StdioDirect],
            ScenarioArg::StdioPerCall => vec![Scenario::StdioPerCall],
        })
        .collect();
    scenarios.sort();
    scenarios.dedup();
    scenarios
}

async fn run(args: Args) -> Result<bool, Box<dyn Error>> {
    if args.clients.contains(&0) {
        return Err("--clients must be at least 1".into());
    }
    if !(args.duration > 0.0 && args.duration <= 600.0 && args.warmup >= 0.0 && args.warmup <= 60.0)
    {
        return Err("--duration must be in (0, 600] seconds and --warmup in [0, 60]".into());
    }
    let plan = match args.calls {
        Some(calls) => Plan::Calls(calls.max(1)),
        None => Plan::Duration(Duration::from_secs_f64(args.duration)),
    };
    let warmup = Duration::from_secs_f64(args.warmup);
    let mut scenarios = selected(&args);
    let cmcp = if args.compare {
        let venv = args
            .cmcp_venv
            .clone()
            .or_else(|| std::env::var_os("TOOLGATE_CMCP_VENV").map(PathBuf::from));
        scenarios.push(Scenario::Cmcp);
        peer::kill_on_interrupt();
        Some(peer::CmcpInstall::locate(&peer::CmcpInstall::venv(venv))?)
    } else {
        None
    };
    let setup = setup(&args).await?;
    eprintln!(
        "upstream {} (TLS, {}, key-pinned {}), audit logs in {} ({}), metrics {}, {} CPUs, {} worker threads, {} for the gateway, busy polling {}, load average {:.2} at start",
        setup.upstream.url(),
        if args.upstream_http2 {
            "h2 offered"
        } else {
            "http/1.1 only"
        },
        setup.upstream.spki_fingerprint(),
        setup.audit_dir.display(),
        setup.audit_kind,
        if setup.metrics { "on" } else { "off" },
        std::thread::available_parallelism().map_or(0, usize::from),
        args.threads
            .map_or_else(|| "default".to_owned(), |threads| threads.to_string()),
        setup
            .threads
            .map_or_else(|| "default".to_owned(), |threads| threads.to_string()),
        setup.busy_poll.map_or_else(
            || "off".to_owned(),
            |window| format!("{} µs", window.as_micros())
        ),
        load_average(),
    );

    let mut rounds = Vec::new();
    for round in 1..=args.rounds {
        let order: Vec<Scenario> = if round % 2 == 1 {
            scenarios.clone()
        } else {
            scenarios.iter().rev().copied().collect()
        };
        if args.rounds > 1 {
            eprintln!("round {round} of {}", args.rounds);
            setup
                .round
                .store(round, std::sync::atomic::Ordering::Relaxed);
        }
        let mut all = Vec::new();
        for &clients in &args.clients {
            for &scenario in &order {
                eprintln!("  {} with {clients} clients …", scenario.label());
                let measurement = match (scenario, &cmcp) {
                    (Scenario::Cmcp, Some(cmcp)) => {
                        peer::run_scenario(&setup, cmcp, clients, plan, warmup).await?
                    }
                    _ => run_scenario(&setup, scenario, clients, plan, warmup).await?,
                };
                for (message, count) in &measurement.errors {
                    eprintln!("    ERROR ×{count}: {message}");
                }
                let direct = direct_p50(&all, &measurement);
                eprintln!("    {}", report::table_row(&measurement, direct));
                all.push(measurement);
            }
        }
        rounds.push(all);
    }

    for (index, all) in rounds.iter().enumerate() {
        if args.rounds > 1 {
            let order = if index % 2 == 0 {
                "scenarios in the order listed"
            } else {
                "scenarios in reverse order"
            };
            println!("\n### Round {} of {} ({order})", index + 1, args.rounds);
        }
        println!("\n{TABLE_HEADER}");
        for measurement in all {
            println!(
                "{}",
                report::table_row(measurement, direct_p50(all, measurement))
            );
        }
        println!();
        print_goals(all);
    }
    let errors: u64 = rounds.iter().flatten().map(Measurement::error_count).sum();
    if errors > 0 {
        println!("\n{errors} exchanges failed (see the ERROR lines above).");
    }
    Ok(errors == 0)
}

/// The baseline's p50 at the same concurrency (`direct`, or `stdio-direct` for the stdio
/// scenarios), when measured.
fn direct_p50(all: &[Measurement], of: &Measurement) -> Option<Duration> {
    let baseline = Scenario::ALL
        .iter()
        .find(|scenario| scenario.label() == of.scenario)
        .map_or(Scenario::Direct, |scenario| scenario.baseline());
    find(all, baseline, of.clients).and_then(|m| m.percentile(0.5))
}

/// The measurement of `scenario` at `clients`, when there is one.
fn find(all: &[Measurement], scenario: Scenario, clients: usize) -> Option<&Measurement> {
    all.iter()
        .find(|m| m.scenario == scenario.label() && m.clients == clients)
}

/// The goals of issue 16, per concurrency, from what was measured.
fn print_goals(all: &[Measurement]) {
    let mut concurrencies: Vec<usize> = all.iter().map(|m| m.clients).collect();
    concurrencies.dedup();
    let verdict = |met: bool| if met { "met" } else { "MISSED" };
    for clients in concurrencies {
        let direct = find(all, Scenario::Direct, clients).and_then(|m| m.percentile(0.5));
        let list = find(all, Scenario::List, clients).and_then(|m| m.percentile(0.5));
        if let Some(max_age) = find(all, Scenario::MaxAge, clients) {
            if let Some(overhead) = difference_us(max_age.percentile(0.5), direct) {
                println!(
                    "- {clients} clients, max-age: overhead at p50 {overhead:.1} µs (goal ≤ {GOAL_OVERHEAD_US} µs): {}",
                    verdict(overhead <= GOAL_OVERHEAD_US)
                );
            }
        }
        if let Some(per_call) = find(all, Scenario::PerCall, clients) {
            if let (Some(overhead), Some(list)) =
                (difference_us(per_call.percentile(0.5), direct), list)
            {
                let bound = list.as_secs_f64() * 1e6 + GOAL_OVERHEAD_US;
                println!(
                    "- {clients} clients, per-call: overhead at p50 {overhead:.1} µs (goal ≤ tools/list p50 {} + {GOAL_OVERHEAD_US} = {bound:.1} µs): {}",
                    micros(Some(list)),
                    verdict(overhead <= bound)
                );
            }
        }
        if let Some(max_age) = find(all, Scenario::MaxAge, clients) {
            if let Some(direct) = find(all, Scenario::Direct, clients) {
                let ratio = max_age.throughput() / direct.throughput().max(1e-9);
                println!(
                    "- {clients} clients, max-age: {:.0} calls/s, {ratio:.2}× direct (goal ≥ {GOAL_THROUGHPUT_RATIO}× at 16 clients): {}",
                    max_age.throughput(),
                    verdict(ratio >= GOAL_THROUGHPUT_RATIO)
                );
            }
            if let Some(cpu) = max_age.gateway_cpu_per_call_us() {
                println!(
                    "- {clients} clients, max-age: gateway CPU {cpu:.1} µs per call (goal ≤ {GOAL_GATEWAY_CPU_US} µs), {:.1} allocations per call: {}",
                    max_age.gateway_allocations_per_call().unwrap_or(f64::NAN),
                    verdict(cpu <= GOAL_GATEWAY_CPU_US)
                );
            }
        }
    }
}

fn main() {
    // Only the gateway's allocations are counted: this thread and the load runtime's (load
    // generator, upstream) are not.
    alloc::do_not_count_this_thread();
    let args = Args::parse();
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(threads) = args.threads {
        builder.worker_threads(threads.max(1));
    }
    builder
        .thread_name("load-worker")
        .on_thread_start(alloc::do_not_count_this_thread);
    let runtime = match builder.enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("load: cannot start the tokio runtime: {error}");
            std::process::exit(2);
        }
    };
    match runtime.block_on(run(args)) {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(error) => {
            eprintln!("load: {error}");
            std::process::exit(2);
        }
    }
}
