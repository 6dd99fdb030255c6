//! Operating `toolgate serve` (docs/design.md §8) as a real process: `--metrics` (counters that
//! move exactly as calls are allowed and denied, histograms with observations, `/healthz`,
//! `/readyz` turning 503 when the audit log fails), catalog reloads on SIGHUP (what is refused,
//! and which connections and local processes a reload keeps), `--log-format json` and
//! `--replica-name`.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use toolgate::mcp::ProtocolVersion;

use crate::audit_serve::SmallDisk;
use crate::e2e_support::{Harness, ServeProcess, Setup, denial, run, temp_dir};
use crate::util::EXAMPLE_CATALOG;

fn free_port() -> u16 {
    let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    probe.local_addr().unwrap().port()
}

/// `GET path` on the metrics listener: the status code, the Content-Type and the body. Retries
/// (bounded) while the process starts.
async fn get(port: u16, path: &str) -> (u16, String, String) {
    for _ in 0..250 {
        let Ok(mut stream) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await else {
            tokio::time::sleep(Duration::from_millis(20)).await;
            continue;
        };
        let request =
            format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut response = Vec::new();
        stream.read_to_end(&mut response).await.unwrap();
        let response = String::from_utf8(response).unwrap();
        let (head, body) = response.split_once("\r\n\r\n").unwrap();
        let status = head[9..12].parse().unwrap();
        let content_type = head
            .lines()
            .find_map(|line| line.strip_prefix("content-type: "))
            .unwrap_or_default()
            .to_owned();
        return (status, content_type, body.to_owned());
    }
    panic!("the metrics listener on port {port} never answered");
}

async fn scrape(port: u16) -> String {
    let (status, content_type, body) = get(port, "/metrics").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        content_type,
        "application/openmetrics-text; version=1.0.0; charset=utf-8"
    );
    assert!(body.ends_with("# EOF\n"), "{body}");
    body
}

/// The value of the sample `name{labels}` (exactly as encoded), 0 when absent.
fn sample(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .map_or(0.0, |value| value.parse().unwrap())
}

#[test]
fn metrics_move_exactly_as_calls_are_allowed_and_denied() {
    run(async {
        let harness = Harness::start(Setup::new()).await;
        let catalog_json = harness.catalog_json.clone();
        let measurement = harness.measurement;
        let (upstream, _, _) = harness.stop().await;
        let url = upstream.url().to_owned();
        let dir = temp_dir("metrics");
        let catalog = dir.join("catalog.json");
        std::fs::write(&catalog, catalog_json.to_string()).unwrap();
        let port = free_port();
        let metrics_address = format!("127.0.0.1:{port}");
        let mut serve = ServeProcess::spawn(
            &catalog,
            &dir.join("audit.jsonl"),
            &["--metrics", &metrics_address],
        );
        let mut client = serve.connect(ProtocolVersion::V2025_11_25).await;
        assert_eq!(
            get(port, "/healthz").await,
            (200, "text/plain; charset=utf-8".into(), "ok\n".into())
        );
        assert_eq!(get(port, "/readyz").await.0, 200);
        assert_eq!(get(port, "/nothing").await.0, 404);

        let before = scrape(port).await;
        assert!(
            before.contains(&format!(
                "toolgate_catalog_info{{measurement=\"{measurement}\"}} 1\n"
            )),
            "{before}"
        );
        assert!(!before.contains("toolgate_calls_total{"), "{before}");
        let handshakes_before = upstream.controls().handshakes_completed();
        let listings_before = upstream.controls().method_count("tools/list");

        for _ in 0..2 {
            let answer = client
                .call_tool("demo.add", json!({"a": 1, "b": 2}))
                .await
                .unwrap()
                .unwrap();
            assert_eq!(answer["structuredContent"], json!({"sum": 3}));
        }
        // Two tools outside the catalog: one label for both, neither name in the text.
        for tool in ["demo.other", "evil\"}\n# EOF"] {
            let answer = client.call_tool(tool, json!({})).await.unwrap();
            assert_eq!(denial(&answer), (-32602, "tool_not_in_catalog".to_owned()));
        }

        let after = scrape(port).await;
        assert_eq!(
            sample(
                &after,
                "toolgate_calls_total{tool=\"demo.add\",decision=\"allowed\"}"
            ),
            2.0,
            "{after}"
        );
        assert_eq!(
            sample(
                &after,
                "toolgate_calls_total{tool=\"(not in catalog)\",decision=\"tool_not_in_catalog\"}"
            ),
            2.0,
            "{after}"
        );
        assert_eq!(after.matches("toolgate_calls_total{").count(), 2, "{after}");
        assert!(
            !after.contains("demo.other") && !after.contains("evil"),
            "{after}"
        );
        // Every call records one decision; two were checked and forwarded.
        let stage = |name: &str| {
            sample(
                &after,
                &format!("toolgate_call_duration_seconds_count{{stage=\"{name}\"}}"),
            )
        };
        assert_eq!(stage("audit"), 4.0, "{after}");
        assert_eq!(stage("definition_check"), 2.0, "{after}");
        assert_eq!(stage("upstream"), 2.0, "{after}");
        assert!(
            sample(
                &after,
                "toolgate_call_duration_seconds_sum{stage=\"upstream\"}"
            ) > 0.0,
            "{after}"
        );
        // One group commit per call (each waits for its answer); the start entry is not timed.
        assert_eq!(
            sample(&after, "toolgate_audit_sync_seconds_count"),
            4.0,
            "{after}"
        );
        // What the upstream saw is what the gateway counted.
        let listings = upstream.controls().method_count("tools/list") - listings_before;
        assert_eq!(
            listings, 2,
            "per-call freshness lists once per checked call"
        );
        assert_eq!(
            sample(
                &after,
                &format!("toolgate_listings_total{{upstream=\"{url}\",result=\"ok\"}}")
            ),
            listings as f64,
            "{after}"
        );
        let handshakes = upstream.controls().handshakes_completed() - handshakes_before;
        assert!(handshakes >= 1);
        assert_eq!(
            sample(
                &after,
                &format!("toolgate_upstream_handshakes_total{{upstream=\"{url}\",result=\"ok\"}}")
            ),
            handshakes as f64,
            "{after}"
        );

        // An impostor: the refused handshake is counted under the denial reason.
        let impostor = toolgate_testkit::DemoIdentity::generate().unwrap();
        upstream.controls().present_identity(&impostor).unwrap();
        upstream.controls().close_connections();
        let answer = client
            .call_tool("demo.add", json!({"a": 1, "b": 2}))
            .await
            .unwrap();
        assert_eq!(denial(&answer), (-32001, "identity_mismatch".to_owned()));
        let refused = scrape(port).await;
        let handshakes_of = |result: &str| {
            sample(
                &refused,
                &format!(
                    "toolgate_upstream_handshakes_total{{upstream=\"{url}\",result=\"{result}\"}}"
                ),
            )
        };
        assert_eq!(handshakes_of("identity_mismatch"), 1.0, "{refused}");
        assert_eq!(handshakes_of("ok"), handshakes as f64, "{refused}");
        assert_eq!(
            sample(
                &refused,
                "toolgate_calls_total{tool=\"demo.add\",decision=\"identity_mismatch\"}"
            ),
            1.0,
            "{refused}"
        );

        let (code, stderr) = serve.terminate().await;
        assert_eq!(code, 0, "{stderr}");
        assert!(
            stderr.contains(&format!(
                "serving metrics on http://{metrics_address}/metrics"
            )),
            "{stderr}"
        );
        drop(upstream);
    });
}

#[test]
fn readyz_turns_503_when_the_audit_log_fails() {
    let disk = SmallDisk::mount("64k");
    let dir = temp_dir("metrics-readyz");
    let catalog = dir.join("catalog.json");
    std::fs::write(&catalog, EXAMPLE_CATALOG).unwrap();
    let audit = disk.mount_point.join("audit.jsonl");
    let fill = &disk;
    run(async move {
        let port = free_port();
        let metrics_address = format!("127.0.0.1:{port}");
        let mut serve = ServeProcess::spawn(&catalog, &audit, &["--metrics", &metrics_address]);
        let mut client = serve.connect(ProtocolVersion::V2025_11_25).await;
        assert_eq!(
            get(port, "/readyz").await,
            (200, "text/plain; charset=utf-8".into(), "ready\n".into())
        );
        fill.fill();
        let mut denied = 0;
        loop {
            let answer = client
                .call_tool("no.such.tool", json!({"q": "x".repeat(200)}))
                .await
                .unwrap();
            match answer {
                Err(error) if error.code == -32603 => break,
                answer => {
                    assert_eq!(denial(&answer), (-32602, "tool_not_in_catalog".to_owned()));
                    denied += 1;
                    assert!(denied < 100, "64 KiB never filled up");
                }
            }
        }
        let (status, _, body) = get(port, "/readyz").await;
        assert_eq!(status, 503, "{body}");
        assert!(
            body.starts_with(&format!(
                "not ready: the audit log cannot record: cannot write the audit log {}: No space \
                 left on device (os error 28)",
                audit.display()
            )),
            "{body}"
        );
        // Alive all the same: a restart is the operator's call, not the liveness probe's.
        assert_eq!(get(port, "/healthz").await.0, 200);
        let metrics = scrape(port).await;
        assert_eq!(
            sample(
                &metrics,
                "toolgate_calls_total{tool=\"(not in catalog)\",decision=\"tool_not_in_catalog\"}"
            ),
            f64::from(denied),
            "{metrics}"
        );
        assert_eq!(
            sample(
                &metrics,
                "toolgate_calls_total{tool=\"(not in catalog)\",decision=\"audit_unavailable\"}"
            ),
            1.0,
            "{metrics}"
        );
        let (code, stderr) = serve.terminate().await;
        assert_eq!(code, 0, "{stderr}");
    });
}

/// Every line of `stderr` is one JSON object; the ones whose message is `message`.
fn json_lines_with_message(stderr: &str, message: &str) -> Vec<Value> {
    stderr
        .lines()
        .map(|line| {
            serde_json::from_str::<Value>(line)
                .unwrap_or_else(|error| panic!("not a JSON line ({error}): {line:?}"))
        })
        .filter(|line| line["message"] == message)
        .collect()
}

#[test]
fn log_format_json_writes_one_object_per_line_with_the_call_as_fields() {
    run(async {
        let dir = temp_dir("log-json");
        let catalog = dir.join("catalog.json");
        std::fs::write(&catalog, EXAMPLE_CATALOG).unwrap();
        let audit = dir.join("audit.jsonl");
        let mut serve = ServeProcess::spawn(&catalog, &audit, &["--log-format", "json"]);
        let mut client = serve.connect(ProtocolVersion::V2025_11_25).await;
        let answer = client.call_tool("no.such.tool", json!({})).await.unwrap();
        assert_eq!(denial(&answer), (-32602, "tool_not_in_catalog".to_owned()));
        let (code, stderr) = serve.terminate().await;
        assert_eq!(code, 0, "{stderr}");
        let calls = json_lines_with_message(&stderr, "tools/call");
        assert_eq!(calls.len(), 1, "{stderr}");
        let call = &calls[0];
        assert_eq!(call["level"], "INFO");
        assert_eq!(call["tool"], "(not in catalog)");
        assert_eq!(call["upstream"], "");
        assert_eq!(call["decision"], "tool_not_in_catalog");
        assert!(call["latency_ms"].as_f64().unwrap() >= 0.0, "{call}");
        assert!(call["timestamp"].is_string(), "{call}");
        assert_eq!(
            json_lines_with_message(&stderr, "shutting down: finishing calls in flight").len(),
            1
        );
    });
}

fn hang_up(serve: &ServeProcess) {
    assert!(serve.signal("HUP"));
}

/// Scrapes until `series` reads `value` (bounded): the reload was handled.
async fn wait_for_sample(port: u16, series: &str, value: f64) -> String {
    for _ in 0..250 {
        let text = scrape(port).await;
        if sample(&text, series) == value {
            return text;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{series} never reached {value}");
}

/// Writes `catalog_json` to `catalog` and sends SIGHUP; returns the metrics on `port` once
/// they show it in force.
async fn reload_to(
    serve: &ServeProcess,
    catalog: &std::path::Path,
    port: u16,
    catalog_json: &Value,
) -> String {
    std::fs::write(catalog, catalog_json.to_string()).unwrap();
    hang_up(serve);
    let series = format!(
        "toolgate_catalog_info{{measurement=\"{}\"}}",
        measurement_of(catalog_json)
    );
    wait_for_sample(port, &series, 1.0).await
}

/// Calls `tool` and returns its result; the call must be allowed and succeed.
async fn call_ok(
    client: &mut toolgate_testkit::GatewayClient,
    tool: &str,
    arguments: Value,
) -> Value {
    client.call_tool(tool, arguments).await.unwrap().unwrap()
}

/// A demo upstream, and two catalogs of it: A pins demo.echo and demo.add, B all three tools.
async fn upstream_and_two_catalogs() -> (toolgate_testkit::RunningUpstream, Value, Value) {
    let upstream =
        toolgate_testkit::DemoUpstream::start(&toolgate_testkit::DemoUpstreamConfig::new())
            .await
            .unwrap();
    let mut setup = Setup::new();
    setup.pinned.retain(|(tool, _)| tool != "demo.get_time");
    let harness = Harness::start_with(upstream, setup).await;
    let catalog_a = harness.catalog_json.clone();
    let (upstream, _, _) = harness.stop().await;
    let harness = Harness::start_with(upstream, Setup::new()).await;
    let catalog_b = harness.catalog_json.clone();
    let (upstream, _, _) = harness.stop().await;
    (upstream, catalog_a, catalog_b)
}

/// The catalog measurement of `catalog` (a JSON array of entries).
fn measurement_of(catalog: &Value) -> jcs_digest::Digest {
    catalog_store::Catalog::from_slice(catalog.to_string().as_bytes())
        .unwrap()
        .measurement()
        .digest()
}

#[test]
fn sighup_reloads_a_valid_catalog_and_refuses_an_invalid_one() {
    run(async {
        // Catalog A pins demo.echo and demo.add; catalog B adds demo.get_time and approves a
        // changed demo.echo (which the upstream does not serve).
        let (upstream, catalog_a, mut catalog_b) = upstream_and_two_catalogs().await;
        let measurement_a = measurement_of(&catalog_a);
        let echo = catalog_b
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|entry| entry["tool_name"] == "demo.echo")
            .unwrap();
        let mut changed = echo["approved_definition"].clone();
        changed["description"] = json!("Echo, as approved after a change upstream never made");
        *echo = toolgate_testkit::pinned_entry(
            "demo.echo",
            &changed,
            upstream.url(),
            &upstream.spki_fingerprint(),
        )
        .unwrap();
        let measurement_b = measurement_of(&catalog_b);

        let dir = temp_dir("reload");
        let catalog = dir.join("catalog.json");
        let audit = dir.join("audit.jsonl");
        std::fs::write(&catalog, catalog_a.to_string()).unwrap();
        let port = free_port();
        let mut serve = ServeProcess::spawn(
            &catalog,
            &audit,
            &["--metrics", &format!("127.0.0.1:{port}")],
        );
        let mut client = serve.connect(ProtocolVersion::V2025_11_25).await;
        assert_eq!(client.list_tools().await.unwrap().len(), 2);
        let add = json!({"a": 1, "b": 2});
        client
            .call_tool("demo.add", add.clone())
            .await
            .unwrap()
            .unwrap();

        // An invalid catalog: refused, counted, and the old one still serves.
        std::fs::write(&catalog, "[{\"tool_name\": ").unwrap();
        hang_up(&serve);
        wait_for_sample(
            port,
            "toolgate_catalog_reloads_total{result=\"refused\"}",
            1.0,
        )
        .await;
        client
            .call_tool("demo.add", add.clone())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(client.list_tools().await.unwrap().len(), 2);
        let answer = client.call_tool("demo.get_time", json!({})).await.unwrap();
        assert_eq!(denial(&answer), (-32602, "tool_not_in_catalog".to_owned()));

        // A call in flight across the reload finishes on the catalog it started under: its
        // listing is held by the upstream until the reload is done.
        let echo_a = catalog_a
            .as_array()
            .unwrap()
            .iter()
            .find(|entry| entry["tool_name"] == "demo.echo")
            .unwrap()["definition_hash"]
            .clone();
        let mut second = serve.connect(ProtocolVersion::V2025_11_25).await;
        let lists_before = upstream.controls().method_count("tools/list");
        upstream.controls().set_delay(Some(Duration::from_secs(1)));
        let in_flight = tokio::spawn(async move {
            second
                .call_tool("demo.echo", json!({"text": "in flight"}))
                .await
                .unwrap()
        });
        crate::e2e_support::eventually("the in-flight call's listing reaches the upstream", || {
            upstream.controls().method_count("tools/list") > lists_before
        })
        .await;

        // A valid one: in force for the next calls.
        let metrics = reload_to(&serve, &catalog, port, &catalog_b).await;
        upstream.controls().set_delay(None);
        let finished = in_flight.await.unwrap();
        assert!(finished.is_ok(), "{finished:?}");
        assert_eq!(
            sample(
                &metrics,
                "toolgate_catalog_reloads_total{result=\"loaded\"}"
            ),
            1.0
        );
        assert!(!metrics.contains(&measurement_a.to_string()), "{metrics}");
        assert_eq!(client.list_tools().await.unwrap().len(), 3);
        let time = client
            .call_tool("demo.get_time", json!({}))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            time["structuredContent"],
            json!({"time": "2026-01-01T00:00:00Z"})
        );
        let answer = client
            .call_tool("demo.echo", json!({"text": "hi"}))
            .await
            .unwrap();
        assert_eq!(denial(&answer), (-32002, "definition_mismatch".to_owned()));
        client.call_tool("demo.add", add).await.unwrap().unwrap();

        let (code, stderr) = serve.terminate().await;
        assert_eq!(code, 0, "{stderr}");
        assert!(
            stderr.contains("catalog reload refused, the catalog in force is kept"),
            "{stderr}"
        );
        assert!(
            stderr.contains("catalog reloaded: later calls are decided under it"),
            "{stderr}"
        );

        // The chain runs through the reload: started under A, reloaded to B.
        let summary = toolgate::audit::verify_file(&audit, Some(&measurement_a)).unwrap();
        assert_eq!(summary.starts().len(), 1);
        assert_eq!(summary.catalog_loads().len(), 1);
        let load = summary.catalog_loads()[0];
        assert_eq!(load.catalog, measurement_b);
        assert_eq!(summary.catalog_in_force(), Some(measurement_b));
        let entries = crate::e2e_support::read_entries(&audit);
        let seq = load.seq as usize;
        assert_eq!(entries[seq]["event"], "catalog_loaded");
        assert_eq!(entries[seq]["previous_catalog"], measurement_a.to_string());
        assert_eq!(entries[seq]["catalog"], measurement_b.to_string());
        assert_eq!(
            entries.len(),
            9,
            "start, 3 decisions, the in-flight one and the reload, 3 decisions"
        );
        let echoes: Vec<&Value> = entries
            .iter()
            .filter(|entry| entry["tool"] == "demo.echo")
            .collect();
        assert_eq!(echoes.len(), 2, "{echoes:?}");
        assert_eq!(echoes[0]["decision"], "allowed");
        assert_eq!(echoes[0]["expected_definition"], echo_a);
        assert_eq!(echoes[1]["decision"], "definition_mismatch");
        let run = crate::util::toolgate(&["audit", "verify", audit.to_str().unwrap()]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(
            run.stdout.contains(&format!(
                "reloaded    seq {} (line {}) to catalog {measurement_b}\n",
                load.seq, load.line
            )),
            "{}",
            run.stdout
        );
        // `--catalog` is the catalog in force at the end (B), or the one it started with (A).
        let b_file = dir.join("catalog-b.json");
        std::fs::write(&b_file, catalog_b.to_string()).unwrap();
        let run = crate::util::toolgate(&[
            "audit",
            "verify",
            "--catalog",
            b_file.to_str().unwrap(),
            audit.to_str().unwrap(),
        ]);
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
        assert!(
            run.stdout.contains(&format!(
                "first prev  {measurement_a} (the catalog measurement)\nin force    \
                 {measurement_b} (the measurement of --catalog, at the log's end)\n"
            )),
            "{}",
            run.stdout
        );
        let a_file = dir.join("catalog-a.json");
        std::fs::write(&a_file, catalog_a.to_string()).unwrap();
        let run = crate::util::toolgate(&[
            "audit",
            "verify",
            "--catalog",
            a_file.to_str().unwrap(),
            audit.to_str().unwrap(),
        ]);
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
        // A catalog that is neither: exit 1, the start's mismatch named.
        let other = dir.join("catalog-other.json");
        std::fs::write(&other, crate::util::EXAMPLE_CATALOG).unwrap();
        let run = crate::util::toolgate(&[
            "audit",
            "verify",
            "--catalog",
            other.to_str().unwrap(),
            audit.to_str().unwrap(),
        ]);
        assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
        let other_measurement =
            catalog_store::Catalog::from_slice(crate::util::EXAMPLE_CATALOG.as_bytes())
                .unwrap()
                .measurement()
                .digest();
        assert!(
            run.stdout.contains(&format!(
                "line 1 (seq 0): the first entry's prev is not the catalog's measurement: \
                 expected {other_measurement}, found {measurement_a}"
            )),
            "{}",
            run.stdout
        );
        drop(upstream);
    });
}

#[test]
fn a_reload_keeps_the_connections_of_an_unchanged_server_and_replaces_a_changed_ones() {
    run(async {
        // A pins demo.echo and demo.add; B adds demo.get_time on the same server binding; C is
        // B with a backup pin added to that binding: the same key still verifies, but the
        // anchors changed.
        let (upstream, catalog_a, catalog_b) = upstream_and_two_catalogs().await;
        let mut catalog_c = catalog_b.clone();
        for entry in catalog_c.as_array_mut().unwrap() {
            entry["server"]["backup_fingerprints"] =
                json!([upstream.cert_fingerprint().to_string()]);
        }
        let url = upstream.url().to_owned();
        let handshakes_series =
            format!("toolgate_upstream_handshakes_total{{upstream=\"{url}\",result=\"ok\"}}");

        // The harnesses above connected too; the gateway's own handshakes count from here.
        let controls = upstream.controls();
        let earlier = controls.handshakes_completed();

        let dir = temp_dir("reload-connections");
        let catalog = dir.join("catalog.json");
        std::fs::write(&catalog, catalog_a.to_string()).unwrap();
        let port = free_port();
        let mut serve = ServeProcess::spawn(
            &catalog,
            &dir.join("audit.jsonl"),
            &["--metrics", &format!("127.0.0.1:{port}")],
        );
        let mut client = serve.connect(ProtocolVersion::V2025_11_25).await;
        let add = json!({"a": 1, "b": 2});
        call_ok(&mut client, "demo.add", add.clone()).await;
        crate::e2e_support::eventually("the gateway's notification stream opens", || {
            controls.event_streams_open() == 1
        })
        .await;
        // The metric catches up at each call, with what the stream's connection made too.
        call_ok(&mut client, "demo.add", add.clone()).await;
        let handshakes = controls.handshakes_completed();
        let streams = controls.event_streams_opened();
        assert_eq!(
            sample(&scrape(port).await, &handshakes_series),
            (handshakes - earlier) as f64,
            "every handshake the upstream completed with the gateway is counted"
        );

        // B: the server's binding is unchanged, so its connections and stream stay in use.
        reload_to(&serve, &catalog, port, &catalog_b).await;
        let time = call_ok(&mut client, "demo.get_time", json!({})).await;
        assert_eq!(
            time["structuredContent"],
            json!({"time": "2026-01-01T00:00:00Z"})
        );
        call_ok(&mut client, "demo.add", add.clone()).await;
        assert_eq!(controls.handshakes_completed(), handshakes);
        assert_eq!(controls.event_streams_opened(), streams);
        assert_eq!(controls.event_streams_open(), 1);
        assert_eq!(
            sample(&scrape(port).await, &handshakes_series),
            (handshakes - earlier) as f64
        );

        // C: the anchors changed, so the next call is made on a new connection, verified
        // against them, and the old client's connections close once it is retired.
        reload_to(&serve, &catalog, port, &catalog_c).await;
        call_ok(&mut client, "demo.add", add.clone()).await;
        crate::e2e_support::eventually("the new client's stream replaces the old one", || {
            controls.event_streams_opened() == streams + 1 && controls.event_streams_open() == 1
        })
        .await;
        call_ok(&mut client, "demo.add", add.clone()).await;
        let after = controls.handshakes_completed();
        assert!(
            after > handshakes,
            "{after} handshakes, {handshakes} before"
        );
        assert_eq!(
            sample(&scrape(port).await, &handshakes_series),
            (after - earlier) as f64,
            "the new client's handshakes are counted from its own zero"
        );
        assert_eq!(
            sample(
                &scrape(port).await,
                "toolgate_catalog_reloads_total{result=\"loaded\"}"
            ),
            2.0
        );

        let (code, stderr) = serve.terminate().await;
        assert_eq!(code, 0, "{stderr}");
        drop(upstream);
    });
}

#[test]
fn a_reload_keeps_an_unchanged_local_server_running_and_replaces_a_changed_one() {
    run(async {
        use crate::e2e_local::{Files, catalog_entries, process_exists};

        // A pins local.echo; B adds local.environment on the same server binding; C changes
        // that binding's environment, so its process must be started anew.
        let files = Files::new("reload-local");
        let catalog_a = Value::Array(catalog_entries(&files, &[], &[("local.echo", "echo")]));
        let catalog_b = Value::Array(catalog_entries(
            &files,
            &[],
            &[("local.echo", "echo"), ("local.environment", "environment")],
        ));
        let mut catalog_c = catalog_b.clone();
        for entry in catalog_c.as_array_mut().unwrap() {
            entry["server"]["env"]["DEMO_MODE"] = json!("changed");
        }
        let catalog = files.dir.join("catalog.json");
        std::fs::write(&catalog, catalog_a.to_string()).unwrap();
        let port = free_port();
        let mut serve = ServeProcess::spawn(
            &catalog,
            &files.dir.join("audit.jsonl"),
            &["--metrics", &format!("127.0.0.1:{port}")],
        );
        let mut client = serve.connect(ProtocolVersion::V2026_07_28).await;
        let echo = |text: &str| json!({"text": text});
        let answer = call_ok(&mut client, "local.echo", echo("a")).await;
        assert_eq!(answer["content"][0]["text"], "a");
        let first = files.starts();
        assert_eq!(first.len(), 1, "{first:?}");

        // B: the same process serves the catalog's new tool and the old one.
        reload_to(&serve, &catalog, port, &catalog_b).await;
        let environment = call_ok(&mut client, "local.environment", json!({})).await;
        assert_eq!(environment["structuredContent"]["env"]["DEMO_MODE"], "test");
        let answer = call_ok(&mut client, "local.echo", echo("b")).await;
        assert_eq!(answer["content"][0]["text"], "b");
        assert_eq!(files.starts(), first);
        assert!(process_exists(&first[0]));

        // C: a new process with the new environment; the old one is stopped once retired.
        reload_to(&serve, &catalog, port, &catalog_c).await;
        let environment = call_ok(&mut client, "local.environment", json!({})).await;
        assert_eq!(
            environment["structuredContent"]["env"]["DEMO_MODE"],
            "changed"
        );
        let starts = files.starts();
        assert_eq!(starts.len(), 2, "{starts:?}");
        assert_eq!(starts[0], first[0]);
        crate::e2e_support::eventually("the replaced server's process is stopped", || {
            !process_exists(&first[0])
        })
        .await;
        assert!(process_exists(&starts[1]));

        let (code, stderr) = serve.terminate().await;
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(
            stderr
                .matches("local server stopped (exit status: 0)")
                .count(),
            2,
            "{stderr}"
        );
        assert!(!process_exists(&starts[1]), "serve left its child running");
    });
}

#[test]
fn the_first_audit_entry_names_the_replica() {
    run(async {
        let dir = temp_dir("replica");
        let catalog = dir.join("catalog.json");
        std::fs::write(&catalog, EXAMPLE_CATALOG).unwrap();
        let named = dir.join("named.jsonl");
        let mut serve = ServeProcess::spawn(&catalog, &named, &["--replica-name", "gw-eu-1"]);
        serve.connect(ProtocolVersion::V2025_11_25).await;
        let (code, stderr) = serve.terminate().await;
        assert_eq!(code, 0, "{stderr}");
        let entries = crate::e2e_support::read_entries(&named);
        assert_eq!(entries[0]["event"], "gateway_started");
        assert_eq!(entries[0]["replica"], "gw-eu-1");

        // By default: the host name and the process id.
        let unnamed = dir.join("unnamed.jsonl");
        let mut serve = ServeProcess::spawn(&catalog, &unnamed, &[]);
        serve.connect(ProtocolVersion::V2025_11_25).await;
        let pid = serve.pid();
        let (code, stderr) = serve.terminate().await;
        assert_eq!(code, 0, "{stderr}");
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
        let entries = crate::e2e_support::read_entries(&unnamed);
        assert_eq!(entries[0]["replica"], format!("{}/{pid}", host.trim()));
        assert_eq!(
            toolgate::audit::verify_file(&unnamed, None)
                .unwrap()
                .entries(),
            1
        );

        let run = crate::util::toolgate(&[
            "serve",
            "--catalog",
            catalog.to_str().unwrap(),
            "--audit",
            dir.join("refused.jsonl").to_str().unwrap(),
            "--replica-name",
            "two\nlines",
        ]);
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert_eq!(
            run.stderr,
            "toolgate: --replica-name \"two\\nlines\": write 1 to 256 characters without control \
             characters, such as gw-eu-1\n"
        );
        assert!(!dir.join("refused.jsonl").exists());
    });
}

#[test]
fn a_metrics_address_in_use_exits_2_before_the_audit_log_is_written() {
    let dir = temp_dir("metrics-in-use");
    let catalog = dir.join("catalog.json");
    std::fs::write(&catalog, EXAMPLE_CATALOG).unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let audit = dir.join("audit.jsonl");
    let run = crate::util::toolgate(&[
        "serve",
        "--catalog",
        catalog.to_str().unwrap(),
        "--listen",
        "127.0.0.1:0",
        "--audit",
        audit.to_str().unwrap(),
        "--metrics",
        &address,
    ]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        format!(
            "toolgate: --metrics: cannot listen on {address}: Address already in use (os error 98)\n"
        )
    );
    assert!(!audit.exists());
}

#[test]
fn the_metrics_listener_answers_only_get() {
    run(async {
        let dir = temp_dir("metrics-methods");
        let catalog = dir.join("catalog.json");
        std::fs::write(&catalog, EXAMPLE_CATALOG).unwrap();
        let port = free_port();
        let mut serve = ServeProcess::spawn(
            &catalog,
            &dir.join("audit.jsonl"),
            &["--metrics", &format!("127.0.0.1:{port}")],
        );
        serve.connect(ProtocolVersion::V2025_11_25).await;
        // Ready once the listener is up (a GET first, so the listener is known to answer).
        assert_eq!(get(port, "/readyz").await.0, 200);
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        stream
            .write_all(b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).await.unwrap();
        assert!(response.starts_with("HTTP/1.1 405 "), "{response}");
        assert!(
            response.ends_with("\r\n\r\nonly GET is served here\n"),
            "{response}"
        );
        let (code, stderr) = serve.terminate().await;
        assert_eq!(code, 0, "{stderr}");
    });
}
