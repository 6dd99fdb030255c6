//! The upstream client against the demo upstream over real TLS on loopback, pinned by key:
//! both protocol generations and the fallback between them, pagination, SSE answers, session
//! loss, the list_changed signal, and every failure with its exact `UpstreamError` variant.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use server_identity::{
    Fingerprint, IdentityError, RotationMode, ServerAnchors, TlsTrust, TrustBundles, client_config,
};
use toolgate::mcp::{Generation, ProtocolVersion};
use toolgate::upstream::{
    TimeoutPhase, UpstreamClient, UpstreamError, UpstreamOptions, observe_tools,
};
use toolgate_testkit::{
    DemoIdentity, DemoUpstream, DemoUpstreamConfig, DiscoverRefusal, Fault, ResponseMode,
    RunningUpstream,
};

/// Every test is bounded: a hang is a failure, never a stuck CI run.
const TEST_TIMEOUT: Duration = Duration::from_secs(30);

async fn bounded<F: std::future::Future>(future: F) -> F::Output {
    tokio::time::timeout(TEST_TIMEOUT, future)
        .await
        .expect("the test timed out")
}

/// A client configuration that trusts exactly this key (`tls_trust: pin`, key-pinned).
fn pinned_to(fingerprint: Fingerprint) -> Arc<rustls::ClientConfig> {
    let anchors = ServerAnchors::builder()
        .fingerprint(fingerprint)
        .tls_trust(TlsTrust::Pin)
        .build()
        .unwrap();
    client_config(
        &anchors,
        Arc::new(rustls::RootCertStore::empty()),
        &TrustBundles::new(),
    )
    .unwrap()
}

fn client_for(upstream: &RunningUpstream, options: UpstreamOptions) -> UpstreamClient {
    UpstreamClient::new(
        &upstream.url().parse().unwrap(),
        pinned_to(upstream.spki_fingerprint()),
        options,
    )
}

async fn start(config: &DemoUpstreamConfig) -> RunningUpstream {
    DemoUpstream::start(config).await.unwrap()
}

/// Options without the notification listener, whose own connection and request would make
/// connection and byte counts depend on when it runs.
fn quiet() -> UpstreamOptions {
    UpstreamOptions {
        listen_for_notifications: false,
        ..UpstreamOptions::default()
    }
}

fn names(tools: &[Value]) -> Vec<&str> {
    tools
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn stateless_generation_is_tried_first_and_used_when_offered() {
    bounded(async {
        let upstream = start(&DemoUpstreamConfig::new()).await;
        let client = client_for(&upstream, UpstreamOptions::default());
        assert_eq!(
            names(&client.list_tools().await.unwrap()),
            ["echo", "add", "get_time"]
        );
        let result = client
            .call_tool("add", Some(json!({"a": 2, "b": 3})), None)
            .await
            .unwrap();
        assert_eq!(
            result,
            json!({
                "content": [{"type": "text", "text": "5"}],
                "structuredContent": {"sum": 5},
                "isError": false,
                "resultType": "complete"
            })
        );
        assert_eq!(
            client.protocol_version(),
            Some(ProtocolVersion::V2026_07_28)
        );
        assert_eq!(client.session_id(), None);
        let controls = upstream.controls();
        assert_eq!(controls.method_count("server/discover"), 1);
        assert_eq!(controls.method_count("initialize"), 0);
        assert_eq!(controls.method_count("tools/list"), 1);
        assert_eq!(controls.method_count("tools/call"), 1);
    })
    .await;
}

#[tokio::test]
async fn refused_discover_falls_back_to_initialize_for_both_refusal_styles() {
    bounded(async {
        for refusal in [DiscoverRefusal::MethodNotFound, DiscoverRefusal::BadRequest] {
            let upstream = start(
                DemoUpstreamConfig::new()
                    .stateless(false)
                    .discover_refusal(refusal),
            )
            .await;
            let client = client_for(&upstream, UpstreamOptions::default());
            let result = client
                .call_tool("echo", Some(json!({"text": "hi"})), None)
                .await
                .unwrap();
            assert_eq!(
                result,
                json!({"content": [{"type": "text", "text": "hi"}], "isError": false})
            );
            assert_eq!(
                client.protocol_version(),
                Some(ProtocolVersion::V2025_11_25)
            );
            assert_eq!(client.session_id().as_deref(), Some("demo-session-1"));
            let controls = upstream.controls();
            assert_eq!(controls.method_count("server/discover"), 1, "{refusal:?}");
            assert_eq!(controls.method_count("initialize"), 1, "{refusal:?}");
            assert_eq!(
                controls.method_count("notifications/initialized"),
                1,
                "{refusal:?}"
            );
        }
    })
    .await;
}

#[tokio::test]
async fn a_forced_generation_is_the_only_one_spoken() {
    bounded(async {
        let upstream = start(&DemoUpstreamConfig::new()).await;
        let options = UpstreamOptions {
            generation: Some(Generation::Session),
            ..UpstreamOptions::default()
        };
        let client = client_for(&upstream, options);
        client.list_tools().await.unwrap();
        assert_eq!(
            client.protocol_version(),
            Some(ProtocolVersion::V2025_11_25)
        );
        assert_eq!(upstream.controls().method_count("server/discover"), 0);

        let session_only = start(DemoUpstreamConfig::new().stateless(false)).await;
        let options = UpstreamOptions {
            generation: Some(Generation::Stateless),
            ..UpstreamOptions::default()
        };
        let error = client_for(&session_only, options)
            .list_tools()
            .await
            .unwrap_err();
        assert_eq!(
            error,
            UpstreamError::UnsupportedVersion {
                url: session_only.url().to_owned(),
                offered: "no 2026-07-28 (server/discover refused)".to_owned(),
            }
        );
        assert_eq!(error.reason(), "upstream_error");
    })
    .await;
}

#[tokio::test]
async fn every_tools_list_page_is_followed_and_the_page_count_is_bounded() {
    bounded(async {
        for generation in [Generation::Stateless, Generation::Session] {
            let upstream = start(DemoUpstreamConfig::new().filler_tools(5).page_size(3)).await;
            let options = UpstreamOptions {
                generation: Some(generation),
                ..UpstreamOptions::default()
            };
            let tools = client_for(&upstream, options).list_tools().await.unwrap();
            assert_eq!(
                names(&tools),
                [
                    "echo",
                    "add",
                    "get_time",
                    "filler_01",
                    "filler_02",
                    "filler_03",
                    "filler_04",
                    "filler_05"
                ]
            );
            assert_eq!(upstream.controls().method_count("tools/list"), 3);

            let options = UpstreamOptions {
                max_list_pages: 2,
                generation: Some(generation),
                ..UpstreamOptions::default()
            };
            let error = client_for(&upstream, options)
                .list_tools()
                .await
                .unwrap_err();
            assert_eq!(
                error,
                UpstreamError::TooManyPages {
                    url: upstream.url().to_owned(),
                    limit: 2
                }
            );
        }
    })
    .await;
}

#[tokio::test]
async fn sse_answers_are_read_and_their_list_changed_notifications_invalidate() {
    bounded(async {
        for generation in [Generation::Stateless, Generation::Session] {
            let upstream = start(DemoUpstreamConfig::new().response_mode(ResponseMode::Sse)).await;
            let options = UpstreamOptions {
                generation: Some(generation),
                listen_for_notifications: false,
                ..UpstreamOptions::default()
            };
            let client = client_for(&upstream, options);
            let invalidations = client.invalidations();
            assert_eq!(client.list_tools().await.unwrap().len(), 3);
            let result = client.call_tool("get_time", None, None).await.unwrap();
            assert_eq!(
                result["structuredContent"],
                json!({"time": "2026-01-01T00:00:00Z"})
            );
            assert_eq!(result["_meta"], json!({"demo/clock": "fixed"}));
            assert_eq!(*invalidations.borrow(), 0);

            upstream.controls().notify_tools_changed();
            client
                .call_tool("echo", Some(json!({"text": "x"})), None)
                .await
                .unwrap();
            assert_eq!(*invalidations.borrow(), 1, "{generation:?}");
        }
    })
    .await;
}

#[tokio::test]
async fn an_sse_listing_served_again_is_recognized_and_its_notifications_still_read() {
    bounded(async {
        let upstream = start(DemoUpstreamConfig::new().response_mode(ResponseMode::Sse)).await;
        let options = UpstreamOptions {
            generation: Some(Generation::Stateless),
            listen_for_notifications: false,
            ..UpstreamOptions::default()
        };
        let client = client_for(&upstream, options);
        let invalidations = client.invalidations();
        // The first answer is read and kept; the second is its response event under a new id.
        let first = client.list_tools().await.unwrap();
        assert_eq!(client.listing_answers_recognized(), 0);
        assert_eq!(client.list_tools().await.unwrap(), first);
        assert_eq!(client.listing_answers_recognized(), 1);
        // A list_changed event before the same response: the response is recognized and the
        // notification read all the same.
        upstream.controls().notify_tools_changed();
        assert_eq!(client.list_tools().await.unwrap(), first);
        assert_eq!(client.listing_answers_recognized(), 2);
        assert_eq!(*invalidations.borrow(), 1);
        // A changed listing is read in full.
        assert!(upstream.controls().remove_tool("echo"));
        assert_eq!(client.list_tools().await.unwrap().len(), first.len() - 1);
        assert_eq!(client.listing_answers_recognized(), 2);
    })
    .await;
}

#[tokio::test]
async fn list_changed_on_the_session_event_stream_invalidates() {
    bounded(async {
        let upstream = start(DemoUpstreamConfig::new().stateless(false)).await;
        let client = client_for(&upstream, UpstreamOptions::default());
        let mut invalidations = client.invalidations();
        client.list_tools().await.unwrap();
        // The listener opens its stream in the background; wait for it (bounded by the test).
        while upstream.controls().event_streams_open() == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let before = *invalidations.borrow_and_update();
        upstream.controls().notify_tools_changed();
        invalidations.changed().await.unwrap();
        assert_eq!(*invalidations.borrow(), before + 1);
    })
    .await;
}

#[tokio::test]
async fn list_changed_on_the_2026_subscription_stream_invalidates() {
    bounded(async {
        let upstream = start(&DemoUpstreamConfig::new()).await;
        let client = client_for(&upstream, UpstreamOptions::default());
        let mut invalidations = client.invalidations();
        client.list_tools().await.unwrap();
        assert_eq!(
            client.protocol_version(),
            Some(ProtocolVersion::V2026_07_28)
        );
        while upstream.controls().event_streams_open() == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(upstream.controls().method_count("subscriptions/listen"), 1);
        let before = *invalidations.borrow_and_update();
        upstream.controls().notify_tools_changed();
        invalidations.changed().await.unwrap();
        assert_eq!(*invalidations.borrow(), before + 1);
    })
    .await;
}

#[tokio::test]
async fn a_lost_event_stream_is_reopened_and_counts_as_an_invalidation() {
    bounded(async {
        let upstream = start(DemoUpstreamConfig::new().stateless(false)).await;
        let client = client_for(&upstream, UpstreamOptions::default());
        let mut invalidations = client.invalidations();
        client.list_tools().await.unwrap();
        while upstream.controls().event_streams_open() == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let before = *invalidations.borrow_and_update();
        upstream.controls().close_connections();
        invalidations.changed().await.unwrap();
        assert_eq!(*invalidations.borrow_and_update(), before + 1);
        // The reopened stream delivers again.
        while upstream.controls().event_streams_opened() < 2 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        upstream.controls().notify_tools_changed();
        invalidations.changed().await.unwrap();
        assert_eq!(*invalidations.borrow(), before + 2);
        assert_eq!(client.list_tools().await.unwrap().len(), 3);
    })
    .await;
}

/// An observation is one listing: no event stream is opened beside it, whose request would reach
/// the upstream after the listing's answer (a harness counting the upstream's bytes saw it).
#[tokio::test]
async fn observing_the_tools_sends_the_listing_and_nothing_beside_it() {
    bounded(async {
        // Stateless: server/discover and tools/list. Sessions: the refused server/discover,
        // initialize, notifications/initialized and tools/list.
        for (stateless, requests) in [(true, 2), (false, 4)] {
            // A slow page leaves a listener's request the time to arrive before the answer.
            let upstream = start(
                DemoUpstreamConfig::new()
                    .stateless(stateless)
                    .page_delay(Duration::from_millis(200)),
            )
            .await;
            let tools = observe_tools(
                &upstream.url().parse().unwrap(),
                &upstream.spki_fingerprint(),
            )
            .await
            .unwrap();
            assert_eq!(tools.len(), 3);
            let controls = upstream.controls();
            assert_eq!(controls.event_streams_opened(), 0, "stateless: {stateless}");
            assert_eq!(controls.method_count("subscriptions/listen"), 0);
            assert_eq!(controls.method_count("tools/list"), 1);
            assert_eq!(
                controls.requests_received(),
                requests,
                "stateless: {stateless}"
            );
        }
    })
    .await;
}

#[tokio::test]
async fn a_forgotten_session_is_initialized_again_and_a_call_in_it_is_not_re_sent() {
    bounded(async {
        let upstream = start(DemoUpstreamConfig::new().stateless(false)).await;
        let options = UpstreamOptions {
            listen_for_notifications: false,
            ..UpstreamOptions::default()
        };
        let client = client_for(&upstream, options);
        let invalidations = client.invalidations();
        client
            .call_tool("echo", Some(json!({"text": "1"})), None)
            .await
            .unwrap();
        assert_eq!(client.session_id().as_deref(), Some("demo-session-1"));

        upstream.controls().forget_sessions();
        // Idempotent requests are sent again in a new session...
        assert_eq!(client.list_tools().await.unwrap().len(), 3);
        assert_eq!(client.session_id().as_deref(), Some("demo-session-2"));
        assert_eq!(upstream.controls().method_count("initialize"), 2);
        assert_eq!(*invalidations.borrow(), 1);

        // ...a tools/call never is: it was checked for the session it was sent in (docs/design.md
        // §5, "A check is never outrun").
        upstream.controls().forget_sessions();
        let error = client
            .call_tool("echo", Some(json!({"text": "2"})), None)
            .await
            .unwrap_err();
        assert_eq!(
            error,
            UpstreamError::SessionLost {
                url: upstream.url().to_owned()
            }
        );
        assert_eq!(error.reason(), "upstream_unavailable");
        assert_eq!(upstream.controls().method_count("tools/call"), 2);
        assert_eq!(upstream.controls().method_count("initialize"), 2);
        assert_eq!(*invalidations.borrow(), 2);
        // The next call opens a new session.
        let result = client
            .call_tool("echo", Some(json!({"text": "3"})), None)
            .await
            .unwrap();
        assert_eq!(result["content"][0]["text"], "3");
        assert_eq!(client.session_id().as_deref(), Some("demo-session-3"));
        assert_eq!(upstream.controls().method_count("tools/call"), 3);
    })
    .await;
}

#[tokio::test]
async fn connections_are_reused_across_calls() {
    connections_are_reused(&DemoUpstreamConfig::new(), 0).await;
}

#[tokio::test]
async fn an_http2_connection_is_reused_across_calls() {
    connections_are_reused(&http2(), 1).await;
}

/// An HTTP/2 upstream and a client offering it: the same, all in streams of one connection.
fn http2() -> DemoUpstreamConfig {
    let mut config = DemoUpstreamConfig::new();
    config.http2(true);
    config
}

/// `http2_connections`: how many of the upstream's connections are to be HTTP/2.
async fn connections_are_reused(config: &DemoUpstreamConfig, http2_connections: u64) {
    bounded(async {
        let upstream = start(config).await;
        let client = client_for(&upstream, quiet());
        for index in 0..5 {
            let text = index.to_string();
            let result = client
                .clone()
                .call_tool("echo", Some(json!({"text": text})), None)
                .await
                .unwrap();
            assert_eq!(result["content"][0]["text"], json!(index.to_string()));
        }
        assert_eq!(client.connections_made(), 1);
        assert_eq!(upstream.controls().connections_accepted(), 1);
        assert_eq!(upstream.controls().http2_connections(), http2_connections);
        assert_eq!(*client.invalidations().borrow(), 0);
        let observed = client.observed_identity().unwrap();
        assert_eq!(observed.spki_sha256, Some(upstream.spki_fingerprint()));
        assert_eq!(observed.cert_sha256, upstream.cert_fingerprint());
    })
    .await;
}

#[tokio::test]
async fn concurrent_calls_are_streams_of_one_http2_connection() {
    bounded(async {
        let upstream = start(&http2()).await;
        let client = client_for(&upstream, quiet());
        client.list_tools().await.unwrap();
        // Every answer waits, so the calls overlap: over HTTP/1.1 each would need a connection.
        upstream
            .controls()
            .set_delay(Some(Duration::from_millis(200)));
        const CALLS: usize = 16;
        let calls: Vec<_> = (0..CALLS)
            .map(|index| {
                let client = client.clone();
                tokio::spawn(async move {
                    let text = format!("call {index}");
                    client.call_tool("echo", Some(json!({"text": text})), None).await
                })
            })
            .collect();
        for (index, call) in calls.into_iter().enumerate() {
            let result = call.await.unwrap().unwrap();
            assert_eq!(
                result,
                json!({"content": [{"type": "text", "text": format!("call {index}")}], "isError": false, "resultType": "complete"})
            );
        }
        assert_eq!(upstream.controls().method_count("tools/call"), CALLS as u64);
        assert_eq!(client.connections_made(), 1);
        assert_eq!(upstream.controls().connections_accepted(), 1);
        assert_eq!(upstream.controls().handshakes_completed(), 1);
        assert_eq!(upstream.controls().http2_connections(), 1);
        assert_eq!(client.idle_connections(), 1);
        assert_eq!(*client.invalidations().borrow(), 0);
    })
    .await;
}

#[tokio::test]
async fn http1_is_spoken_unless_both_sides_offer_http2() {
    bounded(async {
        // The upstream offers http/1.1 only; the client offers both.
        let upstream = start(&DemoUpstreamConfig::new()).await;
        let client = client_for(&upstream, quiet());
        assert_eq!(client.list_tools().await.unwrap().len(), 3);
        assert_eq!(upstream.controls().handshakes_completed(), 1);
        assert_eq!(upstream.controls().http2_connections(), 0);

        // The upstream offers both; the client is told to speak HTTP/1.1 only.
        let upstream = start(&http2()).await;
        let options = UpstreamOptions {
            offer_http2: false,
            ..quiet()
        };
        let client = client_for(&upstream, options);
        let result = client
            .call_tool("echo", Some(json!({"text": "one"})), None)
            .await
            .unwrap();
        assert_eq!(result["content"][0]["text"], "one");
        assert_eq!(upstream.controls().handshakes_completed(), 1);
        assert_eq!(upstream.controls().http2_connections(), 0);
    })
    .await;
}

#[tokio::test]
async fn names_outside_printable_ascii_travel_base64_in_mcp_name() {
    bounded(async {
        let tools = vec![json!({"name": "wetter-zürich", "inputSchema": {"type": "object"}})];
        let upstream = start(DemoUpstreamConfig::new().tools(tools)).await;
        let client = client_for(&upstream, UpstreamOptions::default());
        let result = client
            .call_tool("wetter-zürich", Some(json!({"q": 1})), None)
            .await
            .unwrap();
        assert_eq!(result["structuredContent"], json!({"q": 1}));
        assert_eq!(
            client.protocol_version(),
            Some(ProtocolVersion::V2026_07_28)
        );
    })
    .await;
}

#[tokio::test]
async fn an_impostor_key_is_refused_in_the_handshake_and_receives_nothing() {
    bounded(async {
        let genuine = DemoIdentity::generate().unwrap();
        let impostor = start(&DemoUpstreamConfig::new()).await;
        let client = UpstreamClient::new(
            &impostor.url().parse().unwrap(),
            pinned_to(genuine.spki_fingerprint()),
            UpstreamOptions::default(),
        );
        let error = client.list_tools().await.unwrap_err();
        assert_eq!(
            error,
            UpstreamError::Identity {
                url: impostor.url().to_owned(),
                error: IdentityError::PinMismatch {
                    mode: RotationMode::KeyPinned,
                    expected: genuine.spki_fingerprint(),
                    backups: Vec::new(),
                    presented: impostor.spki_fingerprint(),
                },
            }
        );
        assert_eq!(error.reason(), "identity_mismatch");
        assert_eq!(impostor.controls().bytes_received(), 0);
        assert_eq!(impostor.controls().handshakes_completed(), 0);
        assert_eq!(impostor.controls().requests_received(), 0);
        assert_eq!(client.observed_identity(), None);
    })
    .await;
}

#[tokio::test]
async fn a_key_switched_at_the_same_address_is_refused_on_the_next_connection() {
    a_key_switched_is_refused_on_the_next_connection(&DemoUpstreamConfig::new()).await;
}

#[tokio::test]
async fn a_key_switched_behind_an_http2_connection_is_refused_on_the_next_one() {
    a_key_switched_is_refused_on_the_next_connection(&http2()).await;
}

async fn a_key_switched_is_refused_on_the_next_connection(config: &DemoUpstreamConfig) {
    bounded(async {
        let upstream = start(config).await;
        let client = client_for(&upstream, quiet());
        client.list_tools().await.unwrap();
        let impostor = DemoIdentity::generate().unwrap();
        upstream.controls().present_identity(&impostor).unwrap();
        // The open connection keeps what its handshake verified; only a new one meets the key.
        client.list_tools().await.unwrap();
        assert_eq!(client.connections_made(), 1);
        upstream.controls().close_connections();
        let received = upstream.controls().bytes_received();
        let error = client.list_tools().await.unwrap_err();
        assert_eq!(error.reason(), "identity_mismatch");
        assert!(matches!(
            error.identity_error(),
            Some(IdentityError::PinMismatch { presented, .. }) if *presented == impostor.spki_fingerprint()
        ));
        assert_eq!(upstream.controls().bytes_received(), received);
    })
    .await;
}

#[tokio::test]
async fn webpki_trust_with_the_demo_ca_and_the_pin_accepts_the_genuine_upstream() {
    bounded(async {
        let upstream = start(&DemoUpstreamConfig::new()).await;
        let mut roots = rustls::RootCertStore::empty();
        roots.add(upstream.identity().ca_der().clone()).unwrap();
        let anchors = ServerAnchors::builder()
            .fingerprint(upstream.spki_fingerprint())
            .tls_trust(TlsTrust::Webpki)
            .build()
            .unwrap();
        let tls = client_config(&anchors, Arc::new(roots), &TrustBundles::new()).unwrap();
        let client = UpstreamClient::new(
            &upstream.url().parse().unwrap(),
            tls,
            UpstreamOptions::default(),
        );
        assert_eq!(client.list_tools().await.unwrap().len(), 3);
    })
    .await;
}

#[tokio::test]
async fn a_slow_upstream_times_out_as_unavailable() {
    bounded(async {
        let upstream = start(&DemoUpstreamConfig::new()).await;
        let options = UpstreamOptions {
            request_timeout: Duration::from_millis(200),
            ..UpstreamOptions::default()
        };
        let client = client_for(&upstream, options);
        client.list_tools().await.unwrap();
        upstream
            .controls()
            .set_fault(Some("tools/call"), Fault::Delay(Duration::from_secs(5)));
        let error = client
            .call_tool("echo", Some(json!({"text": "x"})), None)
            .await
            .unwrap_err();
        assert_eq!(
            error,
            UpstreamError::Timeout {
                url: upstream.url().to_owned(),
                phase: TimeoutPhase::Response,
                timeout: Duration::from_millis(200),
            }
        );
        assert_eq!(error.reason(), "upstream_unavailable");
        // The other methods still answer.
        assert_eq!(client.list_tools().await.unwrap().len(), 3);
    })
    .await;
}

#[tokio::test]
async fn a_connection_closed_mid_call_is_unavailable_and_the_next_call_reconnects() {
    a_connection_closed_mid_call_is_unavailable(&DemoUpstreamConfig::new()).await;
}

#[tokio::test]
async fn an_http2_connection_closed_mid_call_is_unavailable_and_the_call_not_re_sent() {
    a_connection_closed_mid_call_is_unavailable(&http2()).await;
}

async fn a_connection_closed_mid_call_is_unavailable(config: &DemoUpstreamConfig) {
    bounded(async {
        let upstream = start(config).await;
        let client = client_for(&upstream, quiet());
        let invalidations = client.invalidations();
        client.list_tools().await.unwrap();
        upstream.controls().set_fault(Some("tools/call"), Fault::Reset);
        let error = client.call_tool("echo", Some(json!({"text": "x"})), None).await.unwrap_err();
        assert!(
            matches!(&error, UpstreamError::ConnectionClosed { method, .. } if method == "tools/call"),
            "{error:?}"
        );
        assert_eq!(error.reason(), "upstream_unavailable");
        // Received once, and not sent again on another connection.
        assert_eq!(upstream.controls().method_count("tools/call"), 1);
        upstream.controls().clear_fault();
        client.call_tool("echo", Some(json!({"text": "x"})), None).await.unwrap();
        assert_eq!(upstream.controls().method_count("tools/call"), 2);
        assert_eq!(client.connections_made(), 2);
        // A new connection after the first: notifications may have been missed.
        assert_eq!(*invalidations.borrow(), 1);
    })
    .await;
}

#[tokio::test]
async fn a_call_whose_checked_connection_closed_is_not_sent_on_another() {
    a_call_on_a_closed_connection_is_not_sent(&DemoUpstreamConfig::new()).await;
}

#[tokio::test]
async fn a_call_whose_checked_http2_connection_closed_is_not_sent_on_another() {
    a_call_on_a_closed_connection_is_not_sent(&http2()).await;
}

async fn a_call_on_a_closed_connection_is_not_sent(config: &DemoUpstreamConfig) {
    bounded(async {
        let upstream = start(config).await;
        let client = client_for(&upstream, quiet());
        client.list_tools().await.unwrap();
        // The path reuses the idle connection; the upstream then closes it.
        let path = client.call_path().await.unwrap();
        assert_eq!(client.connections_made(), 1);
        upstream.controls().close_connections();
        for _ in 0..500 {
            if path.connection_closed() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(path.connection_closed());
        let error = client
            .call_tool_on(path, "echo", None, None)
            .await
            .unwrap_err();
        assert!(
            matches!(&error, UpstreamError::CallNotSent { url, .. } if url == upstream.url()),
            "{error:?}"
        );
        assert_eq!(error.reason(), "upstream_unavailable");
        // Not on another connection: the upstream never saw the call.
        assert_eq!(upstream.controls().method_count("tools/call"), 0);
        assert_eq!(client.connections_made(), 1);
    })
    .await;
}

#[tokio::test]
async fn a_refused_connection_is_unavailable() {
    bounded(async {
        let port = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            listener.local_addr().unwrap().port()
        };
        let url = format!("https://127.0.0.1:{port}/mcp");
        let genuine = DemoIdentity::generate().unwrap();
        let client = UpstreamClient::new(
            &url.parse().unwrap(),
            pinned_to(genuine.spki_fingerprint()),
            UpstreamOptions::default(),
        );
        let error = client.list_tools().await.unwrap_err();
        assert!(
            matches!(&error, UpstreamError::Connect { url: failed, .. } if *failed == url),
            "{error:?}"
        );
        assert_eq!(error.reason(), "upstream_unavailable");
    })
    .await;
}

#[tokio::test]
async fn malformed_answers_are_upstream_errors_with_what_was_wrong() {
    bounded(async {
        for mode in [ResponseMode::Json, ResponseMode::Sse] {
            let upstream = start(DemoUpstreamConfig::new().response_mode(mode)).await;
            let client = client_for(&upstream, UpstreamOptions::default());
            client.list_tools().await.unwrap();
            let url = upstream.url().to_owned();
            let malformed = |detail: &str| UpstreamError::Malformed {
                url: url.clone(),
                method: "tools/call".to_owned(),
                detail: detail.to_owned(),
            };
            let cases = [
                (
                    Fault::WrongContentType,
                    malformed(
                        "content type `text/plain`; expected application/json or text/event-stream",
                    ),
                ),
                (
                    Fault::SseWithoutResponse,
                    malformed("the event stream ended without a response"),
                ),
                (
                    Fault::HttpStatus(500),
                    UpstreamError::HttpStatus {
                        url: url.clone(),
                        method: "tools/call".to_owned(),
                        status: 500,
                        body: "demo upstream fault".to_owned(),
                    },
                ),
                (
                    Fault::JsonRpcError(-32603, "boom".to_owned()),
                    UpstreamError::JsonRpc {
                        url: url.clone(),
                        method: "tools/call".to_owned(),
                        code: -32603,
                        message: "boom".to_owned(),
                        data: None,
                    },
                ),
            ];
            for (fault, expected) in cases {
                upstream
                    .controls()
                    .set_fault(Some("tools/call"), fault.clone());
                let error = client
                    .call_tool("echo", Some(json!({"text": "x"})), None)
                    .await
                    .unwrap_err();
                assert_eq!(error, expected, "{fault:?}");
                assert_eq!(error.reason(), "upstream_error");
            }
            upstream
                .controls()
                .set_fault(Some("tools/call"), Fault::WrongId);
            let error = client
                .call_tool("echo", Some(json!({"text": "x"})), None)
                .await
                .unwrap_err();
            let UpstreamError::Malformed { detail, .. } = &error else {
                panic!("{error:?}")
            };
            assert!(
                detail.starts_with("the response carries id \"not-"),
                "{detail}"
            );
            for fault in [Fault::NotJson, Fault::DuplicateMember] {
                upstream
                    .controls()
                    .set_fault(Some("tools/call"), fault.clone());
                let error = client
                    .call_tool("echo", Some(json!({"text": "x"})), None)
                    .await
                    .unwrap_err();
                let UpstreamError::Malformed { detail, method, .. } = &error else {
                    panic!("{error:?}")
                };
                assert_eq!(method, "tools/call");
                assert!(
                    detail.starts_with("the message is not valid JSON: "),
                    "{fault:?}: {detail}"
                );
                if fault == Fault::DuplicateMember {
                    assert!(
                        detail.contains("the member name \"result\" twice in one object"),
                        "{detail}"
                    );
                }
            }
            upstream.controls().clear_fault();
            client
                .call_tool("echo", Some(json!({"text": "x"})), None)
                .await
                .unwrap();
        }
    })
    .await;
}

#[tokio::test]
async fn a_response_larger_than_the_limit_is_refused() {
    bounded(async {
        let upstream = start(DemoUpstreamConfig::new().filler_tools(50)).await;
        let options = UpstreamOptions {
            max_response_bytes: 1024,
            ..UpstreamOptions::default()
        };
        let error = client_for(&upstream, options)
            .list_tools()
            .await
            .unwrap_err();
        assert_eq!(
            error,
            UpstreamError::ResponseTooLarge {
                url: upstream.url().to_owned(),
                method: "tools/list".to_owned(),
                limit: 1024,
            }
        );
    })
    .await;
}

#[tokio::test]
async fn tool_errors_answered_by_the_upstream_keep_its_code() {
    bounded(async {
        let upstream = start(&DemoUpstreamConfig::new()).await;
        let client = client_for(&upstream, UpstreamOptions::default());
        let error = client.call_tool("missing", None, None).await.unwrap_err();
        assert_eq!(
            error,
            UpstreamError::JsonRpc {
                url: upstream.url().to_owned(),
                method: "tools/call".to_owned(),
                code: -32602,
                message: "Unknown tool: missing".to_owned(),
                data: None,
            }
        );
        let result = client
            .call_tool("echo", Some(json!({})), None)
            .await
            .unwrap();
        assert_eq!(result["isError"], true);
    })
    .await;
}
