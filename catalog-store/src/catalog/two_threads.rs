//! The two-thread load against the one-thread reference (`parse_strict` of the whole file,
//! entries read one after the other): the same catalog, or the same errors in the same order,
//! on generated catalogs large enough for jcs-digest to read the entry array in two halves
//! (over a MiB), valid and broken in each half and where the halves meet.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[rustfmt::skip]
#[path = "../../../bench/catalog_gen.rs"]
mod catalog_gen;
#[path = "../../benches/support/catalog_entries.rs"]
mod catalog_entries;

use std::sync::OnceLock;

use proptest::prelude::*;
use serde_json::{Value, json};

use super::Catalog;
use crate::error::CatalogLoadError;
use crate::halves::Threads;
use crate::reference::disagreement;

/// Entries enough for over a MiB of catalog, compact too (about 2.2 KiB each).
const ENTRIES: usize = 520;

fn entries() -> &'static [Value] {
    static ENTRIES_ONCE: OnceLock<Vec<Value>> = OnceLock::new();
    ENTRIES_ONCE.get_or_init(|| catalog_entries::catalog_entries(ENTRIES))
}

fn object_form(entries: &[Value]) -> Vec<u8> {
    serde_json::to_vec_pretty(&json!({"catalog_version": "v", "entries": entries})).unwrap()
}

/// Loads `bytes` every way and asserts the same outcome; returns the two-thread load.
#[track_caller]
fn agree(bytes: &[u8]) -> Result<Catalog, CatalogLoadError> {
    if let Some(disagreement) = disagreement(bytes) {
        panic!("{disagreement}");
    }
    Catalog::from_bytes_with(bytes, None, Threads::Two)
}

/// The errors of a load that must fail, as text.
fn errors(result: Result<Catalog, CatalogLoadError>) -> Vec<String> {
    result
        .unwrap_err()
        .errors()
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn a_large_valid_catalog_is_the_same_in_both_forms() {
    let object = object_form(entries());
    assert!(object.len() > 1 << 20, "{} bytes", object.len());
    assert_eq!(agree(&object).unwrap().entries().len(), ENTRIES);
    let array = serde_json::to_vec(entries()).unwrap();
    assert!(array.len() > 1 << 20, "{} bytes", array.len());
    assert_eq!(agree(&array).unwrap().catalog_version(), None);
}

/// Where jcs-digest guesses the second half starts: the first entry that starts past the
/// middle of the entry array. An entry is an object alone on its line at the entry array's
/// indentation (whatever member serde_json writes first: its map order is a cargo feature).
fn entry_at_the_middle(bytes: &[u8]) -> usize {
    let text = std::str::from_utf8(bytes).unwrap();
    let array = text.find('[').unwrap() + 1;
    let middle = array + (text.len() - array) / 2;
    let starts: Vec<usize> = text
        .match_indices("\n    {\n")
        .map(|(at, _)| at + 1)
        .collect();
    assert_eq!(starts.len(), ENTRIES);
    starts.iter().position(|&start| start >= middle).unwrap()
}

/// A strict-JSON error in the first half, at the entry where the halves meet, just before it,
/// and in the second half: the error the tree reader gives, with the entry's index.
#[test]
fn a_json_error_anywhere_is_the_tree_readers() {
    let middle = entry_at_the_middle(&object_form(entries()));
    for index in [0, 7, middle - 1, middle, middle + 1, ENTRIES - 1] {
        let mut broken = entries().to_vec();
        broken[index]["approved_by"] = json!("DUPLICATE");
        let text = String::from_utf8(object_form(&broken)).unwrap();
        let text = text.replacen(
            "\"approved_by\": \"DUPLICATE\"",
            "\"approved_by\": \"x\", \"approved_by\": \"y\"",
            1,
        );
        let found = errors(agree(text.as_bytes()));
        assert_eq!(found.len(), 1);
        assert!(
            found[0].starts_with(&format!(
                "the catalog is not strict JSON: duplicate member name \"approved_by\" in the \
                 object at JSON Pointer \"/entries/{index}\""
            )),
            "{}",
            found[0]
        );
    }
    // A number out of range deep in the last entry, and nesting too deep in it.
    let text = String::from_utf8(object_form(entries())).unwrap();
    let last = text.rfind("\"inputSchema\": {").unwrap() + "\"inputSchema\": {".len();
    for inserted in [
        "\"maximum\": 9007199254740993,".to_owned(),
        format!("\"x\": {}1{},", "[".repeat(124), "]".repeat(124)),
    ] {
        let broken = format!("{}{inserted}{}", &text[..last], &text[last..]);
        assert_eq!(errors(agree(broken.as_bytes())).len(), 1);
    }
    // After the array: trailing bytes, and a second `entries`.
    for after in ["x", ", \"entries\": []}"] {
        let broken = format!("{}{after}", text.trim_end().trim_end_matches('}'));
        assert_eq!(errors(agree(broken.as_bytes())).len(), 1);
    }
}

/// Problems in entries of both halves, and between entries of different halves (a duplicate
/// tool name, one server with two identities): every error, in the reference's order.
#[test]
fn validation_errors_across_the_halves_are_reported_in_file_order() {
    let mut broken = entries().to_vec();
    broken[3]["definition_hash"] = json!(format!("sha256:{}", "0".repeat(64)));
    broken[380]["definition_hash"] = json!("not a hash");
    broken[10]["tls_fingerprnt"] = json!("typo");
    broken[250]["approved_definition"]["_meta"] = json!({});
    // Also refused as not the definition's own name.
    let name = broken[5]["tool_name"].clone();
    broken[390]["tool_name"] = name.clone();
    // Entry 41 is on server 1, as entry 1 is: another fingerprint for it.
    broken[361]["server"]["tls_fingerprint"] = json!(format!("SHA256:{}", "ab".repeat(32)));
    let found = errors(agree(&object_form(&broken)));
    let entries: Vec<&str> = found
        .iter()
        .map(|error| error.split(" (").next().unwrap())
        .collect();
    assert_eq!(
        entries,
        [
            "entry 3",
            "entry 10",
            "entry 250",
            "entry 380",
            "entry 390",
            "entry 361",
            "Duplicate tool name in catalog: {name} is registered by two different servers:\n  - https://mcp-5.example.com/mcp",
        ]
        .map(|expected| expected.replace("{name}", &name.to_string())),
        "{found:#?}"
    );
}

/// Invisible characters in definitions of both halves: the same warnings, in order.
#[test]
fn warnings_from_both_halves_keep_their_order() {
    let mut marked = entries().to_vec();
    for index in [2, 200, ENTRIES - 1] {
        let definition = &mut marked[index]["approved_definition"];
        definition["description"] = json!(format!("hidden\u{E0041}\u{200B} {index}"));
        let tool = definition.clone();
        let digest = jcs_digest::tool_definition_digest(&tool, jcs_digest::Profile::Trace);
        marked[index]["definition_hash"] = json!(digest.unwrap().to_string());
    }
    let catalog = agree(&object_form(&marked)).unwrap();
    let indices: Vec<usize> = catalog
        .warnings()
        .iter()
        .map(|warning| match warning {
            crate::CatalogWarning::InvisibleCharacters { index, .. } => *index,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(indices, [2, 200, ENTRIES - 1]);
}

/// The middle of the array inside one entry's long array of objects that start like entries:
/// the second half's guess is wrong, the first thread reads on alone, same result.
#[test]
fn a_wrong_guess_at_the_middle_is_read_through() {
    let mut padded = entries().to_vec();
    let examples: Vec<Value> = (0..50_000).map(|i| json!({"added_at": i})).collect();
    let definition = &mut padded[200]["approved_definition"];
    definition["inputSchema"]["examples"] = Value::Array(examples);
    let tool = definition.clone();
    let digest = jcs_digest::tool_definition_digest(&tool, jcs_digest::Profile::Trace);
    padded[200]["definition_hash"] = json!(digest.unwrap().to_string());
    let bytes = object_form(&padded);
    let text = std::str::from_utf8(&bytes).unwrap();
    let middle = text.len() / 2;
    assert!(text[middle..middle + 4096].contains("{\n              \"added_at\""));
    assert_eq!(agree(&bytes).unwrap().entries().len(), ENTRIES);
}

/// Small catalogs split in two at every size from 2 entries: the same result as one thread.
#[test]
fn every_place_the_halves_can_meet_gives_the_same_catalog() {
    for n in 1..=9 {
        agree(&object_form(&entries()[..n])).unwrap();
        let mut broken = entries()[..n].to_vec();
        broken[n - 1]["approved_by"] = json!("");
        broken[0]["added_at"] = json!("yesterday");
        assert_eq!(errors(agree(&object_form(&broken))).len(), 2);
    }
}

fn compact() -> &'static [u8] {
    static COMPACT: OnceLock<Vec<u8>> = OnceLock::new();
    let compact =
        COMPACT.get_or_init(|| serde_json::to_vec(&json!({"entries": entries()})).unwrap());
    assert!(compact.len() > 1 << 20, "{} bytes", compact.len());
    compact
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// A large catalog with a few bytes changed anywhere: the same outcome every way (the tree
    /// loader, two threads, and as `Catalog::from_slice` runs it).
    #[test]
    fn a_catalog_with_bytes_changed_loads_the_same_on_two_threads(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4)
    ) {
        let mut bytes = compact().to_vec();
        for (at, byte) in edits {
            let at = at.index(bytes.len());
            bytes[at] = byte;
        }
        prop_assert_eq!(disagreement(&bytes), None);
    }
}

/// A small catalog written both ways (pretty, compact) with definitions in both spellings.
fn small() -> &'static [Vec<u8>] {
    static SMALL: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    SMALL.get_or_init(|| {
        let mut entries = entries()[..3].to_vec();
        let definition = entries[1]["approved_definition"].as_object_mut().unwrap();
        definition.insert("title".to_owned(), json!("T\u{200b}"));
        definition.insert("outputSchema".to_owned(), Value::Null);
        let tool = Value::Object(definition.clone());
        let digest = jcs_digest::tool_definition_digest(&tool, jcs_digest::Profile::Trace);
        if let Some(schema) = definition.remove("inputSchema") {
            definition.insert("input_schema".to_owned(), schema);
        }
        entries[1]["definition_hash"] = json!(digest.unwrap().to_string());
        vec![object_form(&entries), serde_json::to_vec(&entries).unwrap()]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The streaming load against the tree loader (`parse_strict` of the whole file, each entry
    /// read from the tree, the definitions canonicalized from their values): a small catalog
    /// with bytes replaced, inserted or removed anywhere gives the same catalog (definitions
    /// compared as values), warnings and measurement, or the same errors.
    #[test]
    fn the_streaming_load_is_the_tree_load_on_edited_catalogs(
        form in 0..2usize,
        edits in proptest::collection::vec(
            (any::<prop::sample::Index>(), 0..3u8, prop::sample::select(
                b"{}[]\",:0123456789.eE+-tfnul\\ax \xc3\xa9\xe2\x80\x8b".to_vec()
            )),
            1..4,
        )
    ) {
        let mut bytes = small()[form].clone();
        for (at, how, byte) in edits {
            let at = at.index(bytes.len());
            match how {
                0 => bytes[at] = byte,
                1 => bytes.insert(at, byte),
                _ => {
                    bytes.remove(at);
                }
            }
        }
        prop_assert_eq!(disagreement(&bytes), None);
    }
}

/// The unedited small catalogs load (the edits above start from valid ones), with the warning
/// for the zero-width space in the title of the second entry.
#[test]
fn the_small_catalogs_load() {
    for bytes in small() {
        let catalog = agree(bytes).unwrap();
        let warnings: Vec<String> = catalog.warnings().iter().map(ToString::to_string).collect();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].ends_with(
                "approved_definition /title holds 1 invisible or direction-changing character \
                 (U+200B); what a person approves must be what the model reads: remove them, or \
                 make sure they belong there"
            ),
            "{warnings:?}"
        );
        let title = &catalog.entries()[1].approved_definition()["title"];
        assert_eq!(title, "T\u{200b}");
    }
}
