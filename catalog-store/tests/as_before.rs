//! The loader against its own past: a corpus of catalogs, valid and broken in every member
//! (wrong types, `null`, missing, unknown, both spellings, duplicates, escapes, invisible
//! characters written literally and as `\u` escapes, numbers in every form, cut and edited
//! bytes), each loaded and its whole outcome (every error message, or every entry with its
//! normalized definition, the servers, the warnings and the measurement) digested.
//!
//! `as_before.digests` holds those digests as the tree loader of commit 6b7f472 (a strict
//! `Value` tree of the whole file, each entry read from it) computed them, before loading
//! moved to the streaming reader; the outcome writes the gateway's `PATH` as `$PATH` (the
//! two cases whose refusal lists it were recorded again so, once CI ran them with another
//! `PATH`; nothing else in the file changed). A line that differs is a case whose outcome
//! changed: run with `AS_BEFORE_SHOW=<case>` to print that case's document and outcome.
//! Regenerate the file (`AS_BEFORE_WRITE=1`) only for a change of behaviour that is meant.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use catalog_store::{Catalog, CatalogLoadError};
use jcs_digest::{Digest, Profile, order, tool_definition_digest};
use serde_json::{Map, Value, json};

use crate::support::{FP_A, FP_A2, FP_B, entry_one, entry_two};

const DIGESTS: &str = include_str!("as_before.digests");

/// The normalized definition of `entry` as the README states it, digested: the expected
/// `definition_hash`, computed here so that edited definitions still load.
fn hash_for(entry: &Value) -> String {
    let definition = entry["approved_definition"].as_object().unwrap();
    let mut normalized = Map::new();
    for (member, value) in definition {
        let mcp = match member.as_str() {
            "input_schema" => "inputSchema",
            "output_schema" => "outputSchema",
            other => other,
        };
        if !value.is_null() {
            normalized.insert(mcp.to_owned(), value.clone());
        }
    }
    let upstream = entry
        .get("upstream_name")
        .unwrap_or(&entry["tool_name"])
        .clone();
    normalized.insert("name".to_owned(), upstream);
    tool_definition_digest(&Value::Object(normalized), Profile::Trace)
        .unwrap()
        .to_string()
}

fn hashed(mut entry: Value) -> Value {
    entry["definition_hash"] = json!(hash_for(&entry));
    entry
}

/// local.rs's entry, with a `name` in its definition and other entrypoint digests.
fn local_entry() -> Value {
    let mut entry = crate::local::local_entry();
    entry["server"]["entrypoint_digests"] = json!({
        "/usr/bin/node": format!("sha256:{}", "ab".repeat(32)),
        "dist/index.js": format!("sha256:{}", "cd".repeat(32))
    });
    entry["approved_definition"]["name"] = json!("echo");
    hashed(entry)
}

/// Numbers in every form, non-ASCII text, nested arrays, every hashed member, `null` ones.
fn rich_entry() -> Value {
    hashed(json!({
        "tool_name": "rich.tool",
        "upstream_name": "rich",
        "server": {
            "url": "https://rich.example:8443/mcp?x=1",
            "tls_fingerprint": FP_B,
            "backup_fingerprints": [FP_A2],
            "rotation_mode": "cert-pinned",
            "tls_trust": "pin"
        },
        "approved_definition": {
            "title": "Rich — café",
            "description": "Numbers: \"quoted\" \\ and\ttabs",
            "input_schema": {
                "type": "object",
                "properties": {
                    "n": {"type": "number", "minimum": -0.0, "maximum": 1e3,
                          "multipleOf": 0.1, "default": 1.5, "examples": [1, -1, 2.5e-7, 9007199254740991_i64]},
                    "é": {"enum": ["a", "b", [1, [2, [3]]], {"z": 1, "a": 2}, null, true, false]}
                },
                "required": ["n"]
            },
            "outputSchema": null,
            "annotations": {"readOnlyHint": true, "destructiveHint": false}
        },
        "definition_hash": "",
        "added_at": "2026-06-01T12:00:00.5+05:30",
        "approved_by": "me"
    }))
}

/// Invisible characters in values and member names of the definition.
fn invisible_entry() -> Value {
    hashed(json!({
        "tool_name": "crm.lookup2",
        "server": {"url": "https://crm.internal:8443/mcp", "spiffe_id": "spiffe://corp.example/crm/mcp-server"},
        "approved_definition": {
            "description": "Look up\u{200b} a contact\u{e0069}\u{e0067}",
            "inputSchema": {
                "type": "object",
                "properties": {"e\u{202e}mail": {"type": "string", "description": "\u{feff}x"}},
                "enum": ["\u{2066}a\u{2069}"]
            }
        },
        "definition_hash": "",
        "added_at": "2026-06-02T09:30:00+02:00",
        "approved_by": "security@example.com"
    }))
}

fn bases() -> Vec<Value> {
    vec![
        hashed(entry_one()),
        hashed(entry_two()),
        local_entry(),
        rich_entry(),
        invisible_entry(),
    ]
}

/// Values each member is set to in turn.
fn replacements() -> Vec<Value> {
    vec![
        Value::Null,
        json!(true),
        json!(0),
        json!(1.5),
        json!(""),
        json!("x"),
        json!("sha256:00"),
        json!([]),
        json!(["x", 1]),
        json!({}),
        json!({"type": "object"}),
    ]
}

/// Every pointer to a member of `value`, parents before children (arrays' elements too).
fn pointers(value: &Value, at: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(members) => {
            for (name, member) in order::members(members) {
                let pointer = format!("{at}/{}", name.replace('~', "~0").replace('/', "~1"));
                out.push(pointer.clone());
                pointers(member, &pointer, out);
            }
        }
        Value::Array(elements) => {
            for (index, element) in elements.iter().enumerate() {
                let pointer = format!("{at}/{index}");
                out.push(pointer.clone());
                pointers(element, &pointer, out);
            }
        }
        _ => {}
    }
}

fn set(mut document: Value, pointer: &str, value: Option<Value>) -> Value {
    let (parent, member) = pointer.rsplit_once('/').unwrap();
    let member = member.replace("~1", "/").replace("~0", "~");
    match document.pointer_mut(parent).unwrap() {
        Value::Object(object) => match value {
            Some(value) => {
                object.insert(member, value);
            }
            None => {
                object.remove(&member);
            }
        },
        Value::Array(elements) => {
            let index: usize = member.parse().unwrap();
            match value {
                Some(value) => elements[index] = value,
                None => {
                    elements.remove(index);
                }
            }
        }
        _ => unreachable!(),
    }
    document
}

fn text(document: &Value) -> String {
    order::to_string(document)
}

/// The corpus: (case name, document bytes).
fn corpus() -> Vec<(String, Vec<u8>)> {
    let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
    let mut add = |name: String, bytes: Vec<u8>| cases.push((name, bytes));
    let bases = bases();
    let all = Value::Array(bases.clone());
    add("all".into(), text(&all).into_bytes());
    add(
        "all-pretty".into(),
        order::to_string_pretty(&all).into_bytes(),
    );
    add(
        "object-form".into(),
        text(&json!({"catalog_version": "v1", "entries": all.clone()})).into_bytes(),
    );

    // Member by member: each value replaced, and removed; an unknown member next to it.
    for (b, base) in bases.iter().enumerate() {
        let mut at = Vec::new();
        pointers(base, "", &mut at);
        for pointer in &at {
            for (r, replacement) in replacements().into_iter().enumerate() {
                let edited = set(base.clone(), pointer, Some(replacement));
                add(
                    format!("{b}{pointer}={r}"),
                    text(&json!([edited])).into_bytes(),
                );
            }
            add(
                format!("{b}{pointer}-removed"),
                text(&json!([set(base.clone(), pointer, None)])).into_bytes(),
            );
            if let Some((parent, _)) = pointer.rsplit_once('/') {
                if base.pointer(parent).is_some_and(Value::is_object) {
                    let extra = format!("{parent}/descripton");
                    add(
                        format!("{b}{pointer}+unknown"),
                        text(&json!([set(base.clone(), &extra, Some(json!(1)))])).into_bytes(),
                    );
                }
            }
        }
        // Both spellings, a name that differs, a name that agrees, every member null.
        let definition = "/approved_definition";
        for (member, value) in [
            ("inputSchema", json!({"type": "object"})),
            ("input_schema", json!({"type": "object"})),
            ("outputSchema", json!({})),
            ("output_schema", json!({})),
            ("name", json!("other")),
            ("_meta", json!({"a": 1})),
            ("Description", json!("d")),
        ] {
            let edited = set(base.clone(), &format!("{definition}/{member}"), Some(value));
            add(
                format!("{b}-def-{member}"),
                text(&json!([edited.clone()])).into_bytes(),
            );
            add(
                format!("{b}-def-{member}-rehashed"),
                text(&json!([hashed(edited)])).into_bytes(),
            );
        }
        let upstream = base
            .get("upstream_name")
            .unwrap_or(&base["tool_name"])
            .clone();
        add(
            format!("{b}-def-name-agrees"),
            text(&json!([hashed(set(
                base.clone(),
                "/approved_definition/name",
                Some(upstream)
            ))]))
            .into_bytes(),
        );
        add(
            format!("{b}-upstream-after-definition"),
            format!(
                "[{}]",
                text(base).replacen('{', "{\"approved_definition\":{\"inputSchema\":{}},", 1)
            )
            .into_bytes(),
        );
        // Two entries with this one's name, on this and on another server.
        add(
            format!("{b}-twice"),
            text(&json!([base.clone(), base.clone()])).into_bytes(),
        );
        add(
            format!("{b}-and-others"),
            text(&json!([
                base.clone(),
                set(
                    base.clone(),
                    "/server",
                    Some(json!({"url": "https://other.example/mcp", "tls_fingerprint": FP_A}))
                )
            ]))
            .into_bytes(),
        );
    }

    // Text-level edits of the whole valid catalog: duplicates, escapes, bad numbers, nesting.
    let whole = text(&all);
    let edits: Vec<(&str, String, String)> = vec![
        (
            "dup-entry-member",
            "\"approved_by\":".into(),
            "\"approved_by\":\"x\",\"approved_by\":".into(),
        ),
        (
            "dup-definition-member",
            "\"description\":".into(),
            "\"description\":\"x\",\"description\":".into(),
        ),
        (
            "dup-deep",
            "\"type\":\"object\"".into(),
            "\"type\":\"object\",\"type\":\"object\"".into(),
        ),
        (
            "dup-escaped",
            "\"description\":".into(),
            "\"d\\u0065scription\":\"x\",\"description\":".into(),
        ),
        (
            "escaped-zwsp",
            "\"Look up a CRM contact by email\"".into(),
            "\"Look up\\u200b a CRM contact by email\"".into(),
        ),
        (
            "escaped-rlo-name",
            "\"email\":{".into(),
            "\"e\\u202Email\":{".into(),
        ),
        (
            "escaped-tag-pair",
            "\"Query Salesforce records by SOQL\"".into(),
            "\"Query\\udb40\\udc69\\udb40\\udc67 Salesforce records by SOQL\"".into(),
        ),
        (
            "escaped-bom-enum",
            "\"required\":[\"email\"]".into(),
            "\"required\":[\"\\ufeffemail\"]".into(),
        ),
        (
            "escaped-ascii",
            "\"Query Salesforce records by SOQL\"".into(),
            "\"Query \\u0053alesforce \\/ records\\n by SOQL\"".into(),
        ),
        (
            "lone-surrogate",
            "\"Query Salesforce records by SOQL\"".into(),
            "\"Query \\ud800 x\"".into(),
        ),
        (
            "big-integer",
            "\"type\":\"object\"".into(),
            "\"type\":\"object\",\"maximum\":9007199254740993".into(),
        ),
        (
            "huge-float",
            "\"type\":\"object\"".into(),
            "\"type\":\"object\",\"maximum\":1e400".into(),
        ),
        (
            "numbers",
            "\"type\":\"object\"".into(),
            "\"type\":\"object\",\"n\":[1e3,1.50,-0,0.0,1E-7,123456789012345678901234567890.0]"
                .into(),
        ),
        (
            "deep",
            "\"type\":\"object\"".into(),
            format!(
                "\"type\":\"object\",\"x\":{}1{}",
                "[".repeat(124),
                "]".repeat(124)
            ),
        ),
        (
            "deep-ok",
            "\"type\":\"object\"".into(),
            format!(
                "\"type\":\"object\",\"x\":{}1{}",
                "[".repeat(120),
                "]".repeat(120)
            ),
        ),
        (
            "trailing-comma",
            "\"approved_by\":".into(),
            "\"approved_by\":\"x\",}, {\"approved_by\":".into(),
        ),
        (
            "control-in-name",
            "\"tool_name\":\"crm.lookup\"".into(),
            "\"tool_name\":\"crm.\\u0007lookup\"".into(),
        ),
        (
            "invalid-utf8-escape",
            "\"approved_by\":\"me\"".into(),
            "\"approved_by\":\"m\\x\"".into(),
        ),
    ];
    for (name, from, to) in edits {
        add(
            format!("text-{name}"),
            whole.replacen(&from, &to, 1).into_bytes(),
        );
    }
    add("text-invalid-utf8".into(), {
        let mut bytes = whole.clone().into_bytes();
        let at = whole.find("Query Salesforce").unwrap();
        bytes[at] = 0xff;
        bytes
    });
    add("text-trailing".into(), format!("{whole} x").into_bytes());
    add("text-empty".into(), Vec::new());
    for scalar in [
        "null", "true", "1", "\"x\"", "{}", "[]", "[1]", "[[]]", "[null]",
    ] {
        add(format!("doc-{scalar}"), scalar.as_bytes().to_vec());
    }
    for object in [
        json!({"entries": {}}),
        json!({"entries": null}),
        json!({"catalog_version": "", "entries": []}),
        json!({"catalog_version": 1, "entries": [1]}),
        json!({"catalog_versoin": "v", "entries": []}),
        json!({"catalog_version": "v"}),
        json!({"entries": [], "extra": {"deep": [1, 2]}}),
    ] {
        add(format!("doc-{}", text(&object)), text(&object).into_bytes());
    }
    // Cut short, and single bytes removed, across the second entry.
    let second = whole.find("crm.lookup").unwrap() - 20;
    for cut in (0..whole.len()).step_by(97) {
        add(format!("cut-{cut}"), whole.as_bytes()[..cut].to_vec());
    }
    for at in (second..second + 900).step_by(7) {
        let mut bytes = whole.clone().into_bytes();
        bytes.remove(at);
        add(format!("removed-{at}"), bytes);
    }
    cases
}

/// Everything a load gives, in text that depends neither on map order nor on the machine: the
/// gateway's `PATH`, which a bare program's refusal lists, is written as `$PATH`.
fn outcome(result: &Result<Catalog, CatalogLoadError>) -> String {
    let text = machine_outcome(result);
    match std::env::var("PATH") {
        Ok(path) if !path.is_empty() => text.replace(&format!("PATH ({path})"), "PATH ($PATH)"),
        _ => text,
    }
}

fn machine_outcome(result: &Result<Catalog, CatalogLoadError>) -> String {
    let mut out = String::new();
    match result {
        Ok(catalog) => {
            writeln!(out, "version {:?}", catalog.catalog_version()).unwrap();
            for entry in catalog.entries() {
                writeln!(
                    out,
                    "entry {:?} {:?} {} {} {:?} {:?} {:?}\n  definition {}",
                    entry.tool_name(),
                    entry.upstream_name(),
                    entry.key(),
                    entry.definition_hash(),
                    entry.added_at(),
                    entry.approved_by(),
                    entry.server(),
                    order::Sorted(entry.approved_definition()),
                )
                .unwrap();
            }
            for server in catalog.servers() {
                writeln!(out, "server {:?}", server).unwrap();
            }
            for warning in catalog.warnings() {
                writeln!(out, "warning {warning}").unwrap();
            }
            writeln!(out, "measurement {}", catalog.measurement().digest()).unwrap();
        }
        Err(error) => {
            writeln!(out, "error {error}").unwrap();
            for error in error.errors() {
                writeln!(out, "  {error}").unwrap();
            }
        }
    }
    out
}

#[test]
fn every_case_loads_as_it_did_with_the_tree_loader() {
    let corpus = corpus();
    // Seeds for the fuzz_catalog target (catalog-store's README).
    if let Some(dir) = std::env::var_os("AS_BEFORE_DUMP") {
        for (index, (_, bytes)) in corpus.iter().enumerate() {
            std::fs::write(
                std::path::Path::new(&dir).join(format!("case-{index:04}.json")),
                bytes,
            )
            .unwrap();
        }
    }
    let computed: BTreeMap<String, String> = corpus
        .iter()
        .map(|(name, bytes)| {
            let outcome = outcome(&Catalog::from_slice(bytes));
            if std::env::var("AS_BEFORE_SHOW").is_ok_and(|show| show == *name) {
                eprintln!("{}\n{outcome}", String::from_utf8_lossy(bytes));
            }
            let digest = Digest::of(outcome.as_bytes()).to_string();
            (name.clone(), digest["sha256:".len()..][..16].to_owned())
        })
        .collect();
    assert_eq!(computed.len(), corpus.len(), "case names repeat");
    let rendered: String = computed
        .iter()
        .map(|(name, digest)| format!("{digest} {name}\n"))
        .collect();
    if std::env::var_os("AS_BEFORE_WRITE").is_some() {
        std::fs::write(
            concat!(env!("CARGO_MANIFEST_DIR"), "/tests/as_before.digests"),
            &rendered,
        )
        .unwrap();
        return;
    }
    let expected: BTreeMap<&str, &str> = DIGESTS
        .lines()
        .filter_map(|line| line.split_once(' ').map(|(digest, name)| (name, digest)))
        .collect();
    let changed: Vec<&String> = computed
        .iter()
        .filter(|(name, digest)| expected.get(name.as_str()) != Some(&digest.as_str()))
        .map(|(name, _)| name)
        .collect();
    assert_eq!(expected.len(), computed.len(), "the corpus changed");
    assert!(
        changed.is_empty(),
        "{} cases changed: {changed:?}",
        changed.len()
    );
    // The corpus reaches every kind of outcome, so that a digest match means something.
    let all = corpus
        .iter()
        .map(|(_, bytes)| outcome(&Catalog::from_slice(bytes)));
    let (mut valid, mut json, mut invalid, mut invisible) = (0, 0, 0, 0);
    for text in all {
        valid += usize::from(text.starts_with("version"));
        json += usize::from(text.contains("not strict JSON"));
        invalid += usize::from(text.starts_with("error") && !text.contains("not strict JSON"));
        invisible += usize::from(text.contains("invisible or direction-changing"));
    }
    assert_eq!((valid, json, invalid, invisible), (115, 71, 1785, 29));
}

// Keep FP_A2 and FP_B in use whichever base entries change.
const _: [&str; 3] = [FP_A, FP_A2, FP_B];
