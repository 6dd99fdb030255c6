//! The audit log after real runs: the chain verifies, a restart appends to the same chain,
//! arguments appear only as digests, an edited entry is detected, and a decision that misses the
//! write deadline is refused and not forwarded.

use serde_json::json;
use toolgate::audit::{
    ChainProblem, Decision, DenialReason, VerifyError, arguments_digest, verify_file,
};
use toolgate::mcp::ProtocolVersion;

use crate::e2e_support::{Harness, Setup, call_entries, read_entries, run, temp_dir};

#[test]
fn the_chain_verifies_after_a_run_and_after_a_restart_that_appends() {
    run(async {
        let path = temp_dir("audit-restart").join("audit.jsonl");
        let mut setup = Setup::new();
        setup.audit_path = Some(path.clone());
        let harness = Harness::start(setup).await;
        let mut client = harness.client(ProtocolVersion::V2025_11_25).await;
        let secret = "the-secret-argument-value";
        assert!(
            client
                .call_tool("demo.echo", json!({"text": secret}))
                .await
                .unwrap()
                .is_ok()
        );
        assert!(client.call_tool("nope", json!({})).await.unwrap().is_err());
        let (upstream, path, first_measurement) = harness.stop().await;

        let summary = verify_file(&path, Some(&first_measurement)).unwrap();
        assert_eq!(summary.entries(), 3);
        assert_eq!(summary.decisions().get(&Decision::Allowed), Some(&1));
        assert_eq!(
            summary
                .decisions()
                .get(&Decision::Denied(DenialReason::ToolNotInCatalog)),
            Some(&1)
        );
        let log_text = std::fs::read_to_string(&path).unwrap();
        assert!(
            !log_text.contains(secret),
            "arguments must be recorded as digests only"
        );
        let entries = read_entries(&path);
        assert_eq!(entries[0]["prev"], first_measurement.to_string());
        assert_eq!(
            call_entries(&entries)[0]["arguments_digest"],
            arguments_digest(&json!({"text": secret}))
                .unwrap()
                .to_string()
        );

        // A restart with the same catalog and the same log appends to the chain.
        let mut setup = Setup::new();
        setup.audit_path = Some(path.clone());
        let harness = Harness::start_with(upstream, setup).await;
        let mut client = harness.client(ProtocolVersion::V2026_07_28).await;
        assert!(
            client
                .call_tool("demo.add", json!({"a": 1, "b": 2}))
                .await
                .unwrap()
                .is_ok()
        );
        let (_upstream, path, second_measurement) = harness.stop().await;
        assert_eq!(second_measurement, first_measurement);
        let summary = verify_file(&path, Some(&first_measurement)).unwrap();
        assert_eq!(summary.entries(), 5);
        assert_eq!(summary.starts().len(), 2);
        assert_eq!(summary.decisions().get(&Decision::Allowed), Some(&2));
        let entries = read_entries(&path);
        for pair in entries.windows(2) {
            assert_eq!(pair[1]["prev"], pair[0]["hash"]);
        }
    });
}

#[test]
fn editing_one_entry_is_detected() {
    run(async {
        let harness = Harness::start(Setup::new()).await;
        let mut client = harness.client(ProtocolVersion::V2025_11_25).await;
        assert!(
            client
                .call_tool("demo.echo", json!({"text": "a"}))
                .await
                .unwrap()
                .is_ok()
        );
        assert!(
            client
                .call_tool("demo.unknown", json!({}))
                .await
                .unwrap()
                .is_err()
        );
        assert!(
            client
                .call_tool("demo.add", json!({"a": 1, "b": 2}))
                .await
                .unwrap()
                .is_ok()
        );
        let (_upstream, path, measurement) = harness.stop().await;
        assert!(verify_file(&path, Some(&measurement)).is_ok());

        // Turn the denial (line 3) into an "allowed" decision.
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        assert!(
            lines[2].contains("\"decision\":\"tool_not_in_catalog\""),
            "{}",
            lines[2]
        );
        lines[2] = lines[2].replace(
            "\"decision\":\"tool_not_in_catalog\"",
            "\"decision\":\"allowed\"",
        );
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        match verify_file(&path, Some(&measurement)) {
            Err(VerifyError::Broken(broken)) => {
                assert_eq!(broken.line, 3);
                assert!(
                    matches!(broken.problem, ChainProblem::HashMismatch { .. }),
                    "{:?}",
                    broken.problem
                );
            }
            other => panic!("the edit was not detected: {other:?}"),
        }
    });
}

#[test]
fn a_decision_that_misses_the_write_deadline_is_refused_with_32603_and_not_forwarded() {
    run(async {
        let mut setup = Setup::new();
        // A nanosecond: the timer fires at its next tick, which a fast sync sometimes beats;
        // the first call whose `allowed` entry misses it is the one under test.
        setup
            .audit_options
            .write_deadline(std::time::Duration::from_nanos(1));
        let harness = Harness::start(setup).await;
        let controls = harness.upstream.controls();
        let mut client = harness.client(ProtocolVersion::V2025_11_25).await;
        let mut answered = 0;
        let refused = loop {
            let answer = client
                .call_tool("demo.echo", json!({"text": "a"}))
                .await
                .unwrap();
            match answer {
                Ok(_) => answered += 1,
                Err(error) => break error,
            }
            assert!(answered < 1000, "no entry ever missed a 1 ns deadline");
        };
        assert_eq!(refused.code, -32603);
        assert_eq!(refused.data, None);
        assert!(
            refused.message.starts_with(
                "Internal error: the audit log cannot record decisions (the audit log "
            ) && refused
                .message
                .contains("did not write and sync the entry within 1ns"),
            "{}",
            refused.message
        );
        // Forwarded exactly the calls that were answered: the refused one never reached it.
        assert_eq!(controls.method_count("tools/call"), answered);
        // Every later call is refused too, and not forwarded.
        let later = client
            .call_tool("demo.echo", json!({"text": "a"}))
            .await
            .unwrap()
            .unwrap_err();
        assert_eq!(later.code, -32603);
        assert_eq!(controls.method_count("tools/call"), answered);
        let (_, path, measurement) = harness.stop().await;
        // The log verifies: the late entry was cut when its write finished.
        let summary = verify_file(&path, Some(&measurement)).unwrap();
        assert_eq!(
            summary.decisions().get(&Decision::Allowed).copied(),
            (answered > 0).then_some(answered)
        );
    });
}
