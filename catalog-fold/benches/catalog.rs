//! End-to-end catalog digest (strict read + per-tool digests + fold) against the baseline of
//! plain serde_json parsing and re-serializing, on generated catalogs of 10, 1,000 and 10,000
//! tools; and the streaming document path (`CatalogDigest::from_document`: no `Value` tree).
//!
//! `cargo bench -p catalog-fold --bench catalog -- --warm-up-time 1 --measurement-time 3`
#![allow(clippy::unwrap_used, clippy::expect_used)]
// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

#[path = "../../bench/catalog_gen.rs"]
mod catalog_gen;

use std::hint::black_box;

use catalog_fold::{CatalogDigest, read_tools_document};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use jcs_digest::Profile;

fn catalog(c: &mut Criterion) {
    for n in [10, 1_000, 10_000] {
        let document = catalog_gen::generate_catalog(n);
        let bytes = document.as_bytes();
        let mut group = c.benchmark_group(format!("catalog/{n}"));
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        if n == 10_000 {
            group.sample_size(20);
        }
        group.bench_function("read_tools_document+CatalogDigest::compute", |b| {
            b.iter(|| {
                let tools = read_tools_document(black_box(bytes)).unwrap();
                CatalogDigest::compute(&tools, Profile::Trace)
                    .unwrap()
                    .catalog()
            });
        });
        group.bench_function("CatalogDigest::from_document (streaming)", |b| {
            b.iter(|| {
                CatalogDigest::from_document(black_box(bytes), Profile::Trace)
                    .unwrap()
                    .catalog()
            });
        });
        group.bench_function("baseline serde_json from_slice+to_vec", |b| {
            b.iter(|| {
                let value: serde_json::Value = serde_json::from_slice(black_box(bytes)).unwrap();
                serde_json::to_vec(&value).unwrap()
            });
        });
        group.finish();
    }
}

criterion_group!(benches, catalog);
criterion_main!(benches);
