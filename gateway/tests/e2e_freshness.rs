//! Definition-check freshness end to end: per-call lists on every call; max-age reuses a
//! listing until `notifications/tools/list_changed` invalidates it.

use std::time::Duration;

use serde_json::json;
use toolgate::definition_check::Freshness;
use toolgate::mcp::ProtocolVersion;
use toolgate_testkit::Fault;

use crate::e2e_support::{Harness, Setup, call_entries, denial, eventually, run};

#[test]
fn per_call_lists_the_upstream_for_every_call() {
    run(async {
        let harness = Harness::start(Setup::new()).await;
        let mut client = harness.client(ProtocolVersion::V2025_11_25).await;
        let before = harness.upstream.controls().method_count("tools/list");
        let upstream = harness.network_upstream();
        assert_eq!(upstream.listing_answers_recognized(), 0);
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
        // The demo upstream answers every listing with the same bytes but for the id: the
        // first answer is checked and kept, the next two are recognized.
        assert_eq!(upstream.listing_answers_recognized(), 2);
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
        let upstream_client = harness.network_upstream();
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
    max_age_listing_is_invalidated_by_a_new_connection(Setup::new(), false);
}

#[test]
fn max_age_listing_is_invalidated_when_the_http2_connection_is_replaced() {
    let mut setup = Setup::new();
    setup.upstream.http2(true);
    max_age_listing_is_invalidated_by_a_new_connection(setup, true);
}

/// `http2`: whether every connection to the upstream is to be HTTP/2.
fn max_age_listing_is_invalidated_by_a_new_connection(mut setup: Setup, http2: bool) {
    run(async {
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
        // The upstream drops every connection: the next call reconnects, and a reconnect may
        // have missed notifications, so the cached listing must not be trusted. The connection
        // is made before the definition decision, so the very next call is checked afresh.
        let upstream_client = harness.network_upstream();
        let generation = *upstream_client.invalidations().borrow();
        let lists_before = controls.method_count("tools/list");
        let calls_before = controls.method_count("tools/call");
        controls.close_connections();
        // The drop reaches the gateway's pool asynchronously.
        eventually("the gateway saw its connections close", || {
            upstream_client.idle_connections() == 0
        })
        .await;
        let answer = client
            .call_tool("demo.echo", json!({"text": "a"}))
            .await
            .unwrap();
        assert_eq!(denial(&answer), (-32002, "definition_mismatch".to_owned()));
        assert_eq!(controls.method_count("tools/list") - lists_before, 1);
        assert_eq!(controls.method_count("tools/call"), calls_before);
        assert_ne!(*upstream_client.invalidations().borrow(), generation);
        let every_connection = controls.handshakes_completed();
        assert_eq!(
            controls.http2_connections(),
            if http2 { every_connection } else { 0 }
        );
        harness.stop().await;
    });
}

#[test]
fn a_session_lost_mid_call_is_not_re_sent_without_a_fresh_check() {
    run(async {
        let harness = session_harness(Freshness::MaxAge(Duration::from_secs(600))).await;
        let controls = harness.upstream.controls();
        let count = |method: &str| count_after_pinning(&harness, method);
        let mut client = harness.client(ProtocolVersion::V2025_11_25).await;
        let answer = client.call_tool("demo.echo", json!({"text": "a"})).await;
        assert!(answer.unwrap().is_ok());
        assert_eq!(count("tools/list"), 1);
        assert_eq!(count("tools/call"), 1);

        // The cached listing is fresh; the upstream changes the tool and loses the session as
        // the next call arrives. The call is not sent into a new session on the old check: the
        // new session's listing is checked first, and the drifted tool is refused.
        controls.set_description("echo", "Changed while the session was lost.");
        controls.set_fault(Some("tools/call"), Fault::SessionLost);
        let answer = client
            .call_tool("demo.echo", json!({"text": "b"}))
            .await
            .unwrap();
        assert_eq!(denial(&answer), (-32002, "definition_mismatch".to_owned()));
        assert_eq!(count("tools/call"), 2);
        assert_eq!(count("tools/list"), 2);
        assert_eq!(count("initialize"), 2);

        assert_eq!(
            decisions(&harness),
            ["allowed", "allowed", "definition_mismatch"]
        );
        harness.stop().await;
    });
}

#[test]
fn per_call_a_call_whose_session_is_lost_twice_is_unavailable_after_two_checks() {
    run(async {
        let harness = session_harness(Freshness::PerCall).await;
        let controls = harness.upstream.controls();
        let count = |method: &str| count_after_pinning(&harness, method);
        let mut client = harness.client(ProtocolVersion::V2025_11_25).await;
        controls.set_fault(Some("tools/call"), Fault::SessionLost);
        let answer = client
            .call_tool("demo.echo", json!({"text": "c"}))
            .await
            .unwrap();
        assert_eq!(denial(&answer), (-32003, "upstream_unavailable".to_owned()));
        // Each time the call went out, a listing in its session had checked it.
        assert_eq!(count("tools/call"), 2);
        assert_eq!(count("tools/list"), 2);
        assert_eq!(count("initialize"), 2);
        assert_eq!(
            decisions(&harness),
            ["allowed", "allowed", "upstream_unavailable"]
        );
        controls.clear_fault();
        let answer = client.call_tool("demo.echo", json!({"text": "d"})).await;
        assert!(answer.unwrap().is_ok());
        harness.stop().await;
    });
}

/// A harness whose upstream speaks only the session generation, without a notification stream.
async fn session_harness(freshness: Freshness) -> Harness {
    let mut setup = Setup::new();
    setup.freshness = freshness;
    setup.upstream.stateless(false);
    setup.upstream_options.listen_for_notifications = false;
    Harness::start(setup).await
}

/// How many `method` messages the upstream received since the harness pinned it (with one
/// `initialize` and one `tools/list`).
fn count_after_pinning(harness: &Harness, method: &str) -> u64 {
    harness.upstream.controls().method_count(method) - u64::from(method != "tools/call")
}

/// The decisions of the `tools/call` entries so far, in order.
fn decisions(harness: &Harness) -> Vec<String> {
    call_entries(&harness.audit_entries())
        .iter()
        .map(|entry| entry["decision"].as_str().unwrap().to_owned())
        .collect()
}

/// A rug pull that keeps the answer's length is still another answer: it is checked, not
/// recognized, and the call denied; the approved bytes again are recognized and allowed.
#[test]
fn per_call_a_drift_of_the_same_length_is_checked_and_denied() {
    run(async {
        let harness = Harness::start(Setup::new()).await;
        let mut client = harness.client(ProtocolVersion::V2025_11_25).await;
        let upstream = harness.network_upstream();
        let approved = "Returns the given text unchanged.";
        let drifted = "Returns the given text, mailed!!.";
        assert_eq!(approved.len(), drifted.len());
        let arguments = json!({"text": "hi"});

        let allowed = client.call_tool("demo.echo", arguments.clone()).await;
        assert!(allowed.unwrap().is_ok());
        assert!(harness.upstream.controls().set_description("echo", drifted));
        let denied = client.call_tool("demo.echo", arguments.clone()).await;
        assert_eq!(
            denial(&denied.unwrap()),
            (-32002, "definition_mismatch".to_owned())
        );
        assert_eq!(upstream.listing_answers_recognized(), 0);
        assert!(
            harness
                .upstream
                .controls()
                .set_description("echo", approved)
        );
        let allowed = client.call_tool("demo.echo", arguments).await;
        assert!(allowed.unwrap().is_ok());
        assert_eq!(upstream.listing_answers_recognized(), 1);
        assert_eq!(
            decisions(&harness),
            ["allowed", "definition_mismatch", "allowed"]
        );
        harness.stop().await;
    });
}
