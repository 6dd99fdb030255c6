//! The catalog measurement (docs/design.md §4): independently computed values, a change to any
//! binding changes it, and nothing else does.
//!
//! Expected values: python3 + hashlib (see `support`). Per entry,
//! `sha256(jcs({"profile": "trace.mcp-catalog-entry.v1", "entry": {...nine members...}}))`, with
//! absent anchors as `null`; then the seed 000 §5 fold of `tool:<name>=<digest>` lines.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::support::{
    FP_A2, FP_B, H1_CHANGED, H1_UPSTREAM_QUERY, entry_one, entry_two, load, load_valid, with,
    without,
};

/// The measurement of `[entry_one(), entry_two()]`.
const MEASUREMENT: &str = "sha256:01e0f56129a035027c098d7e4136d5f2bcd2eb5410c6bec13505175746cae31c";
/// Entry digests of entry_one and entry_two.
const E1: &str = "sha256:9771b07bf01a0df23262004e8ba3c9e116fc08ccab10b8a445fa29bf0a88041f";
const E2: &str = "sha256:cef4c6fa5c537b83c2890ac76aba2a15767db86c92b6200972164fcbeadfc593";

fn measurement_of(entries: Vec<Value>) -> String {
    load_valid(entries).measurement().digest().to_string()
}

#[test]
fn the_measurement_recomputes_independently() {
    let catalog = load_valid(vec![entry_one(), entry_two()]);
    let measurement = catalog.measurement();
    assert_eq!(measurement.digest().to_string(), MEASUREMENT);
    let entry_digests: Vec<String> = measurement
        .entry_digests()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(entry_digests, [E1, E2]);
    assert_eq!(
        measurement.fold_text(),
        format!("tool:crm.lookup={E2}\ntool:salesforce.query={E1}")
    );
    let per_key: Vec<(String, String)> = measurement
        .per_key()
        .iter()
        .map(|(k, d)| (k.to_string(), d.to_string()))
        .collect();
    assert_eq!(
        per_key,
        [
            ("tool:crm.lookup".to_owned(), E2.to_owned()),
            ("tool:salesforce.query".to_owned(), E1.to_owned())
        ]
    );
}

#[test]
fn an_empty_catalog_measures_the_empty_text() {
    // sha256(b"").
    assert_eq!(
        measurement_of(vec![]),
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
}

#[test]
fn more_than_500_entries_fold_the_rest_under_tools_overflow() {
    // t0..t500 on one server; python3 computed the whole fold, overflow rule included
    // (`trace.mcp-catalog-entry.v1.overflow\n` + the lines past the first 500 keys).
    let entries: Vec<Value> = (0..501)
        .map(|i| {
            with(
                with(entry_one(), "/tool_name", json!(format!("t{i}"))),
                "/upstream_name",
                json!("salesforce.query"),
            )
        })
        .collect();
    let catalog = load_valid(entries);
    let measurement = catalog.measurement();
    assert_eq!(
        measurement.digest().to_string(),
        "sha256:c1611df276e6048424cc1212be78317881460e2ef2f12409584d70465aeb9ef7"
    );
    assert!(measurement.fold_text().ends_with(
        "\ntools:overflow=sha256:8d80e23b27c66c4d9fcb564b6c8f2369b7b3a915a400daf05057ef6ec463588d"
    ));
}

#[test]
fn reordering_entries_or_choosing_the_object_form_does_not_change_it() {
    assert_eq!(measurement_of(vec![entry_two(), entry_one()]), MEASUREMENT);
    let object_form = json!({"catalog_version": "7", "entries": [entry_one(), entry_two()]});
    assert_eq!(
        load(&object_form)
            .unwrap()
            .measurement()
            .digest()
            .to_string(),
        MEASUREMENT
    );
}

#[test]
fn changing_any_single_binding_field_changes_it() {
    let changed: Vec<(&str, Value)> = vec![
        (
            "url",
            with(
                entry_one(),
                "/server/url",
                json!("https://mcp2.salesforce.com/mcp"),
            ),
        ),
        (
            "tls_fingerprint",
            with(entry_one(), "/server/tls_fingerprint", json!(FP_B)),
        ),
        (
            "backup_fingerprints",
            with(entry_one(), "/server/backup_fingerprints", json!([FP_A2])),
        ),
        (
            "spiffe_id",
            with(
                entry_one(),
                "/server/spiffe_id",
                json!("spiffe://corp.example/salesforce/other"),
            ),
        ),
        (
            "spiffe_id removed",
            without(entry_one(), "/server/spiffe_id"),
        ),
        (
            "tls_fingerprint removed",
            without(entry_one(), "/server/tls_fingerprint"),
        ),
        (
            "rotation_mode",
            with(entry_one(), "/server/rotation_mode", json!("cert-pinned")),
        ),
        (
            "definition",
            with(
                with(
                    entry_one(),
                    "/approved_definition/description",
                    json!("Query Salesforce records by SOQL."),
                ),
                "/definition_hash",
                json!(H1_CHANGED),
            ),
        ),
        (
            "upstream_name",
            with(
                with(entry_one(), "/upstream_name", json!("query")),
                "/definition_hash",
                json!(H1_UPSTREAM_QUERY),
            ),
        ),
        (
            "tool_name",
            with(
                with(entry_one(), "/tool_name", json!("sf.query")),
                "/upstream_name",
                json!("salesforce.query"),
            ),
        ),
    ];
    let mut seen = BTreeSet::from([MEASUREMENT.to_owned()]);
    for (field, entry) in changed {
        let digest = measurement_of(vec![entry, entry_two()]);
        assert!(
            seen.insert(digest.clone()),
            "changing {field} did not change the measurement: {digest}"
        );
    }
}

#[test]
fn what_is_not_a_binding_does_not_change_it() {
    let same: Vec<(&str, Value)> = vec![
        (
            "display_name",
            with(entry_one(), "/server/display_name", json!("Another name")),
        ),
        (
            "display_name removed",
            without(entry_one(), "/server/display_name"),
        ),
        (
            "added_at",
            with(entry_one(), "/added_at", json!("2027-01-01T00:00:00Z")),
        ),
        (
            "approved_by",
            with(
                entry_one(),
                "/approved_by",
                json!("someone.else@example.com"),
            ),
        ),
        (
            "fingerprint spelling",
            with(
                entry_one(),
                "/server/tls_fingerprint",
                json!(crate::support::FP_A.to_uppercase()),
            ),
        ),
        (
            "default rotation_mode omitted",
            without(entry_one(), "/server/rotation_mode"),
        ),
        (
            "upstream_name = tool_name written",
            with(entry_one(), "/upstream_name", json!("salesforce.query")),
        ),
        ("definition member spelling", {
            let entry = without(entry_one(), "/approved_definition/input_schema");
            with(
                entry,
                "/approved_definition/inputSchema",
                json!({"type": "object", "properties": {"query": {"type": "string"}}}),
            )
        }),
    ];
    for (field, entry) in same {
        assert_eq!(
            measurement_of(vec![entry, entry_two()]),
            MEASUREMENT,
            "{field}"
        );
    }
}

#[test]
fn backup_fingerprints_are_a_set() {
    let fp_c = "SHA256:0000000000000000000000000000000000000000000000000000000000000001";
    let forward = with(
        entry_one(),
        "/server/backup_fingerprints",
        json!([FP_A2, fp_c]),
    );
    let backward = with(
        entry_one(),
        "/server/backup_fingerprints",
        json!([fp_c, FP_A2]),
    );
    assert_eq!(
        measurement_of(vec![forward]),
        measurement_of(vec![backward])
    );
}

#[test]
fn a_default_tls_trust_written_out_measures_as_left_out() {
    // Not in the list above: both of its entries carry a spiffe_id, next to which an explicit
    // `webpki` is refused.
    let fingerprint_only = without(entry_one(), "/server/spiffe_id");
    let written = with(
        fingerprint_only.clone(),
        "/server/tls_trust",
        json!("webpki"),
    );
    assert_eq!(
        measurement_of(vec![written]),
        measurement_of(vec![fingerprint_only])
    );
}
