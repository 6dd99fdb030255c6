//! `digest_in_chunks` beyond what `support::read_both` checks on every document: the depth
//! limit at each of the three places a tools array can be, documents whose tools array the
//! chunked path cannot tell apart from another, a real file, a source shorter than it said,
//! read errors, keys shared by the two parts, a second part guessed inside a tool, and tools
//! without a key.

use std::io;

use catalog_fold::{CatalogDigest, Chunked, DEFAULT_CHUNK, ReadAt, digest_in_chunks};
use jcs_digest::{Profile, StrictReader};
use serde_json::json;

use crate::support::{CHUNKS, chunked, read_both};

/// A tool whose input schema nests arrays `levels` deep.
fn deep_tool(levels: usize) -> String {
    format!(
        r#"{{"name":"deep","inputSchema":{}1{}}}"#,
        "[".repeat(levels),
        "]".repeat(levels)
    )
}

/// The tools array (holding `tools`) as a whole document, a `tools/list` result and a JSON-RPC
/// response, with the number of containers around each element.
fn shapes(tools: &str) -> [(String, usize); 3] {
    [
        (format!("[{tools}]"), 1),
        (format!(r#"{{"tools":[{tools}]}}"#), 2),
        (
            format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"tools":[{tools}]}}}}"#),
            3,
        ),
    ]
}

/// An element nested exactly to the depth limit is read in chunks; one level more is left to
/// the in-memory path, which refuses it.
#[test]
fn the_depth_limit_counts_the_containers_around_the_tools() {
    let limit = StrictReader::DEFAULT_MAX_DEPTH;
    for around in 1..=3 {
        // The tool object itself is one level; the schema's arrays the others.
        let at_limit = shapes(&deep_tool(limit - around - 1));
        let (document, depth) = &at_limit[around - 1];
        assert_eq!(*depth, around);
        let whole = CatalogDigest::from_document(document.as_bytes(), Profile::Trace).unwrap();
        read_both(document.as_bytes()).unwrap();
        for chunk in CHUNKS {
            assert_eq!(
                chunked(document.as_bytes(), Profile::Trace, chunk),
                Chunked::Digest(whole.clone()),
                "{around} around, chunk {chunk}"
            );
        }
        let past = shapes(&deep_tool(limit - around));
        let (document, _) = &past[around - 1];
        assert!(CatalogDigest::from_document(document.as_bytes(), Profile::Trace).is_err());
        for chunk in CHUNKS {
            assert_eq!(
                chunked(document.as_bytes(), Profile::Trace, chunk),
                Chunked::WholeDocument,
                "{around} around, chunk {chunk}"
            );
        }
    }
}

/// A JSON-RPC response with a `tools` member before its `result`: the chunked path reads the
/// first array, the document's shape picks the other, so the stand-in is not where the
/// in-memory read looks and the whole document is read instead. Even a document that names
/// its tools like a stand-in cannot make the two disagree.
#[test]
fn a_tools_array_the_shape_does_not_pick_is_left_to_the_in_memory_path() {
    let documents = [
        r#"{"jsonrpc": "2.0", "id": 1, "tools": [{"name": "decoy"}], "result": {"tools": [{"name": "real"}]}}"#,
        r#"{"tools": [{"name": "toolgate-chunk-stand-in-00000000000000000000000000000000"}], "jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "real"}]}}"#,
    ];
    for text in documents {
        read_both(text.as_bytes()).unwrap();
        let whole = CatalogDigest::from_document(text.as_bytes(), Profile::Trace).unwrap();
        assert_eq!(whole.tools().len(), 1);
        assert_eq!(whole.tools().keys().next().unwrap().as_str(), "tool:real");
        for chunk in CHUNKS {
            assert_eq!(
                chunked(text.as_bytes(), Profile::Trace, chunk),
                Chunked::WholeDocument,
                "chunk {chunk}: {text}"
            );
        }
    }
    // A member name written with an escape is the same name to both paths.
    let escaped = br#"{"t\u006fols": [{"name": "a"}]}"#;
    let whole = CatalogDigest::from_document(escaped, Profile::Trace).unwrap();
    assert_eq!(chunked(escaped, Profile::Trace, 3), Chunked::Digest(whole));
}

/// A generated catalog written to a file, read through the file in chunks of the default
/// size and of a few kilobytes.
#[test]
fn a_file_is_read_in_chunks_with_the_digests_of_the_whole_document() {
    let tools: Vec<serde_json::Value> = (0..400)
        .map(|i| json!({"name": format!("t{i}"), "description": "d\u{e9}", "inputSchema": {"type": "object", "n": i}}))
        .collect();
    let text = serde_json::to_string_pretty(&json!({"tools": tools})).unwrap();
    let dir = std::env::temp_dir().join(format!("catalog-fold-chunked-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("tools.json");
    std::fs::write(&path, &text).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    let len = file.metadata().unwrap().len();
    let whole = CatalogDigest::from_document(text.as_bytes(), Profile::Trace).unwrap();
    for chunk in [DEFAULT_CHUNK, 4096, 100] {
        assert_eq!(
            digest_in_chunks(&file, len, Profile::Trace, chunk).unwrap(),
            Chunked::Digest(whole.clone()),
            "chunk {chunk}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A source that ends before the length it was given (a file cut while it is read) is a cut
/// document: left to the in-memory path, which reads what is there.
#[test]
fn a_source_shorter_than_its_length_is_left_to_the_in_memory_path() {
    let text = br#"[{"name":"a"},{"name":"b"}]"#;
    let cut = &text[..20];
    assert_eq!(
        digest_in_chunks(cut, text.len() as u64, Profile::Trace, 4).unwrap(),
        Chunked::WholeDocument
    );
    // A length shorter than the source: only that much is read, a cut document too.
    assert_eq!(
        digest_in_chunks(&text[..], 20, Profile::Trace, 4).unwrap(),
        Chunked::WholeDocument
    );
}

/// Fails every read after the first `good` bytes.
struct Failing {
    bytes: Vec<u8>,
    good: u64,
}

impl ReadAt for Failing {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        if offset >= self.good {
            return Err(io::Error::other("the disk is gone"));
        }
        let end = usize::try_from(self.good).unwrap().min(self.bytes.len());
        self.bytes[..end].read_at(buf, offset)
    }
}

/// A read error is returned as it is, wherever it happens (before the tools, in them, after
/// them).
#[test]
fn a_read_error_is_returned() {
    let text = br#"{"tools":[{"name":"a"},{"name":"b"},{"name":"c"}],"nextCursor":"x"}"#.to_vec();
    for good in [0, 5, 30, 55] {
        let source = Failing {
            bytes: text.clone(),
            good,
        };
        let error = digest_in_chunks(&source, text.len() as u64, Profile::Trace, 4).unwrap_err();
        assert_eq!(error.to_string(), "the disk is gone", "after {good} bytes");
    }
}

/// 60 tools under 7 names, in a document large enough for small windows to read it in two
/// parts: each part keys and sorts its own tools, and the fold merges them. A key whose
/// definitions stand in both parts must fold as the whole document folds it.
#[test]
fn keys_shared_by_the_two_parts_fold_as_in_the_whole_document() {
    let tools: Vec<serde_json::Value> = (0..60)
        .map(|i| json!({"name": format!("t{}", (i * 5) % 7), "description": format!("d{i}")}))
        .collect();
    let text = serde_json::to_string(&tools).unwrap();
    for profile in Profile::ALL {
        let whole = CatalogDigest::from_document(text.as_bytes(), profile).unwrap();
        assert_eq!(whole.tools().len(), 7);
        assert_eq!(whole.duplicate_keys().count(), 7);
        for chunk in CHUNKS.into_iter().chain([64, 500]) {
            assert_eq!(
                chunked(text.as_bytes(), profile, chunk),
                Chunked::Digest(whole.clone()),
                "chunk {chunk}"
            );
        }
    }
}

/// A tool with no key (not an object, or a name that is not a string) in the first part, in
/// the second, or alone: the chunked path leaves the document to the in-memory path, whose
/// error names the tool by its place in the whole array.
#[test]
fn a_tool_without_a_key_in_either_part_is_left_to_the_in_memory_path() {
    for (at, bad, message) in [
        (
            2,
            json!({"name": 5}),
            "tool #2 (no key) has no digest: its \"name\" is a number",
        ),
        (
            57,
            json!({"name": [1]}),
            "tool #57 (no key) has no digest: its \"name\" is an array",
        ),
        (
            31,
            json!("t31"),
            "tool #31 (no key) has no digest: it is a string, not an object",
        ),
    ] {
        let mut tools: Vec<serde_json::Value> = (0..60)
            .map(|i| json!({"name": format!("t{i}"), "description": format!("d{i}")}))
            .collect();
        tools[at] = bad;
        let text = serde_json::to_string(&tools).unwrap();
        let error = CatalogDigest::from_document(text.as_bytes(), Profile::Trace).unwrap_err();
        assert!(error.to_string().contains(message), "{error}");
        for chunk in CHUNKS.into_iter().chain([64, 500]) {
            assert_eq!(
                chunked(text.as_bytes(), Profile::Trace, chunk),
                Chunked::WholeDocument,
                "tool #{at}, chunk {chunk}"
            );
        }
    }
}

/// 120 tools, each holding objects that look like the start of a tool (`},{"name": …` inside
/// a nested array), in a document that small windows read in two parts: a second part whose
/// guessed start lands inside a tool counts for nothing (the first part goes past its start
/// and reads on alone), and the digests are the whole document's. Were such a part counted,
/// the digests would not be these: its decoys (named `decoy…`, no tool's name) would be read
/// as tools, and its run would end at a nested array's `]`.
#[test]
fn a_second_part_guessed_inside_a_tool_counts_for_nothing() {
    let tools: Vec<serde_json::Value> = (0..120)
        .map(|i| {
            json!({
                "name": format!("t{i}"),
                "inputSchema": {"anyOf": [{"a": i}, {"name": format!("decoy{i}")}, {"name": "decoy"}]},
            })
        })
        .collect();
    let text = serde_json::to_string(&tools).unwrap();
    assert_eq!(text.matches(r#"},{"name":"decoy"#).count(), 240);
    let whole = CatalogDigest::from_document(text.as_bytes(), Profile::Trace).unwrap();
    let mut names: Vec<String> = (0..120).map(|i| format!("tool:t{i}")).collect();
    names.sort();
    let keys: Vec<&str> = whole.tools().keys().map(|key| key.as_str()).collect();
    assert_eq!(keys, names);
    for chunk in CHUNKS.into_iter().chain([64, 500, 1500]) {
        assert_eq!(
            chunked(text.as_bytes(), Profile::Trace, chunk),
            Chunked::Digest(whole.clone()),
            "chunk {chunk}"
        );
    }
}
