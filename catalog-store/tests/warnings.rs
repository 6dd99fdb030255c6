//! Warnings do not refuse a catalog: each asserts its exact message.

use catalog_store::{CatalogWarning, LookalikeRule};
use serde_json::json;

use crate::support::{FP_B, entry_one, entry_one_named, load_valid, with, without};

/// `entry` moved to the seed's `legacy-crm.internal` server.
fn on_legacy(entry: serde_json::Value) -> serde_json::Value {
    let entry = with(
        entry,
        "/server/url",
        json!("https://legacy-crm.internal/mcp"),
    );
    let entry = with(entry, "/server/tls_fingerprint", json!(FP_B));
    without(entry, "/server/spiffe_id")
}

/// [`entry_one`] as `tool_name`; `upstream_name` keeps the definition hash as it was.
fn renamed(tool_name: &str) -> serde_json::Value {
    with(
        with(entry_one(), "/tool_name", json!(tool_name)),
        "/upstream_name",
        json!("salesforce.query"),
    )
}

fn messages(catalog: &catalog_store::Catalog) -> Vec<String> {
    catalog.warnings().iter().map(ToString::to_string).collect()
}

#[test]
fn a_name_with_a_character_mcp_does_not_recommend_is_a_warning() {
    let catalog = load_valid(vec![entry_one_named("sales force")]);
    assert_eq!(
        messages(&catalog),
        [
            "entry 0 (tool_name \"sales force\"): the name contains ' ', outside MCP's recommended \
          tool name characters [A-Za-z0-9_.-]; some clients refuse or alter such names: consider \
          renaming the tool (upstream_name keeps the upstream's own name)"
        ]
    );
    assert!(matches!(
        catalog.warnings()[0],
        CatalogWarning::NameNotRecommended {
            index: 0,
            character: Some(' '),
            length: 11,
            ..
        }
    ));
}

#[test]
fn a_name_over_128_characters_is_a_warning() {
    // upstream_name keeps the definition (and so its hash) as it was.
    let long = "a".repeat(129);
    let entry = with(
        with(entry_one(), "/tool_name", json!(long)),
        "/upstream_name",
        json!("salesforce.query"),
    );
    assert_eq!(
        messages(&load_valid(vec![entry])),
        [format!(
            "entry 0 (tool_name \"{long}\"): the name is 129 characters long, over MCP's \
             recommended 128; some clients refuse or alter such names: consider renaming the tool \
             (upstream_name keeps the upstream's own name)"
        )]
    );
    let exactly_128 = with(
        with(entry_one(), "/tool_name", json!("a".repeat(128))),
        "/upstream_name",
        json!("salesforce.query"),
    );
    assert_eq!(
        messages(&load_valid(vec![exactly_128])),
        Vec::<String>::new()
    );
}

#[test]
fn names_equal_ignoring_case_on_different_servers_are_lookalikes() {
    let catalog = load_valid(vec![
        entry_one(),
        on_legacy(entry_one_named("Salesforce.Query")),
    ]);
    assert_eq!(
        messages(&catalog),
        [
            "entry 1 (tool_name \"Salesforce.Query\") on https://legacy-crm.internal/mcp looks like \
          entry 0 (tool_name \"salesforce.query\") on https://mcp.salesforce.com/mcp: the names \
          are equal ignoring case, so a client or model may call one meaning the other; rename \
          one so that they differ in more than case"
        ]
    );
    assert!(matches!(
        catalog.warnings()[0],
        CatalogWarning::Lookalike {
            index: 1,
            other_index: 0,
            rule: LookalikeRule::Case,
            ..
        }
    ));
}

#[test]
fn names_equal_without_separators_on_different_servers_are_lookalikes() {
    let catalog = load_valid(vec![
        entry_one(),
        on_legacy(entry_one_named("salesforce_query")),
    ]);
    assert_eq!(
        messages(&catalog),
        [
            "entry 1 (tool_name \"salesforce_query\") on https://legacy-crm.internal/mcp looks like \
          entry 0 (tool_name \"salesforce.query\") on https://mcp.salesforce.com/mcp: the names \
          are equal once '-', '_' and '.' are removed and case is ignored, so a client or model \
          may call one meaning the other; rename one so that they differ in more than \
          punctuation and case"
        ]
    );
}

#[test]
fn lookalikes_on_one_server_are_the_server_s_own_business() {
    let catalog = load_valid(vec![
        entry_one(),
        entry_one_named("Salesforce.Query"),
        entry_one_named("salesforce_query"),
    ]);
    assert_eq!(catalog.warnings(), &[]);
}

#[test]
fn a_later_entry_on_the_first_server_is_paired_with_the_first_other_server() {
    // 0 on A, 1 on B, 2 on A again: entry 2 looks like entry 1 (the earliest on another server).
    let catalog = load_valid(vec![
        entry_one(),
        on_legacy(entry_one_named("Salesforce.Query")),
        entry_one_named("salesforce_query"),
    ]);
    let pairs: Vec<(usize, usize, LookalikeRule)> = catalog
        .warnings()
        .iter()
        .map(|w| match w {
            CatalogWarning::Lookalike {
                index,
                other_index,
                rule,
                ..
            } => (*index, *other_index, *rule),
            other => panic!("{other}"),
        })
        .collect();
    assert_eq!(
        pairs,
        [
            (1, 0, LookalikeRule::Case),
            (2, 1, LookalikeRule::Separators)
        ]
    );
}

#[test]
fn names_equal_after_nfc_but_written_differently_are_a_warning() {
    // "café" precomposed (U+00E9) and decomposed (e + U+0301): one name to the eye and to a
    // client that normalizes, two to the gateway. Reported whatever the servers.
    let catalog = load_valid(vec![
        renamed("caf\u{e9}.query"),
        renamed("cafe\u{301}.query"),
    ]);
    let warnings = messages(&catalog);
    assert_eq!(warnings.len(), 3, "{warnings:#?}");
    assert_eq!(
        warnings[2],
        "entry 1 (tool_name \"cafe\\u{301}.query\", non-ASCII: U+0301) and entry 0 (tool_name \
         \"caf\u{e9}.query\", non-ASCII: U+00E9) are one name after Unicode NFC normalization \
         but differ as written: they look the same to a person, and a client that normalizes \
         names calls one meaning the other; write the names in NFC and rename one"
    );
    assert!(matches!(
        catalog.warnings()[2],
        CatalogWarning::NormalizationCollision {
            index: 1,
            other_index: 0,
            ..
        }
    ));
}

#[test]
fn a_non_ascii_name_that_normalizes_to_an_ascii_one_is_a_warning() {
    // U+212A KELVIN SIGN normalizes (NFC) to the letter K.
    let catalog = load_valid(vec![renamed("K.query"), renamed("\u{212a}.query")]);
    assert_eq!(
        messages(&catalog).last().map(String::as_str),
        Some(
            "entry 1 (tool_name \"\u{212a}.query\", non-ASCII: U+212A) and entry 0 (tool_name \
             \"K.query\", non-ASCII: none) are one name after Unicode NFC normalization but \
             differ as written: they look the same to a person, and a client that normalizes \
             names calls one meaning the other; write the names in NFC and rename one"
        )
    );
}
