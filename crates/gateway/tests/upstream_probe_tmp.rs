//! Temporary timing probe (removed before the report).
use std::sync::Arc;
use std::time::{Duration, Instant};

use gateway::demo_upstream::{DemoUpstream, DemoUpstreamConfig};
use gateway::upstream::{UpstreamClient, UpstreamOptions};
use serde_json::json;
use server_identity::{ServerAnchors, TlsTrust, TrustBundles, client_config};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe() {
    let upstream = DemoUpstream::start(&DemoUpstreamConfig::new())
        .await
        .unwrap();
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
    let client = UpstreamClient::new(upstream.url(), tls, UpstreamOptions::default()).unwrap();
    client.list_tools().await.unwrap();
    for method in ["call", "list"] {
        let mut samples = Vec::new();
        for _ in 0..3000 {
            let start = Instant::now();
            if method == "call" {
                client
                    .call_tool("echo", Some(json!({"text": "hi"})), None)
                    .await
                    .unwrap();
            } else {
                client.list_tools().await.unwrap();
            }
            samples.push(start.elapsed());
        }
        samples.sort();
        println!(
            "{method}: p50 {:?} p90 {:?} p99 {:?}",
            samples[1500], samples[2700], samples[2970]
        );
    }
    // Concurrency: 32 tasks x 500 calls.
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..32 {
        let client = client.clone();
        tasks.push(tokio::spawn(async move {
            for _ in 0..500 {
                client
                    .call_tool("echo", Some(json!({"text": "hi"})), None)
                    .await
                    .unwrap();
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let elapsed = start.elapsed();
    println!(
        "32x500 calls: {:?} = {:.0}/s, connections {}",
        elapsed,
        16000.0 / elapsed.as_secs_f64(),
        client.connections_made()
    );
    let _ = Duration::ZERO;
}
