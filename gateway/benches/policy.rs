//! What a Cedar policy costs (docs/design.md §7): one `is_authorized` decision with the example
//! policy (read-only tools for everyone, destructive tools for the `ops` group), allowed and
//! denied, and `tools/list` filtered per principal for a catalog of 100 tools (50 read-only,
//! 50 destructive), through the router as a client's listing is.
//!
//! `cargo bench -p toolgate --bench policy`

#![allow(clippy::unwrap_used, clippy::expect_used)]
// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use catalog_store::Catalog;
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Map, Value, json};
use server_identity::rustls::RootCertStore;
use toolgate::audit::AuditLog;
use toolgate::auth::{Principal, ToolPolicy};
use toolgate::router::{Router, RouterOptions};

const EXAMPLE_POLICY: &str = include_str!("../../examples/policy.cedar");
const PROTOCOL: &str = "2025-06-18";
const TOOLS: usize = 100;

/// A catalog of `TOOLS` tools on one pinned server, every other one destructive.
fn catalog() -> Catalog {
    let entries: Vec<Value> = (0..TOOLS)
        .map(|index| {
            let read_only = index % 2 == 0;
            let definition = json!({
                "name": format!("tool_{index:03}"),
                "description": format!("Bench tool {index}."),
                "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
                "annotations": if read_only {
                    json!({"readOnlyHint": true})
                } else {
                    json!({"destructiveHint": true})
                },
            });
            let server = json!({
                "display_name": "bench upstream",
                "url": "https://127.0.0.1:8443/mcp",
                "tls_fingerprint": format!("SHA256:{}", "ab".repeat(32)),
                "rotation_mode": "key-pinned",
                "tls_trust": "pin",
            });
            toolgate_testkit::approved_entry(&format!("bench.tool_{index:03}"), &definition, server)
                .unwrap()
        })
        .collect();
    Catalog::from_slice(jcs_digest::order::to_string(&Value::Array(entries)).as_bytes()).unwrap()
}

fn user(subject: &str, groups: &[&str]) -> Principal {
    let mut claims = Map::new();
    claims.insert("iss".into(), json!("https://auth.example"));
    claims.insert("aud".into(), json!("https://gateway.example/mcp"));
    claims.insert("exp".into(), json!(4_102_444_800_i64));
    claims.insert("scope".into(), json!("tools"));
    claims.insert("groups".into(), json!(groups));
    Principal::User {
        subject: subject.to_owned(),
        scopes: vec!["tools".to_owned()],
        claims,
    }
}

fn policy(c: &mut Criterion) {
    let catalog = catalog();
    let policy = ToolPolicy::from_text(EXAMPLE_POLICY, "examples/policy.cedar").unwrap();
    let alice = user("alice", &["ops"]);
    let bob = user("bob", &["dev"]);
    let destructive = &catalog.entries()[1];
    assert!(policy.decide(&alice, destructive, PROTOCOL).allowed);
    assert!(!policy.decide(&bob, destructive, PROTOCOL).allowed);

    let mut group = c.benchmark_group("policy_decision");
    group.measurement_time(Duration::from_secs(3));
    group.bench_function("allowed", |b| {
        b.iter(|| black_box(policy.decide(black_box(&alice), destructive, PROTOCOL)));
    });
    group.bench_function("denied", |b| {
        b.iter(|| black_box(policy.decide(black_box(&bob), destructive, PROTOCOL)));
    });
    group.finish();

    // tools/list as the gateway answers a client: the router's listing, filtered per principal.
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("toolgate-policy-bench");
    std::fs::create_dir_all(&dir).unwrap();
    let audit_path = dir.join("audit.jsonl");
    let _ = std::fs::remove_file(&audit_path);
    let audit = Arc::new(AuditLog::open(&audit_path, catalog.measurement()).unwrap());
    let mut options = RouterOptions::new(Arc::new(RootCertStore::empty()));
    options.policy = Some(Arc::new(policy));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let _inside = runtime.enter();
    let router = Router::new(catalog, options, audit).unwrap();
    assert_eq!(
        router.listed_tools_for(&alice, PROTOCOL).unwrap().len(),
        TOOLS
    );
    assert_eq!(
        router.listed_tools_for(&bob, PROTOCOL).unwrap().len(),
        TOOLS / 2
    );

    let mut group = c.benchmark_group("policy_tools_list_100");
    group.measurement_time(Duration::from_secs(3));
    group.bench_function("ops_member_sees_100", |b| {
        b.iter(|| black_box(router.listed_tools_for(black_box(&alice), PROTOCOL)));
    });
    group.bench_function("other_sees_50", |b| {
        b.iter(|| black_box(router.listed_tools_for(black_box(&bob), PROTOCOL)));
    });
    group.finish();
}

criterion_group!(benches, policy);
criterion_main!(benches);
