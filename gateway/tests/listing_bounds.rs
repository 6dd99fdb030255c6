//! Listings are bounded (docs/design.md §5): a byte budget across all pages, an overall deadline
//! (by default the upstream request timeout), a repeated `nextCursor`, and a deadline for every
//! check waiting on a listing; each bound broken is an `upstream_error` naming the bound.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use server_identity::{ServerAnchors, TlsTrust, TrustBundles, client_config};
use toolgate::mcp::ProtocolVersion;
use toolgate::upstream::{TimeoutPhase, UpstreamClient, UpstreamError, UpstreamOptions};
use toolgate_testkit::{DemoUpstream, DemoUpstreamConfig, RunningUpstream};

use crate::e2e_support::{Harness, Setup, call_entries, denial, run};

fn client_for(upstream: &RunningUpstream, options: UpstreamOptions) -> UpstreamClient {
    let anchors = ServerAnchors::builder()
        .fingerprint(upstream.spki_fingerprint())
        .tls_trust(TlsTrust::Pin)
        .build()
        .unwrap();
    let tls = client_config(
        &anchors,
        Arc::new(rustls::RootCertStore::empty()),
        &TrustBundles::new(),
    )
    .unwrap();
    UpstreamClient::with_anchors(&upstream.url().parse().unwrap(), tls, anchors, options)
}

fn quiet(adjust: impl FnOnce(&mut UpstreamOptions)) -> UpstreamOptions {
    let mut options = UpstreamOptions {
        listen_for_notifications: false,
        ..UpstreamOptions::default()
    };
    adjust(&mut options);
    options
}

#[test]
fn the_byte_budget_covers_all_pages_together() {
    run(async {
        // One tool per page, each page padded to about 10 kB: three fit in 35 000 bytes.
        let mut config = DemoUpstreamConfig::new();
        config.filler_tools(7).page_size(1).page_padding(10_000);
        let upstream = DemoUpstream::start(&config).await.unwrap();
        let client = client_for(&upstream, quiet(|o| o.max_listing_bytes = 35_000));
        let error = client.list_tools().await.unwrap_err();
        let UpstreamError::ListingTooLarge {
            url,
            limit,
            pages,
            bytes,
        } = &error
        else {
            panic!("expected ListingTooLarge, got {error:?}");
        };
        assert_eq!((url.as_str(), *limit, *pages), (upstream.url(), 35_000, 3));
        assert!((30_000..=35_000).contains(bytes), "{bytes}");
        assert_eq!(error.reason(), "upstream_error");
        assert_eq!(upstream.controls().method_count("tools/list"), 4);
        // Within the budget the same listing is read whole.
        let client = client_for(&upstream, quiet(|o| o.max_listing_bytes = 200_000));
        assert_eq!(client.list_tools().await.unwrap().len(), 10);
    });
}

/// The peak resident memory of this process, from /proc (Linux), in bytes.
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[test]
fn a_hundred_pages_of_ten_mebibytes_stop_at_the_default_budget_in_bounded_memory() {
    run(async {
        const MIB: usize = 1024 * 1024;
        let mut config = DemoUpstreamConfig::new();
        config.filler_tools(97).page_size(1).page_padding(10 * MIB);
        let upstream = DemoUpstream::start(&config).await.unwrap();
        let client = client_for(&upstream, quiet(|_| {}));
        let error = client.list_tools().await.unwrap_err();
        assert!(
            matches!(
                error,
                UpstreamError::ListingTooLarge {
                    limit,
                    pages: 3,
                    ..
                } if limit == 32 * MIB
            ),
            "{error:?}"
        );
        // Three pages read whole and the fourth up to the budget: not the gigabyte a hundred
        // pages would take (this process also holds the upstream's own pages).
        if let Some(peak) = peak_rss() {
            assert!(peak < 512 * MIB as u64, "peak RSS {peak} bytes");
        }
    });
}

#[test]
fn a_slow_listing_ends_at_its_deadline_which_defaults_to_the_request_timeout() {
    run(async {
        // Every page answers within the request timeout; the whole listing does not.
        let mut config = DemoUpstreamConfig::new();
        config
            .filler_tools(7)
            .page_size(1)
            .page_delay(Duration::from_millis(150));
        let upstream = DemoUpstream::start(&config).await.unwrap();
        let deadline = Duration::from_millis(400);
        for options in [
            quiet(|o| o.request_timeout = deadline),
            quiet(|o| o.listing_timeout = Some(deadline)),
        ] {
            let client = client_for(&upstream, options);
            let started = Instant::now();
            let error = client.list_tools().await.unwrap_err();
            assert!(started.elapsed() >= deadline);
            let UpstreamError::ListingTimeout {
                deadline: reported,
                pages,
                ..
            } = &error
            else {
                panic!("expected ListingTimeout, got {error:?}");
            };
            assert_eq!(*reported, deadline);
            assert!(*pages < 10, "{pages}");
            assert_eq!(error.reason(), "upstream_error");
        }
    });
}

/// A first page that does not come back within the request timeout is the upstream not
/// answering (unavailable) whichever timer fires first; a shorter listing deadline that passes
/// before any page is the listing's bound (upstream_error).
#[test]
fn a_listing_with_no_page_back_is_a_request_timeout_unless_its_own_deadline_is_shorter() {
    run(async {
        let mut config = DemoUpstreamConfig::new();
        config.page_delay(Duration::from_secs(5));
        let upstream = DemoUpstream::start(&config).await.unwrap();
        let short = Duration::from_millis(300);
        let url = upstream.url();
        let error = client_for(&upstream, quiet(|o| o.request_timeout = short))
            .list_tools()
            .await
            .unwrap_err();
        assert_eq!(
            error,
            UpstreamError::Timeout {
                url: url.to_owned(),
                phase: TimeoutPhase::Response,
                timeout: short,
            }
        );
        assert_eq!(error.reason(), "upstream_unavailable");
        assert_eq!(
            error.to_string(),
            format!(
                "upstream {url} is unavailable: no answer within 300 ms; the upstream is slow or \
                 hung (raise the timeout if it is expected to be this slow)"
            )
        );

        let error = client_for(&upstream, quiet(|o| o.listing_timeout = Some(short)))
            .list_tools()
            .await
            .unwrap_err();
        assert_eq!(
            error,
            UpstreamError::ListingTimeout {
                url: url.to_owned(),
                deadline: short,
                pages: 0,
            }
        );
        assert_eq!(error.reason(), "upstream_error");
    });
}

#[test]
fn a_repeated_cursor_stops_the_listing() {
    run(async {
        let mut config = DemoUpstreamConfig::new();
        config.repeat_cursor(true);
        let upstream = DemoUpstream::start(&config).await.unwrap();
        let error = client_for(&upstream, quiet(|_| {}))
            .list_tools()
            .await
            .unwrap_err();
        assert_eq!(
            error,
            UpstreamError::RepeatedCursor {
                url: upstream.url().to_owned(),
                cursor: "page-1".to_owned(),
                page: 2,
                first: 1,
            }
        );
        assert_eq!(error.reason(), "upstream_error");
        assert_eq!(upstream.controls().method_count("tools/list"), 2);
    });
}

#[test]
fn a_call_waiting_on_a_listing_that_breaks_a_bound_is_an_upstream_error_naming_it() {
    run(async {
        let mut setup = Setup::new();
        setup.upstream_options.max_listing_bytes = 20_000;
        let harness = Harness::start(setup).await;
        let controls = harness.upstream.controls();
        let mut client = harness.client(ProtocolVersion::V2026_07_28).await;

        controls.set_repeat_cursor(true);
        let answer = client
            .call_tool("demo.echo", json!({"text": "a"}))
            .await
            .unwrap();
        assert_eq!(denial(&answer), (-32004, "upstream_error".to_owned()));
        let message = answer.unwrap_err().message;
        assert!(
            message.contains(
                "repeated the tools/list cursor \"page-1\" on page 2 (first given on page 1)"
            ),
            "{message}"
        );

        controls.set_repeat_cursor(false);
        controls.set_page_padding(30_000);
        let answer = client
            .call_tool("demo.echo", json!({"text": "a"}))
            .await
            .unwrap();
        assert_eq!(denial(&answer), (-32004, "upstream_error".to_owned()));
        let message = answer.unwrap_err().message;
        assert!(
            message.contains(
                "sent a tools/list larger than the listing budget of 20000 bytes: 0 pages (0 bytes)"
            ),
            "{message}"
        );
        let calls = call_entries(&harness.audit_entries());
        assert_eq!(calls.len(), 2);
        assert!(
            calls
                .iter()
                .all(|entry| entry["decision"] == "upstream_error")
        );
        assert_eq!(controls.method_count("tools/call"), 0);
        harness.stop().await;
    });
}
