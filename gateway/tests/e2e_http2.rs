//! The gateway in front of an upstream that serves HTTP/2 (real TLS on loopback): concurrent
//! calls are streams of one connection, each checked and audited with the identity that
//! connection presented, and a key changed behind it is refused on the next connection.

use std::time::Duration;

use serde_json::json;
use toolgate::mcp::ProtocolVersion;
use toolgate_testkit::DemoIdentity;

use crate::e2e_support::{
    Harness, Setup, assert_refused_in_the_handshake, call_entries, eventually, run,
};

#[test]
fn concurrent_calls_share_one_http2_connection_and_a_new_key_is_refused_on_the_next() {
    run(async {
        let mut setup = Setup::new();
        setup.upstream.http2(true);
        // No notification stream: its request would make the byte counts depend on timing.
        setup.upstream_options.listen_for_notifications = false;
        let harness = Harness::start(setup).await;
        let controls = harness.upstream.controls();
        let upstream_client = harness.network_upstream();
        // The harness pinned the upstream over a connection of its own.
        let handshakes_before = controls.handshakes_completed();
        let mut first = harness.client(ProtocolVersion::V2026_07_28).await;
        assert!(
            first
                .call_tool("demo.echo", json!({"text": "first"}))
                .await
                .unwrap()
                .is_ok()
        );

        // Every answer waits, so the calls overlap: over HTTP/1.1 each would take a connection
        // for itself and one for its listing.
        controls.set_delay(Some(Duration::from_millis(200)));
        const CLIENTS: usize = 8;
        let mut clients = Vec::with_capacity(CLIENTS);
        for _ in 0..CLIENTS {
            clients.push(harness.client(ProtocolVersion::V2026_07_28).await);
        }
        let calls: Vec<_> = clients
            .into_iter()
            .enumerate()
            .map(|(index, mut client)| {
                tokio::spawn(async move {
                    let text = format!("call {index}");
                    client.call_tool("demo.echo", json!({"text": text})).await
                })
            })
            .collect();
        for (index, call) in calls.into_iter().enumerate() {
            let answer = call.await.unwrap().unwrap();
            assert_eq!(
                answer,
                Ok(
                    json!({"content": [{"type": "text", "text": format!("call {index}")}], "isError": false, "resultType": "complete"})
                )
            );
        }
        controls.set_delay(None);
        assert_eq!(controls.handshakes_completed() - handshakes_before, 1);
        assert_eq!(upstream_client.connections_made(), 1);
        assert_eq!(
            controls.http2_connections(),
            controls.handshakes_completed()
        );
        // Per call, a listing and the call, all on that connection.
        assert_eq!(controls.method_count("tools/call"), 1 + CLIENTS as u64);

        // A new key at the upstream: the open connection keeps the identity its handshake
        // verified (and the audit says so); the next connection meets the new key and is
        // refused in its handshake, before a single application byte.
        let new_key = DemoIdentity::generate().unwrap();
        controls.present_identity(&new_key).unwrap();
        assert!(
            first
                .call_tool("demo.echo", json!({"text": "same"}))
                .await
                .unwrap()
                .is_ok()
        );
        controls.close_connections();
        eventually("the gateway saw its connection close", || {
            upstream_client.idle_connections() == 0
        })
        .await;
        assert_refused_in_the_handshake(&mut first, controls).await;
        assert_eq!(upstream_client.connections_made(), 1);

        let calls = call_entries(&harness.audit_entries());
        let pinned = harness.upstream.spki_fingerprint().to_string();
        let decisions: Vec<_> = calls
            .iter()
            .map(|entry| entry["decision"].clone())
            .collect();
        let mut expected = vec![json!("allowed"); CLIENTS + 2];
        expected.push(json!("identity_mismatch"));
        assert_eq!(decisions, expected);
        for entry in &calls[..CLIENTS + 2] {
            assert_eq!(entry["identity"]["fingerprints"][0], pinned.as_str());
            assert_eq!(entry["identity"]["pin"], "primary");
        }
        assert_eq!(
            calls[CLIENTS + 2]["identity"]["fingerprints"],
            json!([new_key.spki_fingerprint().to_string()])
        );
        harness.stop().await;
    });
}
