//! What the gateway spends on one upstream `tools/list` answer once its bytes are in (the part of
//! a `per-call` check that grows with the listing): the JSON-RPC message checked and its
//! `result` found (`Message::from_slice`), then the page read strictly with every tool digested
//! (`ListedTools::read_page`), or found in the upstream's `PageMemo` by comparing its bytes
//! (`read_page_remembered`, the page served again byte for byte, as an unchanged upstream's is).
//! Listings: the demo upstream's three tools, and 100 and 1,000 tools of `bench/catalog_gen.rs`
//! (nested schemas, escapes, non-ASCII text), after them.
//!
//! `cargo bench -p toolgate --bench listing`

#![allow(clippy::unwrap_used, clippy::expect_used)]
// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use toolgate::definition_check::{ListedTools, PageMemo};
use toolgate::mcp::{Message, ResponsePayload};

#[path = "../../bench/catalog_gen.rs"]
mod catalog_gen;

/// The demo upstream's tools, as it serves them.
const DEMO_TOOLS: &str = r#"{"name":"echo","title":"Echo","description":"Returns the given text unchanged.","inputSchema":{"type":"object","properties":{"text":{"type":"string","description":"The text to return."}},"required":["text"]},"annotations":{"readOnlyHint":true}},{"name":"add","title":"Add","description":"Adds two numbers.","inputSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]},"outputSchema":{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]},"annotations":{"readOnlyHint":true}},{"name":"get_time","title":"Get time","description":"Returns the demo clock's time, which is always 2026-01-01T00:00:00Z.","inputSchema":{"type":"object","properties":{}},"annotations":{"readOnlyHint":true,"idempotentHint":true}}"#;

/// A `tools/list` answer holding the demo tools and `generated` tools after them.
fn answer(generated: usize) -> Vec<u8> {
    let mut tools = DEMO_TOOLS.to_owned();
    if generated > 0 {
        let more = catalog_gen::generate_catalog(generated);
        let inner = more.trim().trim_start_matches('[').trim_end_matches(']');
        tools.push(',');
        tools.push_str(inner);
    }
    format!(r#"{{"jsonrpc":"2.0","id":7,"result":{{"tools":[{tools}]}}}}"#).into_bytes()
}

/// The listing's tools from the answer, read through `memo` when one is given.
fn listing(answer: &[u8], memo: Option<&PageMemo>) -> ListedTools {
    let Ok(Message::Response(response)) = Message::from_slice(answer) else {
        panic!("not a response");
    };
    let ResponsePayload::Result(result) = response.payload else {
        panic!("not a result");
    };
    let mut listed = ListedTools::new();
    match memo {
        Some(memo) => listed.read_page_remembered(result.as_bytes(), memo),
        None => listed.read_page(result.as_bytes()),
    }
    .unwrap();
    listed
}

fn bench(c: &mut Criterion) {
    for (label, generated) in [("demo", 0), ("demo_and_100", 100), ("demo_and_1000", 1000)] {
        let answer = answer(generated);
        let mut group = c.benchmark_group(format!("listing/{label}"));
        group.throughput(Throughput::Bytes(answer.len() as u64));
        if generated >= 1000 {
            group.sample_size(20);
        }
        group.bench_function("message", |b| {
            b.iter(|| Message::from_slice(std::hint::black_box(&answer)).unwrap())
        });
        group.bench_function("read", |b| {
            b.iter(|| listing(std::hint::black_box(&answer), None))
        });
        // The first read fills the memo; the second, like every timed one, is taken from it.
        let memo = PageMemo::new();
        assert_eq!(listing(&answer, Some(&memo)).len(), 3 + generated);
        assert_eq!(listing(&answer, Some(&memo)).len(), 3 + generated);
        assert_eq!(memo.pages_reused(), 1);
        group.bench_function("remembered", |b| {
            b.iter(|| listing(std::hint::black_box(&answer), Some(&memo)))
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
