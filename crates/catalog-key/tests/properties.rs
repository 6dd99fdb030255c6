//! Property tests over arbitrary names (seed 000 §4 invariants).

use catalog_key::{CUT_PREFIX_LEN, MAX_BODY_LEN, ToolKey, decode_body};
use proptest::prelude::*;

/// Names drawn from arbitrary Unicode and, separately, from a small alphabet of characters
/// that exercise every rule (literals, `%`, `=`, space, controls, DEL, 2- and 4-byte UTF-8),
/// long enough to cross the 128-character cut often.
fn names() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[a-z~%= \\x00-\\x1f\\x7fé🚀]{0,200}",
        "[a-z]{90,140}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn key_is_tool_prefix_and_printable_ascii_without_equals(name in names()) {
        let key = ToolKey::from_name(&name);
        prop_assert!(key.as_str().starts_with("tool:"));
        prop_assert!(key.body().bytes().all(|b| (0x21..=0x7E).contains(&b) && b != b'='));
        prop_assert!(!key.body().is_empty());
    }

    #[test]
    fn body_is_at_most_128_characters(name in names()) {
        prop_assert!(ToolKey::from_name(&name).body().len() <= MAX_BODY_LEN);
    }

    #[test]
    fn uncut_bodies_decode_back_to_the_name(name in names()) {
        let key = ToolKey::from_name(&name);
        let decoded = decode_body(key.body());
        if name.is_empty() {
            // Rule 1: the empty name shares its body with the name "unnamed".
            prop_assert_eq!(decoded, Some(b"unnamed".to_vec()));
        } else if key.is_cut() {
            // A cut body never decodes to the name, except for a name whose literal encoding
            // happens to have the cut shape (see the crate docs): then body and name are equal.
            if decoded.as_deref() == Some(name.as_bytes()) {
                prop_assert_eq!(key.body(), name.as_str());
            }
        } else {
            prop_assert_eq!(decoded, Some(name.as_bytes().to_vec()));
        }
    }

    #[test]
    fn cut_bodies_are_96_characters_tilde_and_16_lowercase_hex(name in names()) {
        let key = ToolKey::from_name(&name);
        let body = key.body();
        if key.is_cut() {
            prop_assert_eq!(body.len(), CUT_PREFIX_LEN + 1 + 16);
            prop_assert_eq!(&body[CUT_PREFIX_LEN..CUT_PREFIX_LEN + 1], "~");
            prop_assert!(body[CUT_PREFIX_LEN + 1..].bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
        }
    }

    #[test]
    fn deterministic(name in names()) {
        prop_assert_eq!(ToolKey::from_name(&name), ToolKey::from_name(&name.clone()));
    }

    #[test]
    fn from_str_accepts_every_produced_key(name in names()) {
        let key = ToolKey::from_name(&name);
        prop_assert_eq!(key.as_str().parse::<ToolKey>(), Ok(key.clone()));
    }
}
