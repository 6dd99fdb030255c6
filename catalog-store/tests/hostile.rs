//! Hostile input: whatever the bytes, loading returns a catalog or errors, never panics.

use catalog_store::Catalog;
use proptest::prelude::*;
use serde_json::json;

use crate::support::{entry_one, entry_two};

fn valid_catalog_bytes() -> Vec<u8> {
    serde_json::to_vec_pretty(
        &json!({"catalog_version": "1", "entries": [entry_one(), entry_two()]}),
    )
    .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = Catalog::from_slice(&bytes);
    }

    #[test]
    fn a_valid_catalog_with_bytes_changed_never_panics(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)
    ) {
        let mut bytes = valid_catalog_bytes();
        for (index, byte) in edits {
            let at = index.index(bytes.len());
            bytes[at] = byte;
        }
        match Catalog::from_slice(&bytes) {
            // Whatever loads is internally consistent: every entry can be looked up.
            Ok(catalog) => {
                for entry in catalog.entries() {
                    prop_assert!(catalog.lookup(entry.tool_name()).is_some());
                }
            }
            // Whatever does not load says why.
            Err(error) => prop_assert!(!error.errors().is_empty()),
        }
    }
}

#[test]
fn deep_nesting_in_a_definition_is_an_error_not_a_stack_overflow() {
    let depth = 100_000;
    let text = format!(
        "[{{\"tool_name\":\"t\",\"approved_definition\":{{\"inputSchema\":{}{}}}}}]",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    let error = Catalog::from_slice(text.as_bytes()).unwrap_err();
    assert!(
        error.to_string().contains("nested deeper than the limit"),
        "{error}"
    );
}
