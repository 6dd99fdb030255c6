//! SPIFFE identity end to end (docs/design.md §3, seed 003 §1 and §4): a demo upstream presenting an
//! X.509 SVID over real TLS on loopback, a catalog entry pinning its `spiffe_id` (no
//! fingerprint), and the gateway holding the trust domain's bundle. The allowed call, the three
//! ways an SVID is refused (another workload of the same trust domain, the right ID signed by
//! another trust domain's CA, the right ID with a wrong key pin alongside), and `toolgate serve
//! --spiffe-bundle` run as a process.

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use server_identity::TrustBundles;
use toolgate::audit::arguments_digest;
use toolgate::mcp::ProtocolVersion;
use toolgate_testkit::GatewayClient;
use toolgate_testkit::{DemoIdentity, DemoUpstreamConfig};

use crate::e2e_support::{
    Harness, ServeProcess, Setup, TOOLGATE, call_entries, denial, eventually, run, temp_dir,
    wait_bounded,
};

const TRUST_DOMAIN: &str = "corp.example";
/// The workload the catalog pins.
const WORKLOAD: &str = "spiffe://corp.example/tools/demo-upstream";
/// Another workload of the same trust domain, with a valid SVID of its own.
const OTHER_WORKLOAD: &str = "spiffe://corp.example/tools/payroll";

/// The catalog's `server` block for `url` pinned by SPIFFE ID only.
fn spiffe_server(url: &str) -> Value {
    json!({
        "display_name": "SPIFFE demo upstream",
        "url": url,
        "spiffe_id": WORKLOAD,
    })
}

/// Bundles with the given `(trust domain, CA PEM)` pairs.
fn bundles(domains: &[(&str, &str)]) -> TrustBundles {
    let mut bundles = TrustBundles::new();
    for (domain, pem) in domains {
        assert_eq!(bundles.add_pem(domain, pem.as_bytes()).unwrap(), 1);
    }
    bundles
}

/// A gateway pinning `demo.add` (and `demo.echo`) to [`WORKLOAD`] with `server`, in front of an
/// upstream presenting `presented`, holding `bundles`. Every call opens a new connection, so a
/// swap of the upstream's identity meets the verifier on the next call.
async fn start(
    presented: &DemoIdentity,
    server: impl FnOnce(&str) -> Value,
    bundles: TrustBundles,
) -> Harness {
    let mut config = DemoUpstreamConfig::new();
    config.identity(presented.clone());
    let upstream = toolgate_testkit::DemoUpstream::start(&config)
        .await
        .unwrap();
    let mut setup = Setup::new();
    setup.pinned = vec![
        ("demo.add".to_owned(), "add".to_owned()),
        ("demo.echo".to_owned(), "echo".to_owned()),
    ];
    setup.upstream_options.max_idle_connections = 0;
    setup.server = Some(server(upstream.url()));
    setup.bundles = bundles;
    Harness::start_with(upstream, setup).await
}

/// Calls `demo.add`, expects `identity_mismatch` (-32001) with nothing sent to the upstream, and
/// checks the audit entry. Returns the message the client received.
async fn expect_identity_mismatch(harness: &Harness, client: &mut GatewayClient) -> String {
    let bytes_before = harness.upstream.controls().bytes_received();
    let calls_before = harness.upstream.controls().method_count("tools/call");
    let answer = client
        .call_tool("demo.add", json!({"a": 1, "b": 2}))
        .await
        .unwrap();
    assert_eq!(denial(&answer), (-32001, "identity_mismatch".to_owned()));
    assert_eq!(
        harness.upstream.controls().bytes_received(),
        bytes_before,
        "the upstream received application bytes"
    );
    assert_eq!(
        harness.upstream.controls().method_count("tools/call"),
        calls_before
    );
    let error = answer.unwrap_err();
    let data = error.data.clone().unwrap();
    assert_eq!(data["reason"], "identity_mismatch");
    assert_eq!(data["tool"], "demo.add");
    assert_eq!(data["upstream"], harness.upstream.url());
    assert!(data.get("observed_definition").is_none(), "{data}");

    let calls = call_entries(&harness.audit_entries());
    let last = calls.last().unwrap();
    assert_eq!(last["decision"], "identity_mismatch", "{last}");
    assert_eq!(last["tool"], "demo.add");
    assert_eq!(last["upstream_name"], "add");
    assert_eq!(last["upstream_url"], harness.upstream.url());
    assert_eq!(last["expected_definition"], data["expected_definition"]);
    assert!(last["observed_definition"].is_null(), "{last}");
    assert_eq!(last["detail"], error.message.as_str());
    assert_eq!(
        last["arguments_digest"],
        arguments_digest(&json!({"a": 1, "b": 2}))
            .unwrap()
            .to_string()
    );
    error.message
}

#[test]
fn the_pinned_spiffe_id_with_its_bundle_is_allowed_in_both_client_generations() {
    run(async {
        let identity = DemoIdentity::svid(WORKLOAD).unwrap();
        assert_eq!(identity.spiffe_id(), Some(WORKLOAD));
        let harness = start(
            &identity,
            spiffe_server,
            bundles(&[(TRUST_DOMAIN, identity.ca_pem())]),
        )
        .await;
        // The catalog binds by SPIFFE ID only: no fingerprint, no tls_trust.
        let server = &harness.catalog_json[0]["server"];
        assert_eq!(server["spiffe_id"], WORKLOAD);
        assert!(server.get("tls_fingerprint").is_none());

        for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
            let mut client = harness.client(version).await;
            let result = client
                .call_tool("demo.add", json!({"a": 20, "b": 22}))
                .await
                .unwrap()
                .unwrap();
            assert_eq!(
                result["structuredContent"],
                json!({"sum": 42}),
                "{version:?}"
            );
            assert_eq!(
                result["content"],
                json!([{"type": "text", "text": "42"}]),
                "{version:?}"
            );
            assert_eq!(result["isError"], false);
            let echoed = client
                .call_tool("demo.echo", json!({"text": "svid"}))
                .await
                .unwrap()
                .unwrap();
            assert_eq!(echoed["content"], json!([{"type": "text", "text": "svid"}]));
        }
        assert_eq!(harness.upstream.controls().method_count("tools/call"), 4);

        let calls = call_entries(&harness.audit_entries());
        assert_eq!(calls.len(), 4);
        assert!(calls.iter().all(|entry| entry["decision"] == "allowed"));
        assert_eq!(calls[0]["tool"], "demo.add");
        assert_eq!(calls[0]["upstream_url"], harness.upstream.url());
        assert_eq!(
            calls[0]["observed_definition"],
            calls[0]["expected_definition"]
        );
        // Whom the call reached: the SVID's key and certificate.
        assert_eq!(
            calls[0]["identity"]["fingerprints"],
            json!([
                identity.spki_fingerprint().to_string(),
                identity.cert_fingerprint().to_string()
            ])
        );
        harness.stop().await;
    });
}

#[test]
fn another_workload_of_the_same_trust_domain_is_refused_before_any_application_byte() {
    run(async {
        let identity = DemoIdentity::svid(WORKLOAD).unwrap();
        let harness = start(
            &identity,
            spiffe_server,
            bundles(&[(TRUST_DOMAIN, identity.ca_pem())]),
        )
        .await;
        let mut client = harness.client(ProtocolVersion::V2025_11_25).await;
        assert!(
            client
                .call_tool("demo.add", json!({"a": 1, "b": 2}))
                .await
                .unwrap()
                .is_ok()
        );

        // The allowed call's session started the gateway's notification stream, whose `GET`
        // goes out from a task of its own over a connection verified before the swap; wait for
        // it, so that its bytes are not counted as sent to the other workload below.
        eventually("the gateway's notification stream is open", || {
            harness.upstream.controls().event_streams_opened() == 1
        })
        .await;
        // Mid-run, the upstream presents a valid SVID of the same trust domain (same CA, so the
        // chain validates to the bundle) for another workload.
        let other = identity.issue_svid(OTHER_WORKLOAD).unwrap();
        assert_eq!(other.ca_pem(), identity.ca_pem());
        harness
            .upstream
            .controls()
            .present_identity(&other)
            .unwrap();
        harness.upstream.controls().close_connections();

        let message = expect_identity_mismatch(&harness, &mut client).await;
        assert!(
            message.contains(&format!("expected {WORKLOAD}, presented {OTHER_WORKLOAD}")),
            "{message}"
        );
        assert!(message.contains("spiffe_id"), "{message}");
        // The allowed call before the swap and the denial after it, both on record, each with
        // the SPIFFE ID the upstream presented (the issue's "observed identity").
        let calls = call_entries(&harness.audit_entries());
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0]["decision"], "allowed");
        assert_eq!(calls[0]["identity"]["spiffe_id"], WORKLOAD, "{}", calls[0]);
        assert_eq!(
            calls[1]["identity"]["spiffe_id"], OTHER_WORKLOAD,
            "{}",
            calls[1]
        );
        harness.stop().await;
    });
}

#[test]
fn the_pinned_id_signed_by_another_trust_domains_ca_is_refused() {
    run(async {
        let legitimate = DemoIdentity::svid(WORKLOAD).unwrap();
        // Another trust domain's CA mints an SVID carrying the pinned ID. The gateway holds that
        // CA too, as the bundle of other.example: only the pinned ID's own trust domain counts.
        let forged = DemoIdentity::svid(WORKLOAD).unwrap();
        assert_ne!(forged.ca_pem(), legitimate.ca_pem());
        let harness = start(
            &forged,
            spiffe_server,
            bundles(&[
                (TRUST_DOMAIN, legitimate.ca_pem()),
                ("other.example", forged.ca_pem()),
            ]),
        )
        .await;
        let mut client = harness.client(ProtocolVersion::V2026_07_28).await;
        let message = expect_identity_mismatch(&harness, &mut client).await;
        assert!(
            message.contains(&format!(
                "the SVID does not validate to the trust bundle of {TRUST_DOMAIN}"
            )),
            "{message}"
        );
        assert_eq!(call_entries(&harness.audit_entries()).len(), 1);
        harness.stop().await;
    });
}

#[test]
fn both_anchors_are_enforced_the_right_spiffe_id_with_a_wrong_key_pin_is_refused() {
    run(async {
        let identity = DemoIdentity::svid(WORKLOAD).unwrap();
        // The pin of another key, as after an unannounced key change.
        let wrong_pin = DemoIdentity::svid(WORKLOAD)
            .unwrap()
            .spki_fingerprint()
            .to_string();
        let pin = wrong_pin.clone();
        let harness = start(
            &identity,
            move |url| {
                json!({
                    "url": url,
                    "spiffe_id": WORKLOAD,
                    "tls_fingerprint": pin,
                    "rotation_mode": "key-pinned",
                })
            },
            bundles(&[(TRUST_DOMAIN, identity.ca_pem())]),
        )
        .await;
        let mut client = harness.client(ProtocolVersion::V2025_06_18).await;
        let message = expect_identity_mismatch(&harness, &mut client).await;
        let presented = identity.spki_fingerprint().to_string();
        assert!(
            message.contains(&format!("expected {wrong_pin}, presented {presented}")),
            "{message}"
        );
        assert!(message.contains("tls_fingerprint"), "{message}");
        let calls = call_entries(&harness.audit_entries());
        assert_eq!(calls[0]["identity"]["fingerprints"], json!([presented]));
        harness.stop().await;
    });
}

#[test]
fn both_anchors_right_are_allowed() {
    run(async {
        let identity = DemoIdentity::svid(WORKLOAD).unwrap();
        let pin = identity.spki_fingerprint().to_string();
        let harness = start(
            &identity,
            move |url| json!({"url": url, "spiffe_id": WORKLOAD, "tls_fingerprint": pin}),
            bundles(&[(TRUST_DOMAIN, identity.ca_pem())]),
        )
        .await;
        let mut client = harness.client(ProtocolVersion::V2026_07_28).await;
        let result = client
            .call_tool("demo.add", json!({"a": 2, "b": 3}))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(result["structuredContent"], json!({"sum": 5}));
        let calls = call_entries(&harness.audit_entries());
        assert_eq!(calls[0]["decision"], "allowed");
        harness.stop().await;
    });
}

#[test]
fn serve_with_a_spiffe_bundle_allows_a_call_to_the_pinned_workload() {
    run(async {
        let identity = DemoIdentity::svid(WORKLOAD).unwrap();
        // Build the catalog as an operator would (the in-process harness pins the live
        // definitions), then serve it from a file with the bundle from a file.
        let harness = start(
            &identity,
            spiffe_server,
            bundles(&[(TRUST_DOMAIN, identity.ca_pem())]),
        )
        .await;
        let catalog_json = harness.catalog_json.clone();
        let (upstream, _, _) = harness.stop().await;
        let dir = temp_dir("serve-spiffe");
        let catalog = dir.join("catalog.json");
        std::fs::write(&catalog, catalog_json.to_string()).unwrap();
        let bundle = dir.join("corp.example.pem");
        std::fs::write(&bundle, identity.ca_pem()).unwrap();
        let audit = dir.join("audit.jsonl");
        let bundle_option = format!("{TRUST_DOMAIN}={}", bundle.to_str().unwrap());
        let mut serve = ServeProcess::spawn(&catalog, &audit, &["--spiffe-bundle", &bundle_option]);
        let mut client = serve.connect(ProtocolVersion::V2025_11_25).await;
        let result = client
            .call_tool("demo.add", json!({"a": 40, "b": 2}))
            .await
            .unwrap();
        let (code, stderr) = serve.terminate().await;
        let result = result.unwrap();
        assert_eq!(result["structuredContent"], json!({"sum": 42}));
        assert_eq!(upstream.controls().method_count("tools/call"), 1);
        assert_eq!(code, 0, "{stderr}");
        let entries = crate::e2e_support::read_entries(&audit);
        let calls = call_entries(&entries);
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0]["decision"], "allowed");
        assert_eq!(calls[0]["tool"], "demo.add");
        drop(upstream);
    });
}

/// Runs `toolgate serve` with a valid catalog and `--spiffe-bundle VALUE`; returns the exit code
/// and stderr.
fn serve_with_bundle_value(
    name: &str,
    value: impl FnOnce(&std::path::Path) -> String,
) -> (i32, String, String) {
    let dir = temp_dir(name);
    let catalog = dir.join("catalog.json");
    let entry = json!([{
        "tool_name": "demo.echo",
        "upstream_name": "echo",
        "server": {"url": "https://127.0.0.1:9/mcp", "spiffe_id": WORKLOAD},
        "approved_definition": {"name": "echo", "inputSchema": {"type": "object"}},
        "definition_hash": jcs_digest::tool_definition_digest(
            &json!({"name": "echo", "inputSchema": {"type": "object"}}),
            jcs_digest::Profile::Trace,
        ).unwrap().to_string(),
        "added_at": "2026-01-01T00:00:00Z",
        "approved_by": "test",
    }]);
    std::fs::write(&catalog, entry.to_string()).unwrap();
    let value = value(&dir);
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    let mut child = Command::new(TOOLGATE)
        .args([
            "serve",
            "--catalog",
            catalog.to_str().unwrap(),
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--audit",
            dir.join("audit.jsonl").to_str().unwrap(),
            "--spiffe-bundle",
            &value,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (code, stderr) = wait_bounded(&mut child, Duration::from_secs(20));
    (code, stderr, value)
}

#[test]
fn serve_refuses_a_spiffe_bundle_value_without_equals_with_exit_2() {
    let (code, stderr, value) = serve_with_bundle_value("serve-spiffe-no-equals", |dir| {
        dir.join("bundle.pem").to_str().unwrap().to_owned()
    });
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "toolgate: --spiffe-bundle {value:?}: write TRUST_DOMAIN=FILE, such as \
             corp.example=bundle.pem\n"
        )
    );
}

#[test]
fn serve_refuses_an_unreadable_spiffe_bundle_file_with_exit_2() {
    let (code, stderr, value) = serve_with_bundle_value("serve-spiffe-missing", |dir| {
        format!("corp.example={}", dir.join("missing.pem").to_str().unwrap())
    });
    let path = value.trim_start_matches("corp.example=");
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "toolgate: --spiffe-bundle {path}: cannot read the file (check the path and its \
             permissions): No such file or directory (os error 2)\n"
        )
    );
}
