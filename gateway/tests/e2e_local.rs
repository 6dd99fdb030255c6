//! Local (stdio) upstreams with real processes: the testkit's stdio server
//! (`toolgate demo-upstream --stdio --tools FILE`, pinned by the toolgate binary and its tools
//! file) behind a gateway on loopback and behind `toolgate serve`; the helpers the bad-children
//! tests (`e2e_local_children`) share.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use catalog_store::Catalog;
use serde_json::{Value, json};
use server_identity::rustls::RootCertStore;
use server_identity::{EntrypointDigests, digest_file};
use toolgate::audit::AuditLog;
use toolgate::definition_check::Freshness;
use toolgate::local::{LocalCommand, LocalOptions, LocalUpstream};
use toolgate::mcp::ProtocolVersion;
use toolgate::router::{Router, RouterOptions};
use toolgate::server::{Gateway, MCP_PATH, ServerOptions};
use toolgate_testkit::{GatewayClient, approved_entry};

use crate::e2e_support::{
    ServeProcess, TOOLGATE, call_entries, denial, read_entries, run, temp_dir,
};

/// The tools the stdio server serves in these tests.
fn tools() -> Value {
    json!([
        {
            "name": "echo",
            "description": "Returns the given text unchanged.",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
        },
        {
            "name": "add",
            "description": "Adds two numbers.",
            "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}
        },
        {
            "name": "environment",
            "description": "Returns the process's environment and working directory.",
            "inputSchema": {"type": "object"}
        }
    ])
}

/// A directory with the tools file, and where the server's start marker goes.
pub(crate) struct Files {
    pub(crate) dir: PathBuf,
    pub(crate) tools: PathBuf,
    marker: PathBuf,
}

impl Files {
    pub(crate) fn new(name: &str) -> Files {
        let dir = temp_dir(name);
        let tools = dir.join("tools.json");
        std::fs::write(&tools, serde_json::to_vec_pretty(&self::tools()).unwrap()).unwrap();
        Files {
            marker: dir.join("starts.txt"),
            dir,
            tools,
        }
    }

    /// The process ids the server wrote at its starts (empty: it never started).
    pub(crate) fn starts(&self) -> Vec<String> {
        std::fs::read_to_string(&self.marker)
            .map(|text| {
                text.lines()
                    .filter(|line| line.parse::<u32>().is_ok())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The `tools/call`s the servers received, in order (`call NAME` lines).
    pub(crate) fn calls(&self) -> usize {
        std::fs::read_to_string(&self.marker)
            .map(|text| {
                text.lines()
                    .filter(|line| line.starts_with("call "))
                    .count()
            })
            .unwrap_or_default()
    }

    /// The argv: the stdio server with its tools file (relative, resolved against `cwd`) and
    /// marker, then `extra`.
    pub(crate) fn argv(&self, extra: &[&str]) -> Vec<String> {
        let mut argv: Vec<String> = [
            TOOLGATE,
            "demo-upstream",
            "--stdio",
            "--tools",
            "tools.json",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        argv.push("--marker".into());
        argv.push(self.marker.display().to_string());
        argv.extend(extra.iter().map(|s| s.to_string()));
        argv
    }

    /// The catalog `server` object: the toolgate binary and the tools file pinned.
    pub(crate) fn server(&self, extra: &[&str]) -> Value {
        json!({
            "display_name": "demo stdio",
            "command": self.argv(extra),
            "cwd": self.dir.display().to_string(),
            "env": {"DEMO_MODE": "test"},
            "inherit_env": ["HOME"],
            "entrypoint_digests": {
                TOOLGATE: digest_file(Path::new(TOOLGATE)).unwrap().to_string(),
                "tools.json": digest_file(&self.tools).unwrap().to_string(),
            }
        })
    }

    /// The same command for `LocalUpstream` alone.
    pub(crate) fn command(&self, extra: &[&str]) -> LocalCommand {
        let argv = self.argv(extra);
        let mut command = LocalCommand::new("demo stdio", &argv[0], &self.dir);
        command.args = argv[1..].to_vec();
        let mut entrypoints = EntrypointDigests::new();
        for path in [PathBuf::from(TOOLGATE), self.tools.clone()] {
            let digest = digest_file(&path).unwrap();
            entrypoints.insert(path, digest).unwrap();
        }
        command.entrypoints = entrypoints;
        command
    }

    /// Rewrites the tools file with `echo`'s description changed (a file that is pinned).
    pub(crate) fn change_tools_file(&self) {
        let mut changed = tools();
        changed[0]["description"] = json!("Returns the text, and mails it out.");
        std::fs::write(&self.tools, serde_json::to_vec_pretty(&changed).unwrap()).unwrap();
    }
}

/// Options with short deadlines, so that the bad children are quick to judge.
pub(crate) fn quick_options() -> LocalOptions {
    LocalOptions {
        start_timeout: Duration::from_secs(20),
        discover_timeout: Duration::from_millis(300),
        request_timeout: Duration::from_secs(5),
        stop_grace: Duration::from_millis(300),
        ..LocalOptions::default()
    }
}

/// Catalog entries for `pinned` (catalog name, upstream name) on the stdio server with `extra`.
pub(crate) fn catalog_entries(
    files: &Files,
    extra: &[&str],
    pinned: &[(&str, &str)],
) -> Vec<Value> {
    let server = files.server(extra);
    pinned
        .iter()
        .map(|(tool_name, upstream_name)| {
            let definition = tools()
                .as_array()
                .unwrap()
                .iter()
                .find(|tool| tool["name"] == *upstream_name)
                .unwrap()
                .clone();
            approved_entry(tool_name, &definition, server.clone()).unwrap()
        })
        .collect()
}

/// A gateway on loopback in front of one local server.
struct LocalHarness {
    gateway: Arc<Gateway>,
    audit: Arc<AuditLog>,
    audit_path: PathBuf,
    url: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    serving: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl LocalHarness {
    async fn start(files: &Files, extra: &[&str], pinned: &[(&str, &str)]) -> LocalHarness {
        LocalHarness::start_with(files, extra, pinned, Freshness::PerCall).await
    }

    async fn start_with(
        files: &Files,
        extra: &[&str],
        pinned: &[(&str, &str)],
        freshness: Freshness,
    ) -> LocalHarness {
        let entries = catalog_entries(files, extra, pinned);
        let catalog = Catalog::from_slice(Value::Array(entries).to_string().as_bytes()).unwrap();
        let audit_path = files.dir.join("audit.jsonl");
        let audit = Arc::new(AuditLog::open(&audit_path, catalog.measurement()).unwrap());
        let mut options = RouterOptions::new(Arc::new(RootCertStore::empty()));
        options.local = quick_options();
        options.freshness = freshness;
        let router = Router::new(catalog, options, audit.clone()).unwrap();
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .unwrap();
        let address = listener.local_addr().unwrap();
        let gateway = Gateway::new(Arc::new(router), ServerOptions::for_listen_address(address));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let serving = tokio::spawn(gateway.clone().serve_http(listener, None, async move {
            let _ = stopped.await;
        }));
        LocalHarness {
            gateway,
            audit,
            audit_path,
            url: format!("http://{address}{MCP_PATH}"),
            stop: Some(stop),
            serving: Some(serving),
        }
    }

    async fn client(&self) -> GatewayClient {
        let mut client = GatewayClient::new(&self.url, ProtocolVersion::V2025_11_25);
        client.connect().await.unwrap();
        client
    }

    fn local(&self) -> LocalUpstream {
        self.gateway.router().upstreams()[0]
            .local()
            .unwrap()
            .clone()
    }

    fn decisions(&self) -> Vec<String> {
        call_entries(&read_entries(&self.audit_path))
            .iter()
            .map(|entry| entry["decision"].as_str().unwrap().to_owned())
            .collect()
    }

    async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(serving) = self.serving.take() {
            serving.await.unwrap().unwrap();
        }
        self.gateway.router().shutdown().await;
        self.audit.shutdown().await;
    }
}

/// Whether a process with this id exists (a zombie counts: it is not reaped yet).
pub(crate) fn process_exists(pid: &str) -> bool {
    Path::new("/proc").join(pid).exists()
}

pub(crate) fn label(files: &Files, extra: &[&str]) -> String {
    format!("stdio:{}", files.argv(extra).join(" "))
}

#[test]
fn a_local_server_is_started_once_called_and_reused() {
    run(async {
        let files = Files::new("local-allowed");
        let harness =
            LocalHarness::start(&files, &[], &[("local.echo", "echo"), ("local.add", "add")]).await;
        assert!(files.starts().is_empty(), "started before first use");
        let mut client = harness.client().await;
        let answer = client
            .call_tool("local.echo", json!({"text": "hi"}))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            answer,
            // The server speaks 2026-07-28 over stdio, whose results carry `resultType`.
            json!({"content": [{"type": "text", "text": "hi"}], "isError": false, "resultType": "complete"})
        );
        let answer = client
            .call_tool("local.add", json!({"a": 2, "b": 3}))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(answer["structuredContent"], json!({"sum": 5}));
        // One process served both calls.
        assert_eq!(files.starts().len(), 1);
        let status = harness.local().status();
        assert_eq!((status.starts, status.refused_starts), (1, 0));
        assert_eq!(
            status.pid.map(|pid| pid.to_string()),
            Some(files.starts()[0].clone())
        );
        assert_eq!(harness.decisions(), ["allowed", "allowed"]);
        let entries = call_entries(&read_entries(&harness.audit_path));
        assert_eq!(entries[0]["upstream_url"], json!(label(&files, &[])));
        let pid = files.starts()[0].clone();
        harness.stop().await;
        // Stopped on shutdown (its stdin closed: it exits by itself).
        assert!(!process_exists(&pid), "the child {pid} is still running");
    });
}

#[test]
fn the_child_gets_exactly_its_env_and_cwd() {
    run(async {
        let files = Files::new("local-env");
        let harness =
            LocalHarness::start(&files, &[], &[("local.environment", "environment")]).await;
        let mut client = harness.client().await;
        let answer = client
            .call_tool("local.environment", json!({}))
            .await
            .unwrap()
            .unwrap();
        let mut expected = serde_json::Map::new();
        expected.insert("DEMO_MODE".into(), json!("test"));
        if let Ok(home) = std::env::var("HOME") {
            expected.insert("HOME".into(), json!(home));
        }
        assert_eq!(answer["structuredContent"]["env"], Value::Object(expected));
        assert_eq!(
            answer["structuredContent"]["cwd"],
            json!(files.dir.display().to_string())
        );
        harness.stop().await;
    });
}

#[test]
fn a_rug_pull_by_description_is_denied_and_siblings_are_allowed() {
    run(async {
        let files = Files::new("local-rug-pull");
        // After one call the server changes echo's description (its files stay the same) and
        // sends list_changed.
        let harness = LocalHarness::start(
            &files,
            &["--rug-pull-after", "1"],
            &[("local.echo", "echo"), ("local.add", "add")],
        )
        .await;
        let mut client = harness.client().await;
        assert!(
            client
                .call_tool("local.echo", json!({"text": "a"}))
                .await
                .unwrap()
                .is_ok()
        );
        let answer = client
            .call_tool("local.echo", json!({"text": "a"}))
            .await
            .unwrap();
        assert_eq!(denial(&answer), (-32002, "definition_mismatch".to_owned()));
        let answer = client
            .call_tool("local.add", json!({"a": 1, "b": 1}))
            .await
            .unwrap();
        assert_eq!(answer.unwrap()["structuredContent"], json!({"sum": 2}));
        assert_eq!(
            harness.decisions(),
            ["allowed", "definition_mismatch", "allowed"]
        );
        assert_eq!(files.starts().len(), 1);
        harness.stop().await;
    });
}

#[test]
fn a_changed_entrypoint_is_refused_before_anything_starts() {
    run(async {
        let files = Files::new("local-entrypoint");
        let harness = LocalHarness::start(&files, &[], &[("local.echo", "echo")]).await;
        let pinned = digest_file(&files.tools).unwrap();
        files.change_tools_file();
        let observed = digest_file(&files.tools).unwrap();
        let mut client = harness.client().await;
        let answer = client
            .call_tool("local.echo", json!({"text": "a"}))
            .await
            .unwrap();
        assert_eq!(denial(&answer), (-32001, "identity_mismatch".to_owned()));
        assert_eq!(
            answer.unwrap_err().message,
            format!(
                "tool \"local.echo\" denied: identity_mismatch while listing its tools: upstream \
                 {}: identity mismatch (entrypoint): {} has digest {observed}, expected \
                 {pinned}; the server was not started; if the change was intended (an \
                 upgrade), re-pin with `toolgate identity --command -- CMD ARGS…` and update \
                 entrypoint_digests in the catalog; otherwise find out who changed it; nothing \
                 was started",
                label(&files, &[]),
                files.tools.display()
            )
        );
        // No process was started: the marker the server writes first thing is absent.
        assert!(files.starts().is_empty());
        let status = harness.local().status();
        assert_eq!((status.starts, status.refused_starts), (0, 1));
        let entries = call_entries(&read_entries(&harness.audit_path));
        assert_eq!(entries[0]["decision"], "identity_mismatch");
        harness.stop().await;
    });
}

#[test]
fn an_entrypoint_changed_while_the_server_runs_stops_it_and_refuses() {
    run(async {
        let files = Files::new("local-entrypoint-running");
        let harness = LocalHarness::start(&files, &[], &[("local.echo", "echo")]).await;
        let mut client = harness.client().await;
        assert!(
            client
                .call_tool("local.echo", json!({"text": "a"}))
                .await
                .unwrap()
                .is_ok()
        );
        let pid = files.starts()[0].clone();
        files.change_tools_file();
        let answer = client
            .call_tool("local.echo", json!({"text": "a"}))
            .await
            .unwrap();
        assert_eq!(denial(&answer), (-32001, "identity_mismatch".to_owned()));
        assert!(
            !process_exists(&pid),
            "the changed server {pid} was left running"
        );
        // And it stays refused: nothing else is started.
        let answer = client
            .call_tool("local.echo", json!({"text": "a"}))
            .await
            .unwrap();
        assert_eq!(denial(&answer), (-32001, "identity_mismatch".to_owned()));
        assert_eq!(files.starts().len(), 1);
        assert_eq!(
            harness.decisions(),
            ["allowed", "identity_mismatch", "identity_mismatch"]
        );
        harness.stop().await;
    });
}

#[test]
fn a_crashed_server_is_started_again_on_next_use() {
    run(async {
        let files = Files::new("local-crash");
        let harness =
            LocalHarness::start(&files, &["--crash-after", "1"], &[("local.echo", "echo")]).await;
        let mut client = harness.client().await;
        for round in 0..3 {
            let answer = client
                .call_tool("local.echo", json!({"text": "a"}))
                .await
                .unwrap();
            assert!(answer.is_ok(), "{round}: {answer:?}");
            // A call racing the crash may fail upstream_unavailable; wait until it is seen.
            let local = harness.local();
            crate::e2e_support::eventually("the crash being seen", || local.status().pid.is_none())
                .await;
        }
        // Each call crashed its process after answering; each next call verified and started
        // a new one.
        let starts = files.starts();
        assert_eq!(starts.len(), 3);
        assert_eq!(harness.local().status().starts, 3);
        assert_eq!(harness.decisions(), ["allowed", "allowed", "allowed"]);
        harness.stop().await;
    });
}

#[test]
fn a_call_in_flight_when_the_server_dies_is_upstream_unavailable() {
    run(async {
        let files = Files::new("local-in-flight");
        let extra = ["--call-delay-ms", "60000"];
        let harness = LocalHarness::start(&files, &extra, &[("local.echo", "echo")]).await;
        let mut client = harness.client().await;
        let call = tokio::spawn(async move {
            client
                .call_tool("local.echo", json!({"text": "a"}))
                .await
                .unwrap()
        });
        // Wait until the server has the call, then kill it.
        crate::e2e_support::eventually("the call reaching the server", || files.calls() == 1).await;
        let pid = files.starts()[0].clone();
        let killed = std::process::Command::new("kill")
            .args(["-KILL", &pid])
            .status()
            .unwrap();
        assert!(killed.success());
        let answer = call.await.unwrap();
        assert_eq!(denial(&answer), (-32003, "upstream_unavailable".to_owned()));
        assert_eq!(
            answer.unwrap_err().message,
            format!(
                "tool \"local.echo\" denied: upstream_unavailable while calling the tool: \
                 upstream {} is unavailable: the connection closed during tools/call: the server \
                 process exited (signal: 9 (SIGKILL)); check that the upstream runs and is \
                 reachable, then retry",
                label(&files, &extra)
            )
        );
        assert_eq!(harness.decisions(), ["allowed", "upstream_unavailable"]);
        harness.stop().await;
    });
}

#[test]
fn serve_logs_the_childs_stderr_prefixed_and_stops_it_on_sigterm() {
    run(async {
        let files = Files::new("local-serve");
        let catalog = files.dir.join("catalog.json");
        let entries = catalog_entries(&files, &[], &[("local.echo", "echo")]);
        std::fs::write(&catalog, Value::Array(entries).to_string()).unwrap();
        let mut serve = ServeProcess::spawn(&catalog, &files.dir.join("serve-audit.jsonl"), &[]);
        let mut client = serve.connect(ProtocolVersion::V2026_07_28).await;
        let answer = client
            .call_tool("local.echo", json!({"text": "served"}))
            .await
            .unwrap();
        assert_eq!(answer.unwrap()["content"][0]["text"], "served");
        let pid = files.starts()[0].clone();
        let (code, stderr) = serve.terminate().await;
        assert_eq!(code, 0, "{stderr}");
        // The child's own stderr line, in the gateway's log, prefixed with the server's name.
        assert!(
            stderr.contains("[demo stdio] toolgate demo stdio server: serving 3 tools on stdio"),
            "{stderr}"
        );
        assert!(
            stderr.contains("local server stopped (exit status: 0)"),
            "{stderr}"
        );
        assert!(!process_exists(&pid), "serve left its child {pid} running");
    });
}

/// The peak resident memory of a process, in KiB (`VmHWM` in /proc/PID/status).
fn peak_memory_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[test]
fn a_100_mb_line_costs_the_gateway_the_limit_not_the_line() {
    run(async {
        let files = Files::new("local-serve-huge-line");
        let catalog = files.dir.join("catalog.json");
        let extra = ["--misbehave", "huge-line"];
        let entries = catalog_entries(&files, &extra, &[("local.echo", "echo")]);
        std::fs::write(&catalog, Value::Array(entries).to_string()).unwrap();
        let audit = files.dir.join("serve-audit.jsonl");
        let mut serve = ServeProcess::spawn(&catalog, &audit, &["--max-response-bytes", "1048576"]);
        let mut client = serve.connect(ProtocolVersion::V2025_11_25).await;
        let answer = client
            .call_tool("local.echo", json!({"text": "x"}))
            .await
            .unwrap();
        // The child wrote 100 MiB on one line; the gateway held at most the 1 MiB limit of it
        // (its whole peak resident memory stays far below the line).
        let peak = peak_memory_kib(serve.pid());
        assert!(peak < 64 * 1024, "the gateway's peak memory is {peak} KiB");
        assert_eq!(denial(&answer), (-32004, "upstream_error".to_owned()));
        assert!(
            answer
                .unwrap_err()
                .message
                .contains("sent more than 1048576 bytes in answer to server/discover; refused"),
        );
        let (code, stderr) = serve.terminate().await;
        assert_eq!(code, 0, "{stderr}");
        assert!(
            stderr.contains("-byte line, over the 1048576-byte limit; discarded"),
            "{stderr}"
        );
    });
}

#[test]
fn list_changed_from_a_local_server_discards_a_max_age_listing() {
    run(async {
        let files = Files::new("local-max-age");
        let harness = LocalHarness::start_with(
            &files,
            &["--rug-pull-after", "1"],
            &[("local.echo", "echo"), ("local.add", "add")],
            Freshness::MaxAge(Duration::from_secs(600)),
        )
        .await;
        let mut client = harness.client().await;
        let local = harness.local();
        let generation = *local.invalidations().borrow();
        assert!(
            client
                .call_tool("local.echo", json!({"text": "a"}))
                .await
                .unwrap()
                .is_ok()
        );
        // The server changed echo's description and sent notifications/tools/list_changed.
        crate::e2e_support::eventually("the gateway hearing list_changed", || {
            *local.invalidations().borrow() != generation
        })
        .await;
        let answer = client
            .call_tool("local.echo", json!({"text": "a"}))
            .await
            .unwrap();
        assert_eq!(denial(&answer), (-32002, "definition_mismatch".to_owned()));
        assert!(
            client
                .call_tool("local.add", json!({"a": 1, "b": 2}))
                .await
                .unwrap()
                .is_ok()
        );
        assert_eq!(
            harness.decisions(),
            ["allowed", "definition_mismatch", "allowed"]
        );
        harness.stop().await;
    });
}
