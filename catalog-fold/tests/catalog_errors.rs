//! Every reason a tool has no digest, and the message that names each such tool.

use catalog_fold::{CatalogDigest, ToolError, ToolErrorReason};
use catalog_key::ToolKey;
use jcs_digest::{CanonicalizeError, Profile};
use serde_json::json;

#[test]
fn not_an_object() {
    let error =
        CatalogDigest::compute(&[json!({"name": "ok"}), json!("read_wiki")], Profile::Trace)
            .unwrap_err();
    assert_eq!(
        error.tools(),
        [ToolError {
            index: 1,
            key: None,
            reason: ToolErrorReason::NotAnObject { found: "a string" }
        }]
    );
    assert_eq!(
        error.to_string(),
        "the catalog has no digest because 1 tool has none; fix or remove them and digest again:\n  \
         tool #1 (no key) has no digest: it is a string, not an object; every element of \"tools\" must be a tool definition object"
    );
}

#[test]
fn name_that_is_not_a_string() {
    let error = CatalogDigest::compute(&[json!({"name": 42})], Profile::Trace).unwrap_err();
    assert_eq!(
        error.tools(),
        [ToolError {
            index: 0,
            key: None,
            reason: ToolErrorReason::NameNotAString { found: "a number" }
        }]
    );
    assert_eq!(
        error.tools()[0].to_string(),
        "tool #0 (no key) has no digest: its \"name\" is a number, not a string; a tool name must be a string (absent, null or \"\" is keyed tool:unnamed)"
    );
}

#[test]
fn definition_that_cannot_be_canonicalized() {
    // parse_strict refuses such a number, so the value is built in code: 2^53 + 1.
    let tool =
        json!({"name": "ask_wiki_question", "inputSchema": {"maximum": 9_007_199_254_740_993_u64}});
    let error = CatalogDigest::compute(
        &[json!({"name": "a"}), json!({"name": "b"}), tool],
        Profile::Trace,
    )
    .unwrap_err();
    let expected_reason = ToolErrorReason::Canonicalize(CanonicalizeError::IntegerOutOfRange {
        pointer: "/inputSchema/maximum".into(),
        value: "9007199254740993".into(),
    });
    assert_eq!(
        error.tools(),
        [ToolError {
            index: 2,
            key: Some(ToolKey::from_name("ask_wiki_question")),
            reason: expected_reason.clone()
        }]
    );
    assert_eq!(
        error.tools()[0].to_string(),
        format!("tool #2 (tool:ask_wiki_question) has no digest: {expected_reason}")
    );
    assert_eq!(
        expected_reason.to_string(),
        "integer 9007199254740993 at JSON Pointer \"/inputSchema/maximum\" is outside ±(2^53−1) and has no exact RFC 8785 form; write it as a string, or as an f64 if rounding is intended"
    );
}

#[test]
fn a_member_outside_the_six_is_never_canonicalized() {
    // `_meta` is not hashed, so a number it cannot canonicalize does not matter.
    let tool = json!({"name": "a", "_meta": {"n": 9_007_199_254_740_993_u64}});
    assert!(CatalogDigest::compute(&[tool], Profile::Trace).is_ok());
}

#[test]
fn every_tool_without_a_digest_is_listed() {
    let tools = [
        json!(null),
        json!({"name": "fine"}),
        json!({"name": ["x"]}),
        json!({"name": "", "title": -9_007_199_254_740_992_i64}),
    ];
    let error = CatalogDigest::compute(&tools, Profile::Trace).unwrap_err();
    let indexes: Vec<usize> = error.tools().iter().map(|tool| tool.index).collect();
    assert_eq!(indexes, [0, 2, 3]);
    assert_eq!(
        error.to_string(),
        "the catalog has no digest because 3 tools have none; fix or remove them and digest again:\n  \
         tool #0 (no key) has no digest: it is null, not an object; every element of \"tools\" must be a tool definition object\n  \
         tool #2 (no key) has no digest: its \"name\" is an array, not a string; a tool name must be a string (absent, null or \"\" is keyed tool:unnamed)\n  \
         tool #3 (tool:unnamed) has no digest: integer -9007199254740992 at JSON Pointer \"/title\" is outside ±(2^53−1) and has no exact RFC 8785 form; write it as a string, or as an f64 if rounding is intended"
    );
}

#[test]
fn message_names_the_first_20_tools_and_counts_the_rest() {
    let tools = vec![json!(1); 23];
    let error = CatalogDigest::compute(&tools, Profile::Trace).unwrap_err();
    assert_eq!(error.tools().len(), 23);
    let message = error.to_string();
    let lines: Vec<&str> = message.lines().collect();
    assert_eq!(lines.len(), 1 + 20 + 1);
    assert_eq!(
        lines[0],
        "the catalog has no digest because 23 tools have none; fix or remove them and digest again:"
    );
    assert_eq!(
        lines[20],
        "  tool #19 (no key) has no digest: it is a number, not an object; every element of \"tools\" must be a tool definition object"
    );
    assert_eq!(lines[21], "  … and 3 more");
}
