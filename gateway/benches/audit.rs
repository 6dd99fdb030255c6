//! Audit log throughput: records per second with group commit, each record written and
//! `fdatasync`ed before it returns, at 1, 16 and 256 concurrent writers, on a real file under
//! the target directory.
//!
//! `cargo bench -p toolgate --bench audit`

#![allow(clippy::unwrap_used, clippy::expect_used)]
// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use jcs_digest::Digest;
use serde_json::json;
use toolgate::audit::{AuditLog, CallRecord, Decision, DenialReason, arguments_digest};

fn record(i: u64) -> CallRecord {
    CallRecord {
        upstream_name: Some("ask_wiki_question".into()),
        upstream_url: Some("https://127.0.0.1:8443/mcp".into()),
        expected_definition: Some(Digest::of(b"approved")),
        observed_definition: Some(Digest::of(b"approved")),
        detail: "forwarded".to_owned(),
        arguments: Some(arguments_digest(&json!({"question": i})).unwrap().into()),
        session_id: Some("0f4c1b2e-session".to_owned()),
        request_id: Some(json!(i)),
        latency: Duration::from_micros(250),
        ..CallRecord::new(
            "wiki.ask",
            if i % 10 == 0 {
                Decision::Denied(DenialReason::DefinitionMismatch)
            } else {
                Decision::Allowed
            },
        )
    }
}

fn group_commit(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("toolgate-audit-bench");
    std::fs::create_dir_all(&dir).unwrap();
    let mut group = c.benchmark_group("audit_record");
    group
        .throughput(Throughput::Elements(1))
        .sample_size(10)
        .measurement_time(Duration::from_secs(8));
    for writers in [1u64, 16, 256] {
        let path = dir.join(format!("writers-{writers}.jsonl"));
        let _ = std::fs::remove_file(&path);
        let log = Arc::new(AuditLog::open(&path, &bench_measurement()).unwrap());
        group.bench_with_input(
            BenchmarkId::from_parameter(writers),
            &writers,
            |b, &writers| {
                b.iter_custom(|records| {
                    let log = Arc::clone(&log);
                    runtime.block_on(async move {
                        let per_writer = records.div_ceil(writers);
                        let start = Instant::now();
                        let tasks: Vec<_> = (0..writers)
                            .map(|w| {
                                let log = Arc::clone(&log);
                                tokio::spawn(async move {
                                    for i in 0..per_writer {
                                        log.record(record(w * per_writer + i)).await.unwrap();
                                    }
                                })
                            })
                            .collect();
                        for task in tasks {
                            task.await.unwrap();
                        }
                        // Scaled to the records asked for (the last writer may do a few more).
                        start
                            .elapsed()
                            .mul_f64(records as f64 / (per_writer * writers) as f64)
                    })
                });
            },
        );
        let (entries, syncs) = (log.entries_written(), log.syncs());
        runtime.block_on(log.shutdown());
        eprintln!(
            "writers={writers}: {entries} entries, {syncs} syncs ({:.1} entries per sync)",
            entries as f64 / syncs as f64
        );
    }
    group.finish();
}

criterion_group!(benches, group_commit);
criterion_main!(benches);

/// The measurement of a one-entry catalog (catalog-store's crate example).
fn bench_measurement() -> catalog_store::CatalogMeasurement {
    let catalog = br#"[{
        "tool_name": "crm.query", "upstream_name": "query",
        "server": {"url": "https://crm.example.com/mcp",
                   "tls_fingerprint": "SHA256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"},
        "approved_definition": {"description": "Query CRM records", "input_schema": {"type": "object"}},
        "definition_hash": "sha256:d27e33c778705256484428f8af088870389f4e23b9cd2265971c03d9142f38d8",
        "added_at": "2026-06-01T00:00:00Z", "approved_by": "security@example.com"
    }]"#;
    catalog_store::Catalog::from_slice(catalog)
        .unwrap()
        .measurement()
        .clone()
}
