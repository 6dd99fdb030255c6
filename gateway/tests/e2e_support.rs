//! A gateway in front of a demo upstream, both real: TLS with a generated certificate on
//! loopback, the gateway on 127.0.0.1 over HTTP, an audit log in a temporary file.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use catalog_store::Catalog;
use jcs_digest::Digest;
use serde_json::{Value, json};
use server_identity::TrustBundles;
use server_identity::rustls::RootCertStore;
use toolgate::audit::{AuditLog, AuditOptions};
use toolgate::definition_check::Freshness;
use toolgate::mcp::ProtocolVersion;
use toolgate::router::{Router, RouterOptions};
use toolgate::server::{Gateway, MCP_PATH, ServerOptions};
use toolgate::upstream::UpstreamOptions;
use toolgate::upstream::observe_tools;
use toolgate_testkit::{DemoUpstream, DemoUpstreamConfig, RunningUpstream};
use toolgate_testkit::{GatewayClient, pinned_entry};

/// Every async test runs inside this bound, so none can hang.
pub const TEST_TIMEOUT: Duration = Duration::from_secs(90);

/// Runs `test` on a fresh multi-threaded runtime, bounded by [`TEST_TIMEOUT`].
pub fn run<F: Future<Output = ()>>(test: F) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        tokio::time::timeout(TEST_TIMEOUT, test)
            .await
            .expect("the test did not finish in time");
    });
}

/// A fresh directory under cargo's temporary directory.
pub fn temp_dir(name: &str) -> PathBuf {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("e2e")
        .join(format!("{name}-{nanos}"));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A change to the gateway's server options.
pub type AdjustServer = Box<dyn FnOnce(&mut ServerOptions)>;

/// What to start.
pub struct Setup {
    pub upstream: DemoUpstreamConfig,
    /// (catalog tool_name, upstream tool name) pairs to pin, from the upstream's live listing.
    pub pinned: Vec<(String, String)>,
    pub freshness: Freshness,
    pub upstream_options: UpstreamOptions,
    pub audit_path: Option<PathBuf>,
    pub server_options: Option<AdjustServer>,
    /// Replaces the `server` block of every pinned entry (a SPIFFE binding, say); `None` keeps
    /// the key pin `pinned_entry` writes.
    pub server: Option<Value>,
    /// The gateway's SPIFFE trust bundles (`RouterOptions.bundles`).
    pub bundles: TrustBundles,
    /// How the audit log writes (deadline, argument key).
    pub audit_options: AuditOptions,
    /// `--policy` (docs/design.md §7).
    pub policy: Option<Arc<toolgate::auth::ToolPolicy>>,
}

impl Setup {
    /// The default demo upstream with `demo.echo`, `demo.add` and `demo.get_time` pinned.
    pub fn new() -> Setup {
        Setup {
            upstream: DemoUpstreamConfig::new(),
            pinned: [
                ("demo.echo", "echo"),
                ("demo.add", "add"),
                ("demo.get_time", "get_time"),
            ]
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect(),
            freshness: Freshness::PerCall,
            upstream_options: UpstreamOptions::default(),
            audit_path: None,
            server_options: None,
            server: None,
            bundles: TrustBundles::new(),
            audit_options: AuditOptions::new(),
            policy: None,
        }
    }
}

/// A running upstream and gateway.
pub struct Harness {
    pub upstream: RunningUpstream,
    pub url: String,
    pub audit_path: PathBuf,
    pub measurement: Digest,
    pub audit: Arc<AuditLog>,
    pub gateway: Arc<Gateway>,
    pub catalog_json: Value,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    serving: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl Harness {
    pub async fn start(setup: Setup) -> Harness {
        let upstream = DemoUpstream::start(&setup.upstream).await.unwrap();
        Harness::start_with(upstream, setup).await
    }

    pub async fn start_with(upstream: RunningUpstream, setup: Setup) -> Harness {
        let pin = upstream.spki_fingerprint();
        let listed = observe_tools(&upstream.url().parse().unwrap(), &pin)
            .await
            .unwrap();
        let entries: Vec<Value> = setup
            .pinned
            .iter()
            .map(|(tool_name, upstream_name)| {
                let definition = listed
                    .iter()
                    .find(|tool| tool["name"] == upstream_name.as_str())
                    .unwrap_or_else(|| panic!("the upstream does not list {upstream_name}"));
                let mut entry = pinned_entry(tool_name, definition, upstream.url(), &pin).unwrap();
                if let Some(server) = &setup.server {
                    entry["server"] = server.clone();
                }
                entry
            })
            .collect();
        let catalog_json = Value::Array(entries);
        let catalog = Catalog::from_slice(catalog_json.to_string().as_bytes()).unwrap();
        let measurement = catalog.measurement().digest();
        let audit_path = setup
            .audit_path
            .unwrap_or_else(|| temp_dir("audit").join("audit.jsonl"));
        let audit = Arc::new(
            AuditLog::open_with(&audit_path, catalog.measurement(), &setup.audit_options).unwrap(),
        );
        let mut options = RouterOptions::new(Arc::new(RootCertStore::empty()));
        options.freshness = setup.freshness;
        options.upstream = setup.upstream_options;
        options.bundles = setup.bundles;
        options.policy = setup.policy;
        let router = Router::new(catalog, options, audit.clone()).unwrap();
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .unwrap();
        let address = listener.local_addr().unwrap();
        let mut server_options = ServerOptions::for_listen_address(address);
        if let Some(adjust) = setup.server_options {
            adjust(&mut server_options);
        }
        let gateway = Gateway::new(Arc::new(router), server_options);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let serving = tokio::spawn(gateway.clone().serve_http(listener, None, async move {
            let _ = stopped.await;
        }));
        Harness {
            upstream,
            url: format!("http://{address}{MCP_PATH}"),
            audit_path,
            measurement,
            audit,
            gateway,
            catalog_json,
            stop: Some(stop),
            serving: Some(serving),
        }
    }

    /// The gateway's client of its (first) network upstream: its connections, invalidations
    /// and the identity it observed.
    pub fn network_upstream(&self) -> toolgate::upstream::UpstreamClient {
        self.gateway.router().upstreams()[0]
            .network()
            .unwrap()
            .clone()
    }

    /// A connected client of the gateway speaking `version`.
    pub async fn client(&self, version: ProtocolVersion) -> GatewayClient {
        let mut client = GatewayClient::new(&self.url, version);
        client.connect().await.unwrap();
        client
    }

    /// Stops the gateway (in-flight calls finish) and flushes the audit log.
    pub async fn stop(mut self) -> (RunningUpstream, PathBuf, Digest) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(serving) = self.serving.take() {
            serving.await.unwrap().unwrap();
        }
        self.audit.shutdown().await;
        (self.upstream, self.audit_path, self.measurement)
    }

    /// The audit log's entries, parsed (after [`Harness::stop`], or while running: every
    /// answered call is already on disk).
    pub fn audit_entries(&self) -> Vec<Value> {
        read_entries(&self.audit_path)
    }
}

pub fn read_entries(path: &PathBuf) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// The `tools/call` entries of a log.
pub fn call_entries(entries: &[Value]) -> Vec<Value> {
    entries
        .iter()
        .filter(|entry| entry["event"] == "tools/call")
        .cloned()
        .collect()
}

/// `(code, data.reason)` of a denial.
pub fn denial(answer: &Result<Value, toolgate::mcp::ErrorObject>) -> (i64, String) {
    let error = answer
        .as_ref()
        .expect_err("expected a denial, got a result");
    let reason = error
        .data
        .as_ref()
        .and_then(|data| data["reason"].as_str())
        .unwrap_or("(none)")
        .to_owned();
    (error.code, reason)
}

/// Calls `demo.echo` and asserts that it is refused `identity_mismatch` in the upstream's
/// handshake, before the upstream received a single application byte.
pub async fn assert_refused_in_the_handshake(
    client: &mut GatewayClient,
    controls: &toolgate_testkit::DemoControls,
) {
    let bytes_before = controls.bytes_received();
    let answer = client
        .call_tool("demo.echo", json!({"text": "after"}))
        .await
        .unwrap();
    assert_eq!(denial(&answer), (-32001, "identity_mismatch".to_owned()));
    assert_eq!(controls.bytes_received(), bytes_before);
}

/// Waits (bounded) until `condition` holds.
pub async fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    for _ in 0..500 {
        if condition() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{what} did not happen within 5 s");
}

/// Waits (bounded: 30 s, for conditions that take a round trip to test) until `condition`
/// resolves to true.
pub async fn eventually_async<F: Future<Output = bool>>(
    what: &str,
    mut condition: impl FnMut() -> F,
) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while tokio::time::Instant::now() < deadline {
        if condition().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{what} did not happen within 30 s");
}

/// The `toolgate` binary under test.
pub const TOOLGATE: &str = env!("CARGO_BIN_EXE_toolgate");

/// Waits for a child to exit, at most `limit` (it is killed and the test fails otherwise); its
/// exit code, and its stderr when that was piped.
pub fn wait_bounded(child: &mut std::process::Child, limit: Duration) -> (i32, String) {
    let started = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut stderr = String::new();
            if let Some(pipe) = child.stderr.as_mut() {
                std::io::Read::read_to_string(pipe, &mut stderr).unwrap();
            }
            return (status.code().unwrap_or(-1), stderr);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("toolgate did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `toolgate serve` running as a process on a free loopback port, stderr piped.
pub struct ServeProcess {
    child: std::process::Child,
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
}

impl ServeProcess {
    /// Starts `toolgate serve --catalog CATALOG --listen 127.0.0.1:PORT --audit AUDIT EXTRA…`.
    pub fn spawn(
        catalog: &std::path::Path,
        audit: &std::path::Path,
        extra: &[&str],
    ) -> ServeProcess {
        let port = {
            let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            probe.local_addr().unwrap().port()
        };
        let listen = format!("127.0.0.1:{port}");
        let child = std::process::Command::new(TOOLGATE)
            .args([
                "serve",
                "--catalog",
                catalog.to_str().unwrap(),
                "--listen",
                &listen,
            ])
            .args(["--audit", audit.to_str().unwrap()])
            .args(extra)
            .env("RUST_LOG", "info")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        ServeProcess {
            child,
            url: format!("http://{listen}{MCP_PATH}"),
        }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// A client that has completed `initialize`, retrying while the process starts (bounded);
    /// the process is killed and the test fails if it never answers.
    pub async fn connect(&mut self, version: ProtocolVersion) -> GatewayClient {
        let mut client = GatewayClient::new(&self.url, version);
        for _ in 0..250 {
            if client.connect().await.is_ok() {
                return client;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let _ = self.child.kill();
        panic!("toolgate serve did not answer on {}", self.url);
    }

    /// Sends `signal` (`TERM`, `HUP`, …) to the process; whether `kill` succeeded.
    pub fn signal(&self, signal: &str) -> bool {
        std::process::Command::new("kill")
            .args([&format!("-{signal}"), &self.child.id().to_string()])
            .status()
            .is_ok_and(|status| status.success())
    }

    /// SIGTERM, then the bounded wait: the exit code and everything it wrote to stderr.
    pub async fn terminate(mut self) -> (i32, String) {
        assert!(self.signal("TERM"));
        tokio::task::spawn_blocking(move || wait_bounded(&mut self.child, Duration::from_secs(20)))
            .await
            .unwrap()
    }
}

impl Drop for ServeProcess {
    /// A test that fails before [`terminate`](ServeProcess::terminate) must not leave the
    /// gateway running, nor the local servers it started: SIGTERM (the gateway stops its
    /// children), then SIGKILL if it is still there after a few seconds. Never panics.
    fn drop(&mut self) {
        if !matches!(self.child.try_wait(), Ok(None)) {
            return;
        }
        self.signal("TERM");
        let started = std::time::Instant::now();
        while matches!(self.child.try_wait(), Ok(None)) {
            if started.elapsed() > Duration::from_secs(5) {
                let _ = self.child.kill();
                let _ = self.child.wait();
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
