//! Throughput of the strict reader, the canonicalizer and the per-tool digest on the
//! deterministic generated catalogs of `bench/catalog_gen.rs` (10, 1,000 and 10,000 tools).
//!
//! Groups per size: `serde_json` (baseline: `from_slice::<Value>` + `to_vec` of the whole
//! document), `digest_every_tool` (ours: `parse_strict` + `tool_definition_digest` of every
//! tool), `parse_strict` alone and `canonicalize` alone. The goal is
//! `digest_every_tool` ≤ 2 × `serde_json`. The streaming path: `stream_every_tool`
//! (`StreamReader::tool_definitions`, two halves on two threads for large arrays),
//! `stream_one_thread` (`tool_definition` element by element), `stream_canonical_digest`
//! (SHA-256 of the whole document's canonical bytes), and `sha256` of the input bytes for scale.

#![allow(clippy::unwrap_used, clippy::expect_used)]
// `criterion_main!` generates an undocumented `pub fn main`.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use jcs_digest::{
    Digest, Profile, StreamReader, canonical_digest, canonicalize, parse_strict,
    tool_definition_digest,
};
use serde_json::Value;

#[path = "../../bench/catalog_gen.rs"]
mod catalog_gen;

fn catalogs(c: &mut Criterion) {
    for size in [10usize, 1_000, 10_000] {
        let document = catalog_gen::generate_catalog(size);
        let bytes = document.as_bytes();
        let parsed = parse_strict(bytes).unwrap();
        let tools = parsed.as_array().unwrap();
        assert_eq!(tools.len(), size);

        let mut group = c.benchmark_group(format!("catalog_{size}"));
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        if size >= 10_000 {
            group.sample_size(10);
        }
        group.bench_function(BenchmarkId::new("serde_json", size), |b| {
            b.iter(|| {
                let value: Value = serde_json::from_slice(black_box(bytes)).unwrap();
                serde_json::to_vec(&value).unwrap()
            })
        });
        group.bench_function(BenchmarkId::new("digest_every_tool", size), |b| {
            b.iter(|| {
                let value = parse_strict(black_box(bytes)).unwrap();
                let tools = value.as_array().unwrap();
                tools
                    .iter()
                    .map(|tool| tool_definition_digest(tool, Profile::Trace).unwrap())
                    .collect::<Vec<_>>()
            })
        });
        group.bench_function(BenchmarkId::new("stream_every_tool", size), |b| {
            b.iter(|| {
                let mut reader = StreamReader::new(black_box(bytes));
                let tools = reader.tool_definitions(Profile::Trace).unwrap();
                reader.finish().unwrap();
                tools
            })
        });
        group.bench_function(BenchmarkId::new("stream_one_thread", size), |b| {
            b.iter(|| {
                let mut reader = StreamReader::new(black_box(bytes));
                let mut tools = Vec::with_capacity(size);
                reader.enter_array().unwrap();
                while reader.next_element().unwrap() {
                    tools.push(reader.tool_definition(Profile::Trace).unwrap());
                }
                reader.finish().unwrap();
                tools
            })
        });
        group.bench_function(BenchmarkId::new("stream_canonical_digest", size), |b| {
            b.iter(|| canonical_digest(black_box(bytes)).unwrap())
        });
        group.bench_function(BenchmarkId::new("sha256", size), |b| {
            b.iter(|| Digest::of(black_box(bytes)))
        });
        group.bench_function(BenchmarkId::new("parse_strict", size), |b| {
            b.iter(|| parse_strict(black_box(bytes)).unwrap())
        });
        group.bench_function(BenchmarkId::new("canonicalize", size), |b| {
            b.iter(|| canonicalize(black_box(&parsed)).unwrap())
        });
        group.finish();
    }
}

criterion_group!(benches, catalogs);
criterion_main!(benches);
