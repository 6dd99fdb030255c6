//! What reading the JSON-RPC messages of one `tools/call` costs the gateway
//! (`Message::from_slice`: the whole message checked, the pass-through parts kept as bytes, the
//! other members read): the client's request and the upstream's answer of an echo call like
//! the load harness's, and a request with a string id, a `_meta` object and an escaped name.
//!
//! `cargo bench -p toolgate --bench message`

#![allow(clippy::unwrap_used, clippy::expect_used)]
// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

use criterion::{Criterion, criterion_group, criterion_main};
use toolgate::mcp::Message;

const MESSAGES: [(&str, &str); 3] = [
    (
        "call_request",
        r#"{"jsonrpc":"2.0","id":12345,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello from the load harness"}}}"#,
    ),
    (
        "call_answer",
        r#"{"jsonrpc":"2.0","id":12345,"result":{"content":[{"type":"text","text":"hello from the load harness"}],"isError":false}}"#,
    ),
    (
        "call_request_meta_escaped",
        r#"{"jsonrpc":"2.0","id":"req-\u0031","method":"tools/call","params":{"name":"ech\u006f","_meta":{"progressToken":7},"arguments":{"text":"hi"}}}"#,
    ),
];

fn messages(c: &mut Criterion) {
    let mut group = c.benchmark_group("message");
    for (name, text) in MESSAGES {
        assert!(Message::from_slice(text.as_bytes()).is_ok(), "{name}");
        group.bench_function(name, |b| {
            b.iter(|| Message::from_slice(std::hint::black_box(text.as_bytes())))
        });
    }
    group.finish();
}

criterion_group!(benches, messages);
criterion_main!(benches);
