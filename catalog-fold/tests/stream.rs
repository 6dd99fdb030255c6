//! The streaming document path against the tree path on generated catalogs: random names
//! (repeated ones exercise the duplicate rule, more than 500 the overflow rule), random
//! definitions, every document shape, spelled at random (`jcs-digest/tests/spelling.rs`).

use catalog_fold::{CatalogDigest, Chunked, stream_tools_document};
use jcs_digest::Profile;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

use crate::spelling::spell;

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-1000i64..1000).prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |x| x.is_finite())
            .prop_map(Value::from),
        "[a-z\u{e9}\u{1f600}\"\\\\\n/]{0,6}".prop_map(Value::String),
    ]
}

fn json() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::vec(("[a-z_]{0,4}", inner), 0..4)
                .prop_map(|members| Value::Object(members.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn tool() -> impl Strategy<Value = Value> {
    let name = prop_oneof![
        3 => "[a-c]{1,2}".prop_map(Value::String),
        1 => Just(Value::Null),
        1 => Just(Value::String(String::new())),
    ];
    (
        name,
        json(),
        json(),
        proptest::option::of(json()),
        any::<bool>(),
    )
        .prop_map(|(name, schema, meta, title, with_description)| {
            let mut tool = Map::new();
            tool.insert("name".into(), name);
            tool.insert("inputSchema".into(), schema);
            tool.insert("_meta".into(), meta);
            if let Some(title) = title {
                tool.insert("title".into(), title);
            }
            if with_description {
                tool.insert("description".into(), json!("d\u{e9}"));
            }
            Value::Object(tool)
        })
}

/// One of the three shapes, holding `tools`.
fn document(tools: Vec<Value>, shape: u8) -> Value {
    match shape % 3 {
        0 => Value::Array(tools),
        1 => json!({"tools": tools, "nextCursor": null}),
        _ => json!({"jsonrpc": "2.0", "id": 7, "result": {"tools": tools, "_meta": {}}}),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn generated_catalogs_digest_the_same_on_both_paths(
        tools in proptest::collection::vec(tool(), 0..12),
        shape in any::<u8>(),
        seed in any::<u64>(),
    ) {
        let text = spell(&document(tools.clone(), shape), seed);
        crate::support::read_both(text.as_bytes()).unwrap();
        for profile in Profile::ALL {
            let expected = CatalogDigest::compute(&tools, profile).unwrap();
            prop_assert_eq!(
                CatalogDigest::from_document(text.as_bytes(), profile).unwrap(),
                expected.clone()
            );
            // Every shape is taken by the chunked path, whatever the window.
            for chunk in crate::support::CHUNKS {
                prop_assert_eq!(
                    crate::support::chunked(text.as_bytes(), profile, chunk),
                    Chunked::Digest(expected.clone())
                );
            }
        }
    }
}

/// More than 500 keys, so the overflow rule applies, with repeated names for the duplicate
/// rule, in every shape.
#[test]
fn overflowing_catalogs_digest_the_same_on_both_paths() {
    let tools: Vec<Value> = (0..1203)
        .map(|i| json!({"name": format!("t{}", i % 1100), "inputSchema": {"n": i, "x": 1.5e-3}}))
        .collect();
    for shape in 0..3 {
        let text = spell(&document(tools.clone(), shape), u64::from(shape));
        crate::support::read_both(text.as_bytes()).unwrap();
        let streamed = CatalogDigest::from_document(text.as_bytes(), Profile::Trace).unwrap();
        assert!(streamed.fold().overflow().is_some());
        assert_eq!(streamed.duplicate_keys().count(), 103);
        assert_eq!(
            streamed,
            CatalogDigest::compute(&tools, Profile::Trace).unwrap()
        );
        for chunk in crate::support::CHUNKS {
            assert_eq!(
                crate::support::chunked(text.as_bytes(), Profile::Trace, chunk),
                Chunked::Digest(streamed.clone()),
                "chunk {chunk}"
            );
        }
        assert_eq!(
            stream_tools_document(text.as_bytes(), Profile::Trace)
                .unwrap()
                .len(),
            1203
        );
    }
}
