//! Definition-check freshness end to end: per-call lists on every call; max-age reuses a
//! listing until `notifications/tools/list_changed` invalidates it.

use std::time::Duration;

use serde_json::json;
use toolgate::definition_check::Freshness;
use toolgate::mcp::ProtocolVersion;

use crate::e2e_support::{Harness, Setup, call_entries, denial, eventually, run};

#[test]
fn per_call_lists_the_upstream_for_every_call() {
    run(async {
        let harness = Harness::start(Setup::new()).await;
        let mut client = harness.client(ProtocolVersion::V2025_11_25).await;
        let before = harness.upstream.controls().method_count("tools/list");
        for _ in 0..3 {
            assert!(
                client
                    .call_tool("demo.add", json!({"a": 1, "b": 1}))
                    .await
                    .unwrap()
                    .is_ok()
            );
        }
        assert_eq!(
            harness.upstream.controls().method_count("tools/list") - before,
            3
        );
        harness.stop().await;
    });
}

#[test]
fn max_age_reuses_a_listing_until_list_changed_invalidates_it() {
    run(async {
        let mut setup = Setup::new();
        setup.freshness = Freshness::MaxAge(Duration::from_secs(600));
        // The session generation, whose GET event stream carries list_changed between calls.
        setup.upstream.stateless(false);
        let harness = Harness::start(setup).await;
        let controls = harness.upstream.controls();
        let mut client = harness.client(ProtocolVersion::V2025_11_25).await;
        let before = controls.method_count("tools/list");
        assert!(
            client
                .call_tool("demo.add", json!({"a": 1, "b": 1}))
                .await
                .unwrap()
                .is_ok()
        );
        assert!(
            client
                .call_tool("demo.echo", json!({"text": "a"}))
                .await
                .unwrap()
                .is_ok()
        );
        assert!(
            client
                .call_tool("demo.add", json!({"a": 2, "b": 2}))
                .await
                .unwrap()
                .is_ok()
        );
        assert_eq!(
            controls.method_count("tools/list") - before,
            1,
            "max-age must reuse the listing"
        );

        // A silent change is not seen while the listing is fresh enough (that is what max-age
        // trades for speed)...
        controls.set_description("echo", "Returns the text. Also mails it out.");
        assert!(
            client
                .call_tool("demo.echo", json!({"text": "a"}))
                .await
                .unwrap()
                .is_ok()
        );
        assert_eq!(controls.method_count("tools/list") - before, 1);

        // ...but list_changed invalidates it at once.
        let upstream_client = harness.gateway.router().upstreams()[0].clone();
        let generation = *upstream_client.invalidations().borrow();
        controls.notify_tools_changed();
        eventually("the gateway hearing list_changed", || {
            *upstream_client.invalidations().borrow() != generation
        })
        .await;
        let answer = client
            .call_tool("demo.echo", json!({"text": "a"}))
            .await
            .unwrap();
        assert_eq!(denial(&answer), (-32002, "definition_mismatch".to_owned()));
        assert_eq!(controls.method_count("tools/list") - before, 2);
        assert!(
            client
                .call_tool("demo.add", json!({"a": 1, "b": 1}))
                .await
                .unwrap()
                .is_ok()
        );
        assert_eq!(controls.method_count("tools/list") - before, 2);

        let decisions: Vec<String> = call_entries(&harness.audit_entries())
            .iter()
            .map(|entry| entry["decision"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            decisions,
            [
                "allowed",
                "allowed",
                "allowed",
                "allowed",
                "definition_mismatch",
                "allowed"
            ]
        );
        harness.stop().await;
    });
}

#[test]
fn max_age_listing_is_invalidated_by_a_reconnect() {
    run(async {
        let mut setup = Setup::new();
        setup.freshness = Freshness::MaxAge(Duration::from_secs(600));
        let harness = Harness::start(setup).await;
        let controls = harness.upstream.controls();
        let mut client = harness.client(ProtocolVersion::V2026_07_28).await;
        assert!(
            client
                .call_tool("demo.echo", json!({"text": "a"}))
                .await
                .unwrap()
                .is_ok()
        );
        controls.set_description("echo", "Changed while nobody was looking.");
        // The upstream drops every connection: the next request reconnects, and a reconnect may
        // have missed notifications, so the cached listing must not be trusted.
        let upstream_client = harness.gateway.router().upstreams()[0].clone();
        let generation = *upstream_client.invalidations().borrow();
        controls.close_connections();
        // The first call after the drop reconnects (which bumps the generation) and may still be
        // checked against the old listing, and the drop itself reaches the gateway's pool
        // asynchronously; keep calling (bounded) until a fresh listing is used.
        let mut denied = false;
        for _ in 0..100 {
            let answer = client
                .call_tool("demo.echo", json!({"text": "a"}))
                .await
                .unwrap();
            if answer.is_err() {
                assert_eq!(denial(&answer), (-32002, "definition_mismatch".to_owned()));
                denied = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(denied, "a reconnect must invalidate the max-age listing");
        assert_ne!(*upstream_client.invalidations().borrow(), generation);
        harness.stop().await;
    });
}
