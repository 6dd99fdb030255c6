//! The properties seed 000 §8 pins, and `CatalogDiff` on small catalogs.

use catalog_fold::{CatalogDiff, CatalogDigest, ChangedTool};
use catalog_key::ToolKey;
use jcs_digest::Profile;
use proptest::strategy::Strategy as _;
use serde_json::{Value, json};

use crate::support::{pinned_catalog, sha256_text};

fn digest(tools: &[Value]) -> CatalogDigest {
    CatalogDigest::compute(tools, Profile::Trace).unwrap()
}

#[test]
fn meta_and_unknown_members_do_not_change_a_digest() {
    let plain = digest(&[json!({"name": "a", "description": "x"})]);
    let decorated = digest(&[json!({
        "name": "a",
        "description": "x",
        "_meta": {"_fastmcp": {"tags": ["t"]}},
        "icons": [{"src": "https://example.invalid/a.png"}],
        "execution": {"taskSupport": "optional"}
    })]);
    assert_eq!(plain, decorated);
    let lines = format!(
        "tool:a={}",
        sha256_text(
            r#"{"profile":"trace.mcp-tool-definition.v1","tool":{"description":"x","name":"a"}}"#
        )
    );
    assert_eq!(plain.fold_lines(), lines);
    assert_eq!(plain.catalog().to_string(), sha256_text(&lines));
}

#[test]
fn null_and_absent_are_the_same_and_empty_string_is_not() {
    let absent = digest(&[json!({"name": "a"})]);
    let null = digest(&[json!({"name": "a", "title": null, "annotations": null})]);
    let empty = digest(&[json!({"name": "a", "title": ""})]);
    assert_eq!(absent.catalog(), null.catalog());
    assert_ne!(absent.catalog(), empty.catalog());
    assert_eq!(
        empty.fold_lines(),
        format!(
            "tool:a={}",
            sha256_text(
                r#"{"profile":"trace.mcp-tool-definition.v1","tool":{"name":"a","title":""}}"#
            )
        )
    );
}

#[test]
fn name_absent_null_or_empty_is_keyed_unnamed() {
    let preimage = |tool: &str| {
        sha256_text(&format!(
            r#"{{"profile":"trace.mcp-tool-definition.v1","tool":{tool}}}"#
        ))
    };
    for tool in [
        json!({"description": "d"}),
        json!({"name": null, "description": "d"}),
    ] {
        assert_eq!(
            digest(&[tool]).fold_lines(),
            format!("tool:unnamed={}", preimage(r#"{"description":"d"}"#))
        );
    }
    // "" is kept in the preimage (only null and absent are omitted), but keyed unnamed too.
    assert_eq!(
        digest(&[json!({"name": "", "description": "d"})]).fold_lines(),
        format!(
            "tool:unnamed={}",
            preimage(r#"{"description":"d","name":""}"#)
        )
    );
}

#[test]
fn reordering_the_array_is_not_drift() {
    let mut tools =
        crate::support::read_both(&pinned_catalog("everything-tools-list.json")).unwrap();
    let before = digest(&tools);
    tools.reverse();
    tools.rotate_left(5);
    let after = digest(&tools);
    assert_eq!(before.catalog(), after.catalog());
    assert!(CatalogDiff::between(&before, &after).is_empty());
}

#[test]
fn diff_lists_added_removed_and_changed_sorted_by_key() {
    let old = digest(&[
        json!({"name": "keep", "description": "same"}),
        json!({"name": "gone"}),
        json!({"name": "move", "description": "before"}),
        json!({"name": "also_gone"}),
    ]);
    let new = digest(&[
        json!({"name": "new_b"}),
        json!({"name": "move", "description": "after"}),
        json!({"name": "keep", "description": "same"}),
        json!({"name": "new_a"}),
    ]);
    let diff = CatalogDiff::between(&old, &new);
    assert!(!diff.is_empty());
    let key = ToolKey::from_name;
    let names = |list: &[(ToolKey, jcs_digest::Digest)]| -> Vec<String> {
        list.iter().map(|(k, _)| k.to_string()).collect()
    };
    assert_eq!(names(diff.added()), ["tool:new_a", "tool:new_b"]);
    assert_eq!(names(diff.removed()), ["tool:also_gone", "tool:gone"]);
    assert_eq!(diff.added()[0].1, new.tools()[&key("new_a")]);
    assert_eq!(diff.removed()[1].1, old.tools()[&key("gone")]);
    assert_eq!(
        diff.changed(),
        [ChangedTool {
            key: key("move"),
            old: old.tools()[&key("move")],
            new: new.tools()[&key("move")],
        }]
    );
    assert!(CatalogDiff::between(&old, &old).is_empty());
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Any order of the same definitions folds to the same text and digest, duplicates
    /// included (names from a small alphabet repeat often).
    #[test]
    fn any_order_of_the_same_definitions_is_not_drift(
        (tools, shuffled) in proptest::collection::vec(("[a-c]{0,2}", "[xy ]{0,3}"), 0..40)
            .prop_flat_map(|pairs| {
                let tools: Vec<Value> = pairs
                    .into_iter()
                    .map(|(name, description)| json!({"name": name, "description": description}))
                    .collect();
                (proptest::strategy::Just(tools.clone()), proptest::strategy::Just(tools).prop_shuffle())
            })
    ) {
        let before = digest(&tools);
        let after = digest(&shuffled);
        proptest::prop_assert_eq!(before.fold_lines(), after.fold_lines());
        proptest::prop_assert_eq!(before.catalog(), after.catalog());
        proptest::prop_assert!(CatalogDiff::between(&before, &after).is_empty());
    }
}
