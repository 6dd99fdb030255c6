//! Loading and validating a generated 10,000-entry catalog with realistic definitions.
//!
//! The definitions come from the shared generator (`bench/catalog_gen.rs`: nested schemas,
//! enums, fractional and exponent numbers, non-ASCII text); each tool becomes an entry on one of
//! 40 servers (every fourth with a SPIFFE ID as well as a fingerprint, every tenth with a backup
//! fingerprint), with its `definition_hash` precomputed. The measured step is
//! `Catalog::from_slice`: strict parse, schema, anchors, URLs, RFC 3339, one definition digest
//! per entry, collisions, warnings, index and measurement.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

// Shared with other benches and xtask; `cargo fmt -p catalog-store` must not reformat it.
#[rustfmt::skip]
#[path = "../../bench/catalog_gen.rs"]
mod catalog_gen;

// The catalog file: entries over `catalog_entries::SERVERS` servers (shared with the unit
// tests that compare the one- and two-thread loads).
#[path = "support/catalog_entries.rs"]
mod catalog_entries;

use std::hint::black_box;

use catalog_entries::{SERVERS, catalog_bytes};
use catalog_store::Catalog;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use jcs_digest::{Profile, tool_definition_digest};
use serde_json::Value;

fn load(c: &mut Criterion) {
    let mut group = c.benchmark_group("catalog_load");
    for n in [100, 10_000] {
        let bytes = catalog_bytes(n);
        // Sanity: the generated catalog is valid and has no warnings.
        let catalog = Catalog::from_slice(&bytes).unwrap();
        assert_eq!(catalog.entries().len(), n);
        assert_eq!(catalog.servers().len(), SERVERS.min(n));
        assert!(
            catalog.warnings().is_empty(),
            "{:?}",
            catalog.warnings().first()
        );
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function(format!("from_slice/{n}_entries"), |b| {
            b.iter(|| Catalog::from_slice(black_box(&bytes)).unwrap())
        });
    }
    group.finish();

    // For comparison: reading the same 10,000-entry bytes without validating them.
    let bytes = catalog_bytes(10_000);
    let mut group = c.benchmark_group("catalog_parse_only");
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("jcs_digest_parse_strict/10000_entries", |b| {
        b.iter(|| jcs_digest::parse_strict(black_box(&bytes)).unwrap())
    });
    group.bench_function("serde_json_from_slice/10000_entries", |b| {
        b.iter(|| serde_json::from_slice::<Value>(black_box(&bytes)).unwrap())
    });
    group.finish();

    // For comparison: the 10,000 definition digests alone (the other unavoidable cost).
    let catalog = Catalog::from_slice(&bytes).unwrap();
    let definitions: Vec<&Value> = catalog
        .entries()
        .iter()
        .map(|e| e.approved_definition())
        .collect();
    c.bench_function("catalog_definition_digests_only/10000_entries", |b| {
        b.iter(|| {
            for definition in &definitions {
                black_box(tool_definition_digest(black_box(definition), Profile::Trace).unwrap());
            }
        })
    });

    let catalog = Catalog::from_slice(&catalog_bytes(10_000)).unwrap();
    let names: Vec<String> = catalog
        .entries()
        .iter()
        .map(|e| e.tool_name().to_owned())
        .collect();
    c.bench_function("catalog_lookup/10000_entries", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 7919) % names.len();
            black_box(catalog.lookup(black_box(&names[i])))
        })
    });
}

criterion_group!(benches, load);
criterion_main!(benches);
