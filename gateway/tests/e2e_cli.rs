//! `toolgate demo` and `toolgate serve` run as processes: exit codes, output, graceful
//! shutdown on SIGTERM with the audit log flushed, and the stdio transport.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use toolgate::audit::verify_file;
use toolgate::mcp::ProtocolVersion;
use toolgate_testkit::{DemoUpstream, DemoUpstreamConfig};

use crate::e2e_support::{Harness, ServeProcess, Setup, TOOLGATE, run, temp_dir, wait_bounded};

#[test]
fn toolgate_demo_exits_0_and_prints_each_decision() {
    let output = Command::new(TOOLGATE).arg("demo").output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for expected in [
        "call demo.echo {\"text\":\"hello\"}  ->  allowed, result \"hello\"",
        "call demo.echo {\"text\":\"hello\"}  ->  DENIED: definition_mismatch (JSON-RPC -32002)",
        "call demo.add {\"a\":2,\"b\":3}  ->  allowed, result {\"sum\":5}",
        "call demo.add {\"a\":2,\"b\":3}  ->  DENIED: identity_mismatch (JSON-RPC -32001)",
        "received 0 application bytes",
        "call local.echo {\"text\":\"hello\"}  ->  allowed, result \"hello\"",
        "call local.echo {\"text\":\"hello\"}  ->  DENIED: identity_mismatch (JSON-RPC -32001)",
        #[cfg(feature = "cedar")]
        "call local.echo {\"text\":\"hello\"}  ->  DENIED: not_authorized (JSON-RPC -32005)",
        #[cfg(feature = "cedar")]
        "chain verified: 8 entries (allowed 3, not_authorized 1, identity_mismatch 2, definition_mismatch 1)",
        #[cfg(feature = "cedar")]
        "11 of 11 expectations held",
        #[cfg(not(feature = "cedar"))]
        "chain verified: 7 entries (allowed 3, identity_mismatch 2, definition_mismatch 1)",
        #[cfg(not(feature = "cedar"))]
        "10 of 10 expectations held",
    ] {
        assert!(
            stdout.contains(expected),
            "missing {expected:?} in\n{stdout}"
        );
    }
    // The last line names the directory the demo kept for a person to read; a test removes it.
    let kept = stdout
        .trim_end()
        .rsplit_once("are in ")
        .map(|(_, directory)| directory)
        .unwrap();
    assert!(kept.contains("toolgate-demo-"), "{kept}");
    std::fs::remove_dir_all(kept).unwrap();
}

#[test]
fn serve_refuses_a_catalog_that_does_not_load() {
    let dir = temp_dir("serve-bad-catalog");
    let catalog = dir.join("catalog.json");
    std::fs::write(
        &catalog,
        br#"[{"tool_name": "t", "server": {"url": "http://insecure.example/mcp"}}]"#,
    )
    .unwrap();
    let output = Command::new(TOOLGATE)
        .args([
            "serve",
            "--catalog",
            catalog.to_str().unwrap(),
            "--audit",
            dir.join("audit.jsonl").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("is invalid"), "{stderr}");
    assert!(
        !dir.join("audit.jsonl").exists(),
        "no audit log is started for a catalog that does not load"
    );
}

/// Options are checked before the catalog: a bad option is a usage error (exit 2) even when the
/// catalog does not load either, so the operator learns about both problems in the usual order.
#[test]
fn serve_reports_a_bad_option_before_an_invalid_catalog() {
    let dir = temp_dir("serve-bad-option");
    let catalog = dir.join("catalog.json");
    std::fs::write(&catalog, br#"[{"tool_name": "t"}]"#).unwrap();
    let output = Command::new(TOOLGATE)
        .args([
            "serve",
            "--catalog",
            catalog.to_str().unwrap(),
            "--audit",
            dir.join("audit.jsonl").to_str().unwrap(),
            "--spiffe-bundle",
            "no-equals-sign",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr,
        "toolgate: --spiffe-bundle \"no-equals-sign\": write TRUST_DOMAIN=FILE, such as \
         corp.example=bundle.pem\n"
    );
}

#[test]
fn serve_answers_over_http_and_shuts_down_gracefully_on_sigterm() {
    answers_over_http_and_shuts_down_gracefully("serve-process", &[]);
}

/// The same with a worker kept polling after each request (`--busy-poll`): the same answers,
/// and the busy-polling task does not keep the process from shutting down.
#[test]
fn serve_with_busy_polling_answers_and_shuts_down_gracefully() {
    answers_over_http_and_shuts_down_gracefully("serve-busy-poll", &["--busy-poll", "300us"]);
}

fn answers_over_http_and_shuts_down_gracefully(name: &str, extra: &[&str]) {
    run(async {
        // Pin the demo upstream in a catalog file, as an operator would.
        let harness = Harness::start(Setup::new()).await;
        let catalog_json = harness.catalog_json.clone();
        let (upstream, _, _) = harness.stop().await;
        let dir = temp_dir(name);
        let catalog = dir.join("catalog.json");
        std::fs::write(&catalog, catalog_json.to_string()).unwrap();
        let audit = dir.join("audit.jsonl");
        let mut options = vec![
            "--definition-check",
            "max-age=30s",
            "--upstream-timeout",
            "5s",
            "--page-size",
            "2",
            // One thread carries the whole call, the audit's group commit included.
            "--worker-threads",
            "1",
        ];
        options.extend_from_slice(extra);
        let mut serve = ServeProcess::spawn(&catalog, &audit, &options);
        let mut client = serve.connect(ProtocolVersion::V2025_11_25).await;
        assert_eq!(client.list_tools().await.unwrap().len(), 3);
        let result = client
            .call_tool("demo.add", json!({"a": 20, "b": 22}))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(result["structuredContent"], json!({"sum": 42}));
        let denied = client.call_tool("demo.other", json!({})).await.unwrap();
        assert_eq!(
            denied.unwrap_err().data.unwrap()["reason"],
            "tool_not_in_catalog"
        );

        let (code, stderr) = serve.terminate().await;
        assert_eq!(code, 0, "{stderr}");
        assert!(stderr.contains("shutting down"), "{stderr}");
        let summary = verify_file(&audit, None).unwrap();
        assert_eq!(
            summary.entries(),
            3,
            "gateway_started, allowed, tool_not_in_catalog"
        );
        drop(upstream);
    });
}

#[test]
fn serve_stdio_speaks_json_rpc_lines_and_logs_to_stderr_only() {
    run(async {
        let upstream = DemoUpstream::start(&DemoUpstreamConfig::new())
            .await
            .unwrap();
        let harness = Harness::start_with(upstream, Setup::new()).await;
        let catalog_json = harness.catalog_json.clone();
        let (upstream, _, _) = harness.stop().await;
        let dir = temp_dir("serve-stdio");
        let catalog = dir.join("catalog.json");
        std::fs::write(&catalog, catalog_json.to_string()).unwrap();
        let audit = dir.join("audit.jsonl");
        let (lines, code) = tokio::task::spawn_blocking(move || {
            let mut child = Command::new(TOOLGATE)
                .args(["serve", "--stdio", "--catalog", catalog.to_str().unwrap(), "--audit", audit.to_str().unwrap()])
                .env("RUST_LOG", "debug")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let mut stdin = child.stdin.take().unwrap();
            for message in [
                json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "demo.echo", "arguments": {"text": "over stdio"}}}),
            ] {
                writeln!(stdin, "{message}").unwrap();
            }
            drop(stdin);
            let lines: Vec<Value> = BufReader::new(child.stdout.take().unwrap())
                .lines()
                .map(|line| serde_json::from_str(&line.unwrap()).unwrap())
                .collect();
            (lines, wait_bounded(&mut child, Duration::from_secs(20)).0)
        })
        .await
        .unwrap();
        assert_eq!(code, 0);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert_eq!(lines[0]["result"]["protocolVersion"], "2025-11-25");
        assert_eq!(lines[1]["id"], 2);
        assert_eq!(lines[1]["result"]["content"][0]["text"], "over stdio");
        drop(upstream);
    });
}

#[test]
fn serve_refuses_bad_options_with_exit_2() {
    let dir = temp_dir("serve-bad-options");
    let catalog = dir.join("catalog.json");
    std::fs::write(&catalog, b"[]").unwrap();
    let audit = dir.join("audit.jsonl");
    let base = [
        "serve",
        "--catalog",
        catalog.to_str().unwrap(),
        "--audit",
        audit.to_str().unwrap(),
    ];
    for (extra, expected) in [
        (
            &["--definition-check", "sometimes"][..],
            "--definition-check: unknown definition-check freshness \"sometimes\"",
        ),
        (
            &["--upstream-timeout", "5"][..],
            "--upstream-timeout \"5\" is not a duration",
        ),
        (
            &["--allowed-origin", "https://app.example/path"][..],
            "--allowed-origin \"https://app.example/path\" is not valid",
        ),
        (
            &["--allowed-host", "bad host"][..],
            "--allowed-host \"bad host\" is not valid",
        ),
        (
            &["--ca", "/nonexistent/ca.pem"][..],
            "--ca /nonexistent/ca.pem",
        ),
        (
            &["--spiffe-bundle", "no-equals-sign"][..],
            "--spiffe-bundle \"no-equals-sign\": write TRUST_DOMAIN=FILE",
        ),
        (
            &["--worker-threads", "0"][..],
            "invalid value '0' for '--worker-threads <N>': 0 is not in 1..=1024",
        ),
        (
            &["--busy-poll", "2s"][..],
            "--busy-poll \"2s\" is longer than 1s: a worker kept polling that long saves nothing \
             a sleep would not; give a window such as 200us",
        ),
        (
            &["--busy-poll", "200"][..],
            "--busy-poll \"200\" is not a duration: write a positive whole number and a unit",
        ),
        (
            &["--busy-poll", "0us"][..],
            "--busy-poll \"0us\" is not a duration",
        ),
        (
            &["--worker-threads", "many"][..],
            "invalid value 'many' for '--worker-threads <N>': invalid digit found in string",
        ),
    ] {
        let output = Command::new(TOOLGATE)
            .args(base)
            .args(extra)
            .output()
            .unwrap();
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(output.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(stderr.contains(expected), "{extra:?}: {stderr}");
    }
}

#[test]
fn serve_help_documents_every_client_side_limit_with_its_default() {
    let output = Command::new(TOOLGATE)
        .args(["serve", "--help"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    // clap wraps long help; join the lines so each option's text reads as one.
    let help = String::from_utf8(output.stdout)
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for (option, default) in [
        ("--header-timeout <DURATION>", "[default: 10s]"),
        ("--idle-timeout <DURATION>", "[default: 60s]"),
        ("--http2-keep-alive-interval <DURATION>", "[default: 20s]"),
        ("--http2-keep-alive-timeout <DURATION>", "[default: 20s]"),
        ("--max-connections <N>", "[default: 4096]"),
        ("--max-connections-per-address <N>", "[default: 256]"),
        ("--max-sessions <N>", "[default: 4096]"),
        ("--max-sessions-per-address <N>", "[default: 256]"),
        (
            "--max-request-bytes-in-flight <BYTES>",
            "[default: 67108864]",
        ),
        ("--audit-deadline <DURATION>", "[default: 10s]"),
    ] {
        let at = help
            .find(option)
            .unwrap_or_else(|| panic!("{option} is not in `toolgate serve --help`"));
        // The first default after the option is its own (each of these has one).
        let rest = &help[at..];
        let shown = rest
            .find("[default: ")
            .map(|start| &rest[start..start + rest[start..].find(']').unwrap_or(0) + 1]);
        assert_eq!(shown, Some(default), "{option}");
    }
    assert!(help.contains("--audit-key <FILE>"));
    assert!(
        help.contains("--busy-poll <DURATION> After each request, keep a worker polling for I/O"),
        "{help}"
    );
}
