//! Property tests over arbitrary names (seed 000 §4 invariants).

use catalog_key::{CUT_PREFIX_LEN, MAX_BODY_LEN, ToolKey, decode_body};
use proptest::prelude::*;
use sha2::{Digest as _, Sha256};

/// Rule 2, written independently of the crate: literal 0x21–0x7E except `%` and `=`, else `%XX`.
fn encode_independently(name: &str) -> String {
    name.bytes()
        .map(|b| {
            if (0x21..=0x7E).contains(&b) && b != b'%' && b != b'=' {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Names drawn from arbitrary Unicode and, separately, from a small alphabet of characters
/// that exercise every rule (literals, `%`, `=`, space, controls, DEL, 2- and 4-byte UTF-8),
/// long enough to cross the 128-character cut often.
fn names() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[a-z~%= \\x00-\\x1f\\x7fé🚀]{0,200}",
        "[a-z]{90,140}",
        // Names whose uncut encoding has the cut shape: 96 characters, `~`, 16 hex.
        "( {32}|a{96}|%{16}a{48}|é{16})~[0-9a-f]{16}",
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
    fn key_is_the_rule_applied_independently(name in names()) {
        let key = ToolKey::from_name(&name);
        let encoded = encode_independently(&name);
        let decoded = decode_body(key.body());
        if name.is_empty() {
            // Rule 1: the empty name shares its body with the name "unnamed".
            prop_assert_eq!(key.body(), "unnamed");
            prop_assert_eq!(decoded, Some(b"unnamed".to_vec()));
        } else if encoded.len() > MAX_BODY_LEN {
            // Rule 3: 96 characters as they fall, `~`, 16 lowercase hex of SHA-256(name).
            let hash = Sha256::digest(name.as_bytes());
            let suffix: String = hash.iter().take(8).map(|b| format!("{b:02x}")).collect();
            prop_assert_eq!(key.body(), format!("{}~{suffix}", &encoded[..CUT_PREFIX_LEN]));
            prop_assert!(key.is_cut());
            // A cut body never decodes to the name it came from.
            prop_assert_ne!(decoded, Some(name.as_bytes().to_vec()));
        } else {
            // Uncut bodies are the encoding and decode back to exactly the name (injective).
            prop_assert_eq!(key.body(), encoded.as_str());
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    /// Hostile key text: what `FromStr` accepts has the key invariants, and an accepted uncut
    /// body is exactly the key of the name it decodes to.
    #[test]
    fn from_str_accepts_only_keys_that_names_produce(
        body in prop_oneof![any::<String>(), "(%[0-9A-Fa-f]{0,2}|[a-z= ~]){0,130}"]
    ) {
        let text = format!("tool:{body}");
        if let Ok(key) = text.parse::<ToolKey>() {
            prop_assert_eq!(key.as_str(), text.as_str());
            prop_assert!(key.body().len() <= MAX_BODY_LEN);
            prop_assert!(key.body().bytes().all(|b| (0x21..=0x7E).contains(&b) && b != b'='));
            if !key.is_cut() {
                let name = String::from_utf8(decode_body(key.body()).unwrap()).unwrap();
                prop_assert_eq!(ToolKey::from_name(&name), key);
            }
        }
    }
}
