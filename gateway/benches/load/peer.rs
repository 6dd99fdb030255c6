//! The other gateways `--compare` runs the same load through (issue 16). Today one: cMCP,
//! `cmcp-runtime` 0.7.1 from PyPI (the tool-identity specification's reference gateway), installed
//! by `bench/compare-gateways.sh` into a venv (`bench/out/compare-venv` unless `--cmcp-venv` or
//! `TOOLGATE_CMCP_VENV` names another).
//!
//! For each run it gets a fresh process, configured in a directory of its own under the audit
//! directory (so that `--audit /dev/shm/…` puts its audit database on tmpfs too), as its
//! installed source (`cmcp_runtime/config.py`, `catalog/loader.py`, `policy/bundle.py`) reads
//! it:
//! - `config.yaml`: `listen_addr` on a free loopback port, `attestation.provider:
//!   software-only`, the catalog, policy and audit database paths; `CMCP_DEV_MODE=1` in the
//!   environment (no bearer token, no pinned policy or catalog hash, loopback only).
//! - `catalog.json`: one entry, `echo` (cMCP forwards the catalog's name unchanged, so it is the
//!   upstream's name) at the demo upstream's URL, `transport: streamable-http`, the upstream's
//!   `echo` definition as `approved_definition` (cMCP compares it with the live `tools/list` on
//!   first contact in each session), and `tls_fingerprint` = `SHA256:` + base64 of the SHA-256
//!   of the leaf certificate's DER (the pin cMCP checks after the handshake,
//!   `mcp/tls_pinning.py`; hence `rotation_mode: cert-pinned`).
//! - `ca.pem`: the demo upstream's CA, trusted through `SSL_CERT_FILE` (httpx's client reads
//!   it), because cMCP verifies the chain as well as the pin.
//! - `policy/`: a Cedar bundle of one `permit (principal, action, resource);`, with the schema
//!   cMCP's own benchmark module uses.
//!
//! **The budget of 10 calls per session.** cMCP refuses the 11th `tools/call` of a session
//! (`Request denied by policy`, HTTP 403): `GovernancePolicy.max_tool_calls = 10` is a default
//! that `CMCPProxy` never overrides from its configuration (`runtime_gateway.py`,
//! `mcp/proxy.py`), and no environment variable sets it. The session is the gateway's (one at a
//! time, shared by every client), so [`Sessions`] opens a new one every 10 calls the way cMCP
//! offers: after the 10th call has been admitted, the next caller waits until the 10 in flight
//! have been answered and `POST /sessions/{id}/close`s the session (cMCP signs its TRACE claim
//! and rotates onto a fresh session); the other clients wait meanwhile. What that costs is
//! counted, not hidden: the close and the waiting are in the wall-clock time that calls/s
//! divides by (not in the latency percentiles, which time each call's own exchange), the close
//! is in the peer's CPU, and cMCP's first call in each new session lists the upstream's tools
//! again (its drift check runs once per server per session): the run prints how many sessions
//! were closed, how long a close took, and how many `tools/list` the upstream received. At most
//! 10 calls are in flight at once, whatever `--clients` says.
//!
//! The process is killed when its [`RunningCmcp`] is dropped (every return path, and panics,
//! which unwind), on Ctrl-C (a handler kills it before the harness exits), and it exits by
//! itself when the harness dies any other way: it is started through a few lines of Python that
//! end it when its standard input, a pipe from the harness, closes.

use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use bytes::Bytes;
use http::header::{CONTENT_TYPE, HOST};
use http::{Method, StatusCode};
use http_body_util::Full;
use serde_json::{Value, json};
use sha2::Digest as _;
use tokio::sync::{OwnedRwLockReadGuard, RwLock};
use toolgate::upstream::observe_tools;
use toolgate_testkit::RunningUpstream;

use super::client::{Connection, Exchange, Target};
use super::report::{Measurement, Sampled};
use super::{Driver, Plan, Scenario, Setup, UPSTREAM_TOOL, run_load};

/// The version `bench/requirements-compare.txt` pins.
pub(crate) const CMCP_VERSION: &str = "0.7.1";
/// The label of cMCP's rows.
pub(crate) const CMCP_LABEL: &str = "cMCP 0.7.1, new session every 10 calls";
/// The venv `bench/compare-gateways.sh` creates, relative to the workspace root.
const DEFAULT_VENV: &str = "bench/out/compare-venv";
/// The calls cMCP admits per session.
const SESSION_BUDGET: u32 = 10;
/// How long cMCP may take to start (Python imports, a software-only attestation).
const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// The most of its log shown when it fails to start.
const LOG_TAIL_BYTES: usize = 2000;

/// Starts `cmcp start --config FILE` (the console script's entry point, `cmcp_runtime.cli:main`)
/// after a thread that ends the process when standard input closes.
const BOOTSTRAP: &str = "import os, sys, threading\n\
def watch():\n    sys.stdin.buffer.read()\n    os._exit(0)\n\
threading.Thread(target=watch, daemon=True).start()\n\
from cmcp_runtime.cli import main\n\
sys.argv = ['cmcp', 'start', '--config', sys.argv[1]]\n\
main()\n";

/// A cMCP installation: the venv's interpreter, with `cmcp-runtime` at [`CMCP_VERSION`].
pub(crate) struct CmcpInstall {
    python: PathBuf,
}

impl CmcpInstall {
    /// The venv `--compare` uses: `explicit` (`--cmcp-venv` or `TOOLGATE_CMCP_VENV`), else
    /// the one `bench/compare-gateways.sh` creates.
    pub(crate) fn venv(explicit: Option<PathBuf>) -> PathBuf {
        explicit.unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("..")
                .join(DEFAULT_VENV)
        })
    }

    /// Finds cMCP in `venv`. The error says which peer is missing (or which version is there
    /// instead) and the exact command that installs it.
    pub(crate) fn locate(venv: &Path) -> Result<CmcpInstall, String> {
        let python = venv.join("bin").join("python");
        let install = || {
            let default = CmcpInstall::venv(None);
            if venv == default {
                "install it with `bash bench/compare-gateways.sh` (from the repository root)"
                    .to_owned()
            } else {
                format!(
                    "install it with `VENV={} bash bench/compare-gateways.sh` (from the repository root), \
                     or drop --cmcp-venv/TOOLGATE_CMCP_VENV to use {}",
                    venv.display(),
                    default.display()
                )
            }
        };
        if !python.is_file() {
            return Err(format!(
                "--compare: cMCP (cmcp-runtime {CMCP_VERSION}) is not installed: {} does not exist; {}",
                python.display(),
                install()
            ));
        }
        let output = Command::new(&python)
            .args([
                "-c",
                "import importlib.metadata as m; print(m.version('cmcp-runtime'))",
            ])
            .stdin(Stdio::null())
            .output()
            .map_err(|error| {
                format!(
                    "--compare: cannot run {} to find cMCP: {error}; {}",
                    python.display(),
                    install()
                )
            })?;
        let version = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        if !output.status.success() || version != CMCP_VERSION {
            let observed = if output.status.success() {
                format!("version {version}")
            } else {
                "not installed".to_owned()
            };
            return Err(format!(
                "--compare: cMCP (cmcp-runtime {CMCP_VERSION}) is not installed in {}: cmcp-runtime is {observed}; {}",
                venv.display(),
                install()
            ));
        }
        Ok(CmcpInstall { python })
    }
}

/// The child killed by the Ctrl-C handler, when one runs.
static INTERRUPTIBLE: Mutex<Option<Arc<Mutex<Child>>>> = Mutex::new(None);

/// Kills the running peer on Ctrl-C, then exits with status 130 (the harness's other state
/// needs no cleanup: its upstream and gateway die with it).
pub(crate) fn kill_on_interrupt() {
    tokio::spawn(async {
        if tokio::signal::ctrl_c().await.is_ok() {
            let child = INTERRUPTIBLE
                .lock()
                .ok()
                .and_then(|mut running| running.take());
            if let Some(child) = child {
                if let Ok(mut child) = child.lock() {
                    let _ = child.kill();
                    let _ = child.wait();
                }
            }
            eprintln!("load: interrupted");
            std::process::exit(130);
        }
    });
}

/// A running cMCP, killed on drop.
pub(crate) struct RunningCmcp {
    child: Arc<Mutex<Child>>,
    pid: u32,
    address: SocketAddr,
    dir: PathBuf,
}

impl Drop for RunningCmcp {
    fn drop(&mut self) {
        if let Ok(mut running) = INTERRUPTIBLE.lock() {
            running.take();
        }
        if let Ok(mut child) = self.child.lock() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl RunningCmcp {
    /// Writes cMCP's configuration for `upstream` into `dir` (emptied first), starts it and waits
    /// (at most [`READY_TIMEOUT`]) until it answers `GET /readyz` with `"status": "ready"`.
    pub(crate) async fn start(
        install: &CmcpInstall,
        upstream: &RunningUpstream,
        dir: &Path,
    ) -> Result<RunningCmcp, String> {
        let _ = std::fs::remove_dir_all(dir);
        let write = |name: &str, contents: &str| {
            let path = dir.join(name);
            std::fs::write(&path, contents)
                .map_err(|error| format!("cannot write {}: {error}", path.display()))
        };
        std::fs::create_dir_all(dir.join("policy"))
            .map_err(|error| format!("cannot create {}: {error}", dir.display()))?;
        let port = std::net::TcpListener::bind(("127.0.0.1", 0))
            .and_then(|listener| listener.local_addr())
            .map_err(|error| format!("cannot find a free port for cMCP: {error}"))?
            .port();
        let address = SocketAddr::from(([127, 0, 0, 1], port));
        write(
            "config.yaml",
            &format!(
                "listen_addr: \"{address}\"\ncatalog_path: catalog.json\npolicy_bundle_path: policy\n\
                 audit_db_path: audit.db\nattestation:\n  provider: software-only\n"
            ),
        )?;
        write("catalog.json", &catalog(upstream).await?.to_string())?;
        write("ca.pem", upstream.ca_pem())?;
        write(
            "policy/manifest.json",
            &json!({
                "version": "1.0.0",
                "authored_at": "2026-01-01T00:00:00Z",
                "author_identity": "toolgate-load",
                "commit_sha": "none",
            })
            .to_string(),
        )?;
        write(
            "policy/permit.cedar",
            "permit (principal, action, resource);\n",
        )?;
        write("policy/schema.cedarschema", &CEDAR_SCHEMA.to_string())?;

        let log = |name: &str| {
            std::fs::File::create(dir.join(name))
                .map_err(|error| format!("cannot create {}: {error}", dir.join(name).display()))
        };
        let child = Command::new(&install.python)
            .args(["-c", BOOTSTRAP, "config.yaml"])
            .current_dir(dir)
            .env("CMCP_DEV_MODE", "1")
            .env("SSL_CERT_FILE", dir.join("ca.pem"))
            // Nothing of the caller's cMCP settings: the configuration above is the whole of it.
            .env_remove("CMCP_BEARER_TOKEN")
            .env_remove("CMCP_OPERATOR_TOKEN")
            .env_remove("CMCP_POLICY_HASH")
            .env_remove("CMCP_CATALOG_HASH")
            .env_remove("CMCP_OTEL_ENABLED")
            .stdin(Stdio::piped())
            .stdout(log("cmcp.out")?)
            .stderr(log("cmcp.err")?)
            .spawn()
            .map_err(|error| format!("cannot start {}: {error}", install.python.display()))?;
        let pid = child.id();
        let child = Arc::new(Mutex::new(child));
        if let Ok(mut running) = INTERRUPTIBLE.lock() {
            *running = Some(Arc::clone(&child));
        }
        let running = RunningCmcp {
            child,
            pid,
            address,
            dir: dir.to_path_buf(),
        };
        running.wait_until_ready().await?;
        Ok(running)
    }

    /// The process id, whose CPU the run samples.
    pub(crate) fn pid(&self) -> u32 {
        self.pid
    }

    /// Polls the port (uvicorn listens once the application has started; `/readyz` itself is
    /// rate-limited to 60 requests a minute), then asks `/readyz` once.
    async fn wait_until_ready(&self) -> Result<(), String> {
        let started = Instant::now();
        loop {
            let exited = self
                .child
                .lock()
                .ok()
                .and_then(|mut child| child.try_wait().ok().flatten());
            if let Some(status) = exited {
                return Err(format!(
                    "cMCP exited ({status}) before it was ready; {}",
                    self.log_tail()
                ));
            }
            if TcpStream::connect_timeout(&self.address, Duration::from_millis(200)).is_ok() {
                break;
            }
            if started.elapsed() > READY_TIMEOUT {
                return Err(format!(
                    "cMCP did not listen on {} within {READY_TIMEOUT:?}; {}",
                    self.address,
                    self.log_tail()
                ));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let (status, body) = self.control(Method::GET, "/readyz").await?;
        let answer: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        if status != StatusCode::OK || answer["status"] != "ready" {
            return Err(format!(
                "cMCP is not ready: GET /readyz answered HTTP {status}: {}; {}",
                String::from_utf8_lossy(&body),
                self.log_tail()
            ));
        }
        eprintln!(
            "    cMCP (pid {}) ready on {} after {:.1} s, configuration and logs in {}",
            self.pid,
            self.address,
            started.elapsed().as_secs_f64(),
            self.dir.display()
        );
        Ok(())
    }

    /// One request to cMCP's own interface on a connection of its own.
    async fn control(&self, method: Method, path: &str) -> Result<(StatusCode, Bytes), String> {
        control(&self.target(), method, path).await
    }

    fn target(&self) -> Target {
        Target {
            address: self.address,
            path: "/mcp".to_owned(),
            tls: None,
        }
    }

    /// The end of cMCP's standard error, for a failure message.
    fn log_tail(&self) -> String {
        let path = self.dir.join("cmcp.err");
        let log = std::fs::read(&path).unwrap_or_default();
        let tail =
            String::from_utf8_lossy(&log[log.len().saturating_sub(LOG_TAIL_BYTES)..]).into_owned();
        format!("{} ends with:\n{tail}", path.display())
    }
}

async fn control(
    target: &Target,
    method: Method,
    path: &str,
) -> Result<(StatusCode, Bytes), String> {
    let mut connection = Connection::open(target).await?;
    let request = http::Request::builder()
        .method(method)
        .uri(path)
        .header(HOST, target.address.to_string())
        .header(CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::new()))
        .map_err(|error| format!("cannot build the request: {error}"))?;
    connection.send(request).await
}

/// cMCP's catalog of the demo upstream's `echo`.
async fn catalog(upstream: &RunningUpstream) -> Result<Value, String> {
    let url: catalog_store::UpstreamUrl = upstream
        .url()
        .parse()
        .map_err(|error: catalog_store::UrlProblem| error.to_string())?;
    let listed = observe_tools(&url, &upstream.spki_fingerprint())
        .await
        .map_err(|error| format!("cannot list the upstream's tools: {error}"))?;
    let echo = listed
        .iter()
        .find(|tool| tool["name"] == UPSTREAM_TOOL)
        .ok_or("the demo upstream does not list echo")?;
    let definition = json!({
        "description": echo["description"],
        "input_schema": echo["inputSchema"],
    });
    // cMCP checks `definition_hash` against SHA-256 of `json.dumps(sort_keys=True,
    // separators=(",", ":"), ensure_ascii=True)`, which is JCS for a definition of ASCII
    // strings and no numbers, as `echo`'s is (a mismatch would stop cMCP at start, saying so).
    let canonical = jcs_digest::canonicalize(&definition).map_err(|error| error.to_string())?;
    let definition_hash = format!("sha256:{}", hex(&sha2::Sha256::digest(&canonical)));
    let pin =
        base64::engine::general_purpose::STANDARD.encode(upstream.cert_fingerprint().as_bytes());
    Ok(json!([{
        "tool_name": UPSTREAM_TOOL,
        "server": {
            "display_name": "toolgate demo upstream",
            "url": upstream.url(),
            "transport": "streamable-http",
            "tls_fingerprint": format!("SHA256:{pin}"),
            "rotation_mode": "cert-pinned",
        },
        "approved_definition": definition,
        "definition_hash": definition_hash,
        "added_at": "2026-01-01T00:00:00Z",
        "approved_by": "toolgate-load",
    }]))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// The Cedar schema of cMCP's own benchmark module (`cmcp_runtime/benchmarks.py`).
static CEDAR_SCHEMA: std::sync::LazyLock<Value> = std::sync::LazyLock::new(|| {
    json!({"cMCP": {
        "entityTypes": {
            "Principal": {"memberOfTypes": [], "shape": {"type": "Record", "attributes": {
                "session_id": {"type": "String", "required": true},
                "workflow_id": {"type": "String", "required": true},
            }}},
            "Resource": {"memberOfTypes": [], "shape": {"type": "Record", "attributes": {
                "tool_name": {"type": "String", "required": true},
            }}},
        },
        "actions": {"call_tool": {"appliesTo": {
            "principalTypes": ["cMCP::Principal"],
            "resourceTypes": ["cMCP::Resource"],
            "context": {"type": "Record", "attributes": {
                "session_max_sensitivity": {"type": "String", "required": true},
                "workflow_id": {"type": "String", "required": true},
            }},
        }}},
    }})
});

/// cMCP's session, shared by every client: admits [`SESSION_BUDGET`] calls, then closes it.
pub(crate) struct Sessions {
    /// Held shared by each call in flight, exclusively by the close.
    gate: Arc<RwLock<()>>,
    /// Calls admitted in the current session.
    admitted: AtomicU32,
    /// The current session's id, from the answers (`result._cmcp.session_id`).
    current: Mutex<Option<String>>,
    target: Target,
    closes: AtomicU64,
    close_nanos: AtomicU64,
}

impl Sessions {
    fn new(target: Target) -> Sessions {
        Sessions {
            gate: Arc::new(RwLock::new(())),
            admitted: AtomicU32::new(0),
            current: Mutex::new(None),
            target,
            closes: AtomicU64::new(0),
            close_nanos: AtomicU64::new(0),
        }
    }

    /// A place in the current session, after closing it (and waiting for its calls in flight)
    /// when its budget is spent.
    async fn admit(&self) -> Result<OwnedRwLockReadGuard<()>, String> {
        loop {
            let admitted = Arc::clone(&self.gate).read_owned().await;
            if self.admitted.fetch_add(1, Ordering::SeqCst) < SESSION_BUDGET {
                return Ok(admitted);
            }
            drop(admitted);
            let _closing = self.gate.write().await;
            // Another caller may have closed it while this one waited.
            if self.admitted.load(Ordering::SeqCst) >= SESSION_BUDGET {
                self.close().await?;
                self.admitted.store(0, Ordering::SeqCst);
            }
        }
    }

    /// Closes the current session (every call of it answered): cMCP opens the next.
    async fn close(&self) -> Result<(), String> {
        let Some(id) = self
            .current
            .lock()
            .ok()
            .and_then(|mut current| current.take())
        else {
            return Err(
                "cannot open a new cMCP session: no answer in the current one carried result._cmcp.session_id"
                    .to_owned(),
            );
        };
        let started = Instant::now();
        let (status, body) =
            control(&self.target, Method::POST, &format!("/sessions/{id}/close")).await?;
        if status != StatusCode::OK {
            return Err(format!(
                "closing cMCP session {id}: HTTP {status}: {}",
                String::from_utf8_lossy(&body[..body.len().min(300)])
            ));
        }
        self.closes.fetch_add(1, Ordering::Relaxed);
        self.close_nanos
            .fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
        Ok(())
    }

    fn observe(&self, session: &str) {
        if let Ok(mut current) = self.current.lock() {
            if current.as_deref() != Some(session) {
                *current = Some(session.to_owned());
            }
        }
    }
}

/// One client of cMCP: a connection, the `echo` call, the shared session.
pub(crate) struct CmcpClient {
    connection: Connection,
    exchange: Exchange,
    sessions: Arc<Sessions>,
}

impl CmcpClient {
    /// One call: its latency (the exchange only; waiting for a place in a session is not in it).
    pub(crate) async fn step(&mut self, id: u64) -> Result<Duration, String> {
        let _admitted = self.sessions.admit().await?;
        if self.connection.is_closed() {
            self.connection = Connection::open(&self.connection.target().clone())
                .await
                .map_err(|error| format!("reconnecting: {error}"))?;
        }
        let request = self.exchange.request(self.connection.target(), id)?;
        let started = Instant::now();
        let (status, body) = self.connection.send(request).await?;
        let latency = started.elapsed();
        let answer = self.exchange.check(id, status, &body)?;
        if let Some(session) = answer["result"]["_cmcp"]["session_id"].as_str() {
            self.sessions.observe(session);
        }
        Ok(latency)
    }
}

/// Runs the load through a fresh cMCP in front of the setup's upstream.
pub(crate) async fn run_scenario(
    setup: &Setup,
    install: &CmcpInstall,
    clients: usize,
    plan: Plan,
    warmup: Duration,
) -> Result<Measurement, Box<dyn std::error::Error>> {
    let dir = setup
        .audit_dir
        .join(setup.per_round(format!("cmcp-{clients}")));
    let cmcp = RunningCmcp::start(install, &setup.upstream, &dir).await?;
    let sessions = Arc::new(Sessions::new(cmcp.target()));
    let exchange = Exchange::cmcp_call(UPSTREAM_TOOL);
    let controls = setup.upstream.controls();
    let (lists_before, calls_before) = (
        controls.method_count(toolgate::mcp::methods::TOOLS_LIST),
        controls.method_count(toolgate::mcp::methods::TOOLS_CALL),
    );
    let (measurement, sent) = run_load(
        Scenario::Cmcp,
        setup.audit_kind,
        Some(Sampled::Process(cmcp.pid())),
        clients,
        plan,
        warmup,
        async || {
            Ok(Driver::Cmcp(CmcpClient {
                connection: Connection::open(&cmcp.target()).await?,
                exchange: exchange.clone(),
                sessions: Arc::clone(&sessions),
            }))
        },
    )
    .await?;
    drop(cmcp);
    let lists = controls.method_count(toolgate::mcp::methods::TOOLS_LIST) - lists_before;
    let calls = controls.method_count(toolgate::mcp::methods::TOOLS_CALL) - calls_before;
    let closes = sessions.closes.load(Ordering::Relaxed);
    let close_ms = sessions.close_nanos.load(Ordering::Relaxed) as f64 / 1e6;
    eprintln!(
        "    {sent} calls sent; cMCP's budget of {SESSION_BUDGET} calls per session lifted by closing the session \
         every {SESSION_BUDGET} calls: {closes} sessions closed, {:.2} ms per close, {:.1} ms in all (counted in calls/s, not \
         in the percentiles); upstream received {lists} tools/list and {calls} tools/call",
        close_ms / closes.max(1) as f64,
        close_ms,
    );
    Ok(measurement)
}
