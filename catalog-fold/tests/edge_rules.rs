//! The duplicate and overflow rules of seed 000 §5. Every expected value is built here with
//! `format!` from the rule's text and hashed with sha2 directly; per-tool digests come from
//! hand-written RFC 8785 preimages, never from the code under test.

use catalog_fold::{CatalogDigest, MAX_FOLD_ENTRIES, OVERFLOW_KEY, fold};
use catalog_key::ToolKey;
use jcs_digest::{Digest, Profile};
use serde_json::{Value, json};

use crate::support::sha256_text;

/// The per-tool digest of `{"name": NAME, "description": DESCRIPTION}` (ASCII, no escapes),
/// from its canonical preimage written by hand (members sorted: description, name).
fn tool_digest(label: &str, name: &str, description: &str) -> String {
    sha256_text(&format!(
        r#"{{"profile":"{label}","tool":{{"description":"{description}","name":"{name}"}}}}"#
    ))
}

const TRACE: &str = "trace.mcp-tool-definition.v1";
const AGENTAVOW: &str = "agentavow.mcp-tool-definition.v1";

fn duplicates_catalog() -> Vec<Value> {
    vec![
        json!({"name": "dup", "description": "first"}),
        json!({"name": "solo", "description": "alone"}),
        json!({"name": "dup", "description": "second"}),
        json!({"name": "dup", "description": "first"}),
    ]
}

fn check_duplicate_rule(profile: Profile, label: &str) {
    let first = tool_digest(label, "dup", "first");
    let second = tool_digest(label, "dup", "second");
    let mut dup_digests = [first.clone(), second, first];
    dup_digests.sort();
    let dup = sha256_text(&format!("{label}.duplicates\n{}", dup_digests.join("\n")));
    let solo = tool_digest(label, "solo", "alone");
    let lines = format!("tool:dup={dup}\ntool:solo={solo}");

    let catalog = CatalogDigest::compute(&duplicates_catalog(), profile).unwrap();
    assert_eq!(catalog.profile(), profile);
    assert_eq!(catalog.fold_lines(), lines);
    assert_eq!(catalog.catalog().to_string(), sha256_text(&lines));
    assert_eq!(catalog.tools()[&ToolKey::from_name("dup")].to_string(), dup);
    let duplicates: Vec<&ToolKey> = catalog.duplicate_keys().collect();
    assert_eq!(duplicates, [&ToolKey::from_name("dup")]);
    assert_eq!(catalog.fold().overflow(), None);
}

#[test]
fn duplicate_rule_under_the_trace_label() {
    check_duplicate_rule(Profile::Trace, TRACE);
}

#[test]
fn duplicate_rule_uses_the_label_in_force() {
    check_duplicate_rule(Profile::AgentAvow, AGENTAVOW);
}

/// `n` tools named t000, t001, … given in reverse order (sorting is the fold's job).
fn numbered_catalog(n: usize) -> Vec<Value> {
    (0..n)
        .rev()
        .map(|i| json!({"name": format!("t{i:03}"), "description": "d"}))
        .collect()
}

fn numbered_line(label: &str, i: usize) -> String {
    let name = format!("t{i:03}");
    format!("tool:{name}={}", tool_digest(label, &name, "d"))
}

#[test]
fn exactly_500_entries_do_not_overflow() {
    let lines: Vec<String> = (0..500).map(|i| numbered_line(TRACE, i)).collect();
    let catalog = CatalogDigest::compute(&numbered_catalog(500), Profile::Trace).unwrap();
    assert_eq!(MAX_FOLD_ENTRIES, 500);
    assert_eq!(catalog.fold_lines(), lines.join("\n"));
    assert_eq!(
        catalog.catalog().to_string(),
        sha256_text(&lines.join("\n"))
    );
    assert_eq!(catalog.fold().overflow(), None);
}

fn check_overflow(n: usize, profile: Profile, label: &str) {
    let all: Vec<String> = (0..n).map(|i| numbered_line(label, i)).collect();
    let (kept, rest) = all.split_at(500);
    let overflow = sha256_text(&format!("{label}.overflow\n{}", rest.join("\n")));
    let lines = format!("{}\ntools:overflow={overflow}", kept.join("\n"));

    let catalog = CatalogDigest::compute(&numbered_catalog(n), profile).unwrap();
    assert_eq!(catalog.fold_lines(), lines);
    assert_eq!(catalog.catalog().to_string(), sha256_text(&lines));
    assert_eq!(
        catalog.fold().overflow().map(|d| d.to_string()),
        Some(overflow)
    );
    // The per-tool map still holds every tool.
    assert_eq!(catalog.tools().len(), n);
    assert_eq!(catalog.fold_lines().lines().count(), 501);
}

#[test]
fn overflow_rule_with_501_tools() {
    check_overflow(501, Profile::Trace, TRACE);
}

#[test]
fn overflow_rule_with_503_tools_joins_the_remaining_lines() {
    check_overflow(503, Profile::Trace, TRACE);
}

#[test]
fn overflow_rule_uses_the_label_in_force() {
    check_overflow(501, Profile::AgentAvow, AGENTAVOW);
}

#[test]
fn duplicate_rule_applies_before_the_overflow_rule() {
    // 501 tools, two of them sharing a key: 500 keys, so nothing overflows.
    let mut tools = numbered_catalog(500);
    tools.push(json!({"name": "t000", "description": "e"}));
    let mut pair = [
        tool_digest(TRACE, "t000", "d"),
        tool_digest(TRACE, "t000", "e"),
    ];
    pair.sort();
    let dup = sha256_text(&format!("{TRACE}.duplicates\n{}", pair.join("\n")));
    let mut lines = vec![format!("tool:t000={dup}")];
    lines.extend((1..500).map(|i| numbered_line(TRACE, i)));

    let catalog = CatalogDigest::compute(&tools, Profile::Trace).unwrap();
    assert_eq!(catalog.fold_lines(), lines.join("\n"));
    assert_eq!(
        catalog.catalog().to_string(),
        sha256_text(&lines.join("\n"))
    );
    assert_eq!(catalog.fold().overflow(), None);
}

#[test]
fn empty_catalog_hashes_the_empty_text() {
    let catalog = CatalogDigest::compute(&[], Profile::Trace).unwrap();
    assert_eq!(catalog.fold_lines(), "");
    // python3 -c "import hashlib;print(hashlib.sha256(b'').hexdigest())"
    assert_eq!(
        catalog.catalog().to_string(),
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
}

#[test]
fn generic_fold_under_another_label() {
    // As the catalog store uses it: its own label, keys from tool names.
    let label = "trace.mcp-catalog-entry.v1";
    let a = Digest::of(b"a");
    let b = Digest::of(b"b");
    let c = Digest::of(b"c");
    let result = fold(
        [
            (ToolKey::from_name("y"), c),
            (ToolKey::from_name("x"), b),
            (ToolKey::from_name("x"), a),
        ],
        label,
    );
    let mut pair = [a.to_string(), b.to_string()];
    pair.sort();
    let x = sha256_text(&format!("{label}.duplicates\n{}", pair.join("\n")));
    let lines = format!("tool:x={x}\ntool:y={c}");
    assert_eq!(result.lines(), lines);
    assert_eq!(result.digest().to_string(), sha256_text(&lines));
    assert_eq!(result.duplicate_keys(), [ToolKey::from_name("x")]);
    assert_eq!(result.per_key().len(), 2);
    assert_eq!(OVERFLOW_KEY, "tools:overflow");
}

/// Regression: the fold sorts *keys*, then writes `key=digest` lines (seed 000 §5 step 1). Sorting
/// the line texts instead gives another order whenever one key is a prefix of another and the
/// longer key continues with a character below `=` (0x3D): `tool:a.b=` sorts before `tool:a=`,
/// but `tool:a` sorts before `tool:a.b`. The bench's first Python reference made exactly that
/// mistake on generated catalogs with names like `files.create_5` and `files.create_55`.
#[test]
fn keys_are_sorted_before_lines_are_written_when_one_key_prefixes_another() {
    let tools = vec![
        json!({"name": "a.b", "description": "longer"}),
        json!({"name": "a", "description": "shorter"}),
        json!({"name": "a5", "description": "digit"}),
    ];
    let a = tool_digest(TRACE, "a", "shorter");
    let a_dot_b = tool_digest(TRACE, "a.b", "longer");
    let a5 = tool_digest(TRACE, "a5", "digit");
    // Key order: "tool:a" < "tool:a.b" < "tool:a5" (prefix first; '.' 0x2E < '5' 0x35).
    let lines = format!("tool:a={a}\ntool:a.b={a_dot_b}\ntool:a5={a5}");

    let catalog = CatalogDigest::compute(&tools, Profile::Trace).unwrap();
    assert_eq!(catalog.fold_lines(), lines);
    assert_eq!(catalog.catalog().to_string(), sha256_text(&lines));
    // The wrong order, for contrast: sorting the line texts puts both longer keys first.
    let mut sorted_texts: Vec<&str> = lines.split('\n').collect();
    sorted_texts.sort_unstable();
    assert_ne!(sorted_texts.join("\n"), lines);
}

/// The fold as seed 000 §5 words it, written as plainly as possible (a map of key → digests,
/// texts built with `format!`): the oracle for `fold`, whose code avoids those copies.
fn fold_as_the_seed_words_it(entries: &[(ToolKey, Digest)], label: &str) -> (String, Digest) {
    let mut by_key: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for (key, digest) in entries {
        by_key
            .entry(key.as_str().to_owned())
            .or_default()
            .push(digest.to_string());
    }
    let mut lines: Vec<String> = by_key
        .into_iter()
        .map(|(key, mut digests)| {
            let digest = if digests.len() == 1 {
                digests.remove(0)
            } else {
                digests.sort();
                sha256_text(&format!("{label}.duplicates\n{}", digests.join("\n")))
            };
            format!("{key}={digest}")
        })
        .collect();
    if lines.len() > MAX_FOLD_ENTRIES {
        let overflowed = lines.split_off(MAX_FOLD_ENTRIES);
        let overflow = sha256_text(&format!("{label}.overflow\n{}", overflowed.join("\n")));
        lines.push(format!("{OVERFLOW_KEY}={overflow}"));
        lines.sort();
    }
    let text = lines.join("\n");
    let digest = Digest::of(text.as_bytes());
    (text, digest)
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Up to 700 entries over names that often repeat (the duplicate rule) and often exceed
    /// 500 keys (the overflow rule), in any order.
    #[test]
    fn the_fold_is_the_seeds_fold(
        entries in proptest::collection::vec(("[a-z]{1,3}", proptest::prelude::any::<u8>()), 0..700)
    ) {
        let entries: Vec<(ToolKey, Digest)> = entries
            .iter()
            .map(|(name, seed)| (ToolKey::from_name(name), Digest::of(&[*seed])))
            .collect();
        let label = "trace.mcp-tool-definition.v1";
        let folded = fold(entries.clone(), label);
        let (text, digest) = fold_as_the_seed_words_it(&entries, label);
        proptest::prop_assert_eq!(folded.lines(), text.as_str());
        proptest::prop_assert_eq!(folded.digest(), digest);
    }
}
