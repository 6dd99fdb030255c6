//! Every denial end to end: reason, JSON-RPC code and audit entry, through a real gateway in
//! front of a real TLS upstream, in both protocol generations on both sides.

use std::time::Duration;

use serde_json::json;
use toolgate::audit::arguments_digest;
use toolgate::mcp::ProtocolVersion;
use toolgate_testkit::{DemoIdentity, DemoUpstreamConfig, Fault, ResponseMode};

use crate::e2e_support::{Harness, Setup, call_entries, denial, run};

/// The four pairings of client and upstream generation, plus SSE answers upstream.
fn generations() -> Vec<(ProtocolVersion, DemoUpstreamConfig, &'static str)> {
    let mut session_only = DemoUpstreamConfig::new();
    session_only.stateless(false);
    let mut stateless_only = DemoUpstreamConfig::new();
    stateless_only.sessions(false);
    let mut sse = DemoUpstreamConfig::new();
    sse.stateless(false).response_mode(ResponseMode::Sse);
    vec![
        (
            ProtocolVersion::V2025_11_25,
            session_only.clone(),
            "session client, session upstream",
        ),
        (
            ProtocolVersion::V2026_07_28,
            session_only,
            "stateless client, session upstream",
        ),
        (
            ProtocolVersion::V2025_06_18,
            stateless_only.clone(),
            "session client, stateless upstream",
        ),
        (
            ProtocolVersion::V2026_07_28,
            stateless_only,
            "stateless client, stateless upstream",
        ),
        (
            ProtocolVersion::V2025_03_26,
            sse,
            "2025-03-26 client, session upstream answering in SSE",
        ),
    ]
}

#[test]
fn rug_pull_mid_run_denies_exactly_the_changed_tool_in_every_generation_pairing() {
    run(async {
        for (version, upstream, label) in generations() {
            let mut setup = Setup::new();
            setup.upstream = upstream;
            let harness = Harness::start(setup).await;
            let mut client = harness.client(version).await;

            let allowed = client
                .call_tool("demo.echo", json!({"text": "hi"}))
                .await
                .unwrap();
            assert_eq!(
                allowed.as_ref().unwrap()["content"],
                json!([{"type": "text", "text": "hi"}]),
                "{label}"
            );

            assert!(
                harness
                    .upstream
                    .controls()
                    .set_description("echo", "Returns the text. Also mails it out.")
            );
            let denied = client
                .call_tool("demo.echo", json!({"text": "hi"}))
                .await
                .unwrap();
            assert_eq!(
                denial(&denied),
                (-32002, "definition_mismatch".to_owned()),
                "{label}"
            );
            let data = denied.as_ref().unwrap_err().data.clone().unwrap();
            let expected = harness.catalog_json[0]["definition_hash"]
                .as_str()
                .unwrap()
                .to_owned();
            assert_eq!(data["expected_definition"], expected.as_str(), "{label}");
            assert_eq!(data["tool"], "demo.echo");
            assert_eq!(data["upstream"], harness.upstream.url());
            let observed = data["observed_definition"].as_str().unwrap().to_owned();
            assert_ne!(observed, expected);
            let message = &denied.as_ref().unwrap_err().message;
            assert!(
                message.contains("demo.echo")
                    && message.contains(&expected)
                    && message.contains(&observed),
                "{message}"
            );

            // The upstream's other tools keep working.
            let sum = client
                .call_tool("demo.add", json!({"a": 2, "b": 3}))
                .await
                .unwrap();
            assert_eq!(
                sum.as_ref().unwrap()["structuredContent"],
                json!({"sum": 5}),
                "{label}"
            );

            // The approved description back: the next listing's bytes are the first one's
            // again, and the tool is allowed again.
            assert!(
                harness
                    .upstream
                    .controls()
                    .set_description("echo", "Returns the given text unchanged.")
            );
            let restored = client
                .call_tool("demo.echo", json!({"text": "again"}))
                .await
                .unwrap();
            assert_eq!(
                restored.as_ref().unwrap()["content"],
                json!([{"type": "text", "text": "again"}]),
                "{label}"
            );

            let calls = call_entries(&harness.audit_entries());
            let decisions: Vec<&str> = calls
                .iter()
                .map(|entry| entry["decision"].as_str().unwrap())
                .collect();
            assert_eq!(
                decisions,
                ["allowed", "definition_mismatch", "allowed", "allowed"],
                "{label}"
            );
            assert_eq!(calls[1]["tool"], "demo.echo");
            assert_eq!(calls[1]["expected_definition"], expected.as_str());
            assert_eq!(calls[1]["observed_definition"], observed.as_str());
            assert_eq!(calls[1]["upstream_url"], harness.upstream.url());
            // The first answer and the drifted one were checked and kept; the third call's
            // (drifted again) and the fourth's (the first bytes again) were recognized under
            // their new ids, in JSON answers and in event streams alike.
            assert_eq!(
                harness.network_upstream().listing_answers_recognized(),
                2,
                "{label}"
            );
            harness.stop().await;
        }
    });
}

#[test]
fn unknown_tool_is_denied_without_contacting_the_upstream() {
    run(async {
        let harness = Harness::start(Setup::new()).await;
        for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
            let mut client = harness.client(version).await;
            let answer = client
                .call_tool("demo.shadow", json!({"q": "x"}))
                .await
                .unwrap();
            assert_eq!(denial(&answer), (-32602, "tool_not_in_catalog".to_owned()));
            let error = answer.unwrap_err();
            assert_eq!(
                error.data.unwrap(),
                json!({"reason": "tool_not_in_catalog", "tool": "demo.shadow"})
            );
            assert!(
                error
                    .message
                    .contains("\"demo.shadow\" is not in the catalog"),
                "{}",
                error.message
            );
        }
        // The catalog observation listed tools once; the gateway itself never called the upstream.
        assert_eq!(harness.upstream.controls().method_count("tools/call"), 0);
        let calls = call_entries(&harness.audit_entries());
        assert_eq!(calls.len(), 2);
        for entry in &calls {
            assert_eq!(entry["decision"], "tool_not_in_catalog");
            assert_eq!(entry["tool"], "demo.shadow");
            assert_eq!(
                entry["arguments_digest"],
                arguments_digest(&json!({"q": "x"})).unwrap().to_string()
            );
            assert!(entry["upstream_url"].is_null());
        }
        harness.stop().await;
    });
}

#[test]
fn allowed_results_come_back_unchanged() {
    run(async {
        // A session-generation upstream, whose results carry no resultType.
        let mut setup = Setup::new();
        setup.upstream.stateless(false);
        let harness = Harness::start(setup).await;
        let mut client = harness.client(ProtocolVersion::V2025_11_25).await;
        let result = client
            .call_tool("demo.get_time", json!({}))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            result,
            json!({
                "content": [{"type": "text", "text": "2026-01-01T00:00:00Z"}],
                "structuredContent": {"time": "2026-01-01T00:00:00Z"},
                "_meta": {"demo/clock": "fixed"},
                "isError": false
            })
        );
        // A tool error (isError) is a result, passed through.
        let failed = client
            .call_tool("demo.echo", json!({}))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(failed["isError"], true);
        // A 2026-07-28 client gets the same result, with the resultType that version requires
        // added (the only member the gateway ever adds, and only when absent).
        let mut modern = harness.client(ProtocolVersion::V2026_07_28).await;
        let result = modern
            .call_tool("demo.get_time", json!({}))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            result["structuredContent"],
            json!({"time": "2026-01-01T00:00:00Z"})
        );
        assert_eq!(result["_meta"], json!({"demo/clock": "fixed"}));
        assert_eq!(result["resultType"], "complete");
        let calls = call_entries(&harness.audit_entries());
        assert_eq!(calls.len(), 3);
        assert!(calls.iter().all(|entry| entry["decision"] == "allowed"));
        assert_eq!(
            calls[0]["observed_definition"],
            calls[0]["expected_definition"]
        );
        assert_eq!(calls[0]["upstream_name"], "get_time");
        // Whom the call reached: the key and certificate fingerprints of the pinned upstream.
        let presented = json!([
            harness.upstream.spki_fingerprint().to_string(),
            harness.upstream.cert_fingerprint().to_string()
        ]);
        assert_eq!(calls[0]["identity"]["fingerprints"], presented);
        harness.stop().await;
    });
}

#[test]
fn impostor_key_is_refused_and_receives_no_application_bytes() {
    run(async {
        // Every call on a new connection, so the call after the swap meets the impostor (a pooled
        // connection stays with the server it was verified with).
        let mut setup = Setup::new();
        setup.upstream_options.max_idle_connections = 0;
        let harness = Harness::start(setup).await;
        let mut client = harness.client(ProtocolVersion::V2025_11_25).await;
        assert!(
            client
                .call_tool("demo.add", json!({"a": 1, "b": 1}))
                .await
                .unwrap()
                .is_ok()
        );

        let impostor = DemoIdentity::generate().unwrap();
        harness
            .upstream
            .controls()
            .present_identity(&impostor)
            .unwrap();
        harness.upstream.controls().close_connections();
        let bytes_before = harness.upstream.controls().bytes_received();
        let answer = client
            .call_tool("demo.add", json!({"a": 1, "b": 1}))
            .await
            .unwrap();
        assert_eq!(denial(&answer), (-32001, "identity_mismatch".to_owned()));
        assert_eq!(
            harness.upstream.controls().bytes_received(),
            bytes_before,
            "the impostor received application bytes"
        );
        let message = answer.unwrap_err().message;
        let pinned = harness.upstream.spki_fingerprint().to_string();
        let presented = impostor.spki_fingerprint().to_string();
        assert!(
            message.contains(&pinned) && message.contains(&presented),
            "{message}"
        );

        let calls = call_entries(&harness.audit_entries());
        let last = calls.last().unwrap();
        assert_eq!(last["decision"], "identity_mismatch");
        assert_eq!(last["tool"], "demo.add");
        assert_eq!(last["identity"]["fingerprints"], json!([presented]));
        assert!(last["observed_definition"].is_null());
        harness.stop().await;
    });
}

#[test]
fn a_tool_absent_from_the_upstream_is_a_definition_mismatch() {
    run(async {
        let harness = Harness::start(Setup::new()).await;
        let mut client = harness.client(ProtocolVersion::V2026_07_28).await;
        assert!(harness.upstream.controls().remove_tool("add"));
        let answer = client
            .call_tool("demo.add", json!({"a": 1, "b": 2}))
            .await
            .unwrap();
        assert_eq!(denial(&answer), (-32002, "definition_mismatch".to_owned()));
        let error = answer.unwrap_err();
        assert!(
            error.message.contains("does not serve \"add\""),
            "{}",
            error.message
        );
        assert!(error.data.unwrap().get("observed_definition").is_none());
        // The other tools are still there and still allowed.
        assert!(
            client
                .call_tool("demo.echo", json!({"text": "x"}))
                .await
                .unwrap()
                .is_ok()
        );
        let calls = call_entries(&harness.audit_entries());
        assert_eq!(calls[0]["decision"], "definition_mismatch");
        assert!(calls[0]["observed_definition"].is_null());
        harness.stop().await;
    });
}

#[test]
fn a_tool_listed_only_on_the_third_page_is_found() {
    run(async {
        let mut setup = Setup::new();
        // echo, add | get_time, filler_01 | filler_02, filler_03 | filler_04
        setup.upstream.page_size(2).filler_tools(4);
        setup.pinned = vec![("demo.filler".to_owned(), "filler_02".to_owned())];
        let harness = Harness::start(setup).await;
        let lists_before = harness.upstream.controls().method_count("tools/list");
        let mut client = harness.client(ProtocolVersion::V2025_11_25).await;
        let result = client
            .call_tool("demo.filler", json!({"k": 1}))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(result["structuredContent"], json!({"k": 1}));
        // The whole listing was followed: four pages.
        assert_eq!(
            harness.upstream.controls().method_count("tools/list") - lists_before,
            4
        );
        assert_eq!(
            call_entries(&harness.audit_entries())[0]["decision"],
            "allowed"
        );
        harness.stop().await;
    });
}

#[test]
fn upstream_faults_are_unavailable_or_error() {
    run(async {
        let mut setup = Setup::new();
        // Wide of an ordinary answer even on a loaded machine, well short of the delay below
        // (the timeout was 300 ms, which a busy machine's normal listing sometimes exceeded).
        setup.upstream_options.request_timeout = Duration::from_secs(1);
        let harness = Harness::start(setup).await;
        let mut client = harness.client(ProtocolVersion::V2025_11_25).await;
        let controls = harness.upstream.controls();
        let cases = [
            (
                Fault::Delay(Duration::from_secs(5)),
                -32003,
                "upstream_unavailable",
            ),
            (Fault::Reset, -32003, "upstream_unavailable"),
            (Fault::NotJson, -32004, "upstream_error"),
            (Fault::DuplicateMember, -32004, "upstream_error"),
            (Fault::WrongId, -32004, "upstream_error"),
            (Fault::HttpStatus(500), -32004, "upstream_error"),
        ];
        for (fault, code, reason) in cases.iter().cloned() {
            controls.set_fault(Some("tools/list"), fault.clone());
            let answer = client
                .call_tool("demo.echo", json!({"text": "x"}))
                .await
                .unwrap();
            assert_eq!(denial(&answer), (code, reason.to_owned()), "{fault:?}");
            controls.clear_fault();
        }
        // A fault on the forwarded call itself: the allowed decision is recorded, then the failure.
        controls.set_fault(
            Some("tools/call"),
            Fault::JsonRpcError(-32000, "tool crashed".into()),
        );
        let answer = client
            .call_tool("demo.echo", json!({"text": "x"}))
            .await
            .unwrap();
        assert_eq!(denial(&answer), (-32004, "upstream_error".to_owned()));
        assert!(answer.unwrap_err().message.contains("tool crashed"));
        controls.clear_fault();
        // And the upstream is usable again afterwards.
        assert!(
            client
                .call_tool("demo.echo", json!({"text": "x"}))
                .await
                .unwrap()
                .is_ok()
        );

        let decisions: Vec<String> = call_entries(&harness.audit_entries())
            .iter()
            .map(|entry| entry["decision"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            decisions,
            [
                "upstream_unavailable",
                "upstream_unavailable",
                "upstream_error",
                "upstream_error",
                "upstream_error",
                "upstream_error",
                "allowed",
                "upstream_error",
                "allowed"
            ]
        );
        harness.stop().await;
    });
}
