//! The cases of seed 000 §4, expected keys written by hand from the rules.
//!
//! The 16-hex suffixes of cut keys were computed independently with
//! `python3 -c "import hashlib;print(hashlib.sha256(NAME.encode()).hexdigest()[:16])"`
//! for the NAME noted next to each one.

use catalog_key::{CUT_PREFIX_LEN, MAX_BODY_LEN, ToolKey};

fn key(name: &str) -> String {
    ToolKey::from_name(name).as_str().to_owned()
}

#[test]
fn constants_are_the_seed_values() {
    assert_eq!(MAX_BODY_LEN, 128);
    assert_eq!(CUT_PREFIX_LEN, 96);
}

#[test]
fn plain_ascii_name_is_literal() {
    let k = ToolKey::from_name("ask_question");
    assert_eq!(k.as_str(), "tool:ask_question");
    assert_eq!(k.body(), "ask_question");
    assert_eq!(k.to_string(), "tool:ask_question");
    assert_eq!(AsRef::<str>::as_ref(&k), "tool:ask_question");
    assert!(!k.is_cut());
}

#[test]
fn every_printable_ascii_character_except_percent_and_equals_is_literal() {
    let name = "!\"#$&'()*+,-./09:;<>?@AZ[\\]^_`az{|}~";
    assert_eq!(key(name), format!("tool:{name}"));
}

#[test]
fn equals_sign_is_encoded() {
    assert_eq!(key("a=b"), "tool:a%3Db");
}

#[test]
fn percent_sign_is_encoded() {
    assert_eq!(key("100%"), "tool:100%25");
    // An existing escape in a name is not trusted: its `%` is encoded too.
    assert_eq!(key("%41"), "tool:%2541");
}

#[test]
fn space_is_encoded() {
    assert_eq!(key("ask question"), "tool:ask%20question");
}

#[test]
fn control_characters_and_del_are_encoded() {
    assert_eq!(key("a\nb"), "tool:a%0Ab");
    assert_eq!(key("\u{0}\t\r\u{1f}"), "tool:%00%09%0D%1F");
    assert_eq!(key("del\u{7f}"), "tool:del%7F");
}

#[test]
fn two_byte_utf8_is_encoded_with_uppercase_hex() {
    // U+00E9 is C3 A9 in UTF-8.
    assert_eq!(key("café"), "tool:caf%C3%A9");
    // U+0080 (C2 80), the first non-ASCII code point, a C1 control.
    assert_eq!(key("\u{80}"), "tool:%C2%80");
}

#[test]
fn three_and_four_byte_utf8_is_encoded() {
    // U+65E5 is E6 97 A5; U+1F680 is F0 9F 9A 80.
    assert_eq!(key("日"), "tool:%E6%97%A5");
    assert_eq!(key("go🚀"), "tool:go%F0%9F%9A%80");
}

#[test]
fn empty_name_is_unnamed() {
    assert_eq!(ToolKey::from_name(""), ToolKey::unnamed());
    assert_eq!(ToolKey::unnamed().as_str(), "tool:unnamed");
    assert_eq!(ToolKey::unnamed().body(), "unnamed");
}

#[test]
fn a_tool_named_unnamed_shares_the_key_of_the_empty_name() {
    // The one point where the key is not injective, as seed 000 §4 rule 1 is written.
    assert_eq!(ToolKey::from_name("unnamed"), ToolKey::from_name(""));
}

#[test]
fn body_of_exactly_128_ascii_characters_stays_literal() {
    let name = "a".repeat(128);
    let k = ToolKey::from_name(&name);
    assert_eq!(k.as_str(), format!("tool:{name}"));
    assert!(!k.is_cut());
}

#[test]
fn encoded_body_of_exactly_128_characters_stays_literal() {
    // 125 literal characters + one space (%20) = 128 encoded characters.
    let name = format!("{} ", "a".repeat(125));
    assert_eq!(key(&name), format!("tool:{}%20", "a".repeat(125)));
}

#[test]
fn body_of_129_ascii_characters_is_cut() {
    // NAME = 'b'*129 → 75c76be2aed27723
    let k = ToolKey::from_name(&"b".repeat(129));
    assert_eq!(
        k.as_str(),
        format!("tool:{}~75c76be2aed27723", "b".repeat(96))
    );
    assert!(k.is_cut());
    assert_eq!(k.body().len(), 96 + 1 + 16);
}

#[test]
fn body_of_200_ascii_characters_is_cut() {
    // NAME = ''.join(chr(0x61 + i % 26) for i in range(200)) → 8013a82140d91657
    let name: String = (0..200u8).map(|i| char::from(b'a' + i % 26)).collect();
    let expected_prefix = format!(
        "{alphabet}{alphabet}{alphabet}abcdefghijklmnopqr",
        alphabet = "abcdefghijklmnopqrstuvwxyz"
    );
    assert_eq!(expected_prefix.len(), 96);
    assert_eq!(
        key(&name),
        format!("tool:{expected_prefix}~8013a82140d91657")
    );
}

#[test]
fn fifty_two_byte_characters_are_cut() {
    // 50 × "é" encodes to 300 characters; 96 of them are 16 whole "%C3%A9" pairs.
    // NAME = 'é'*50 → 2d18fe4b61f01139
    let k = ToolKey::from_name(&"é".repeat(50));
    assert_eq!(
        k.as_str(),
        format!("tool:{}~2d18fe4b61f01139", "%C3%A9".repeat(16))
    );
    assert!(k.is_cut());
}

#[test]
fn cut_landing_after_the_percent_of_a_triplet_keeps_the_percent() {
    // "a"*95 then "%20"×20: character 96 is the "%" of the first triplet.
    // NAME = 'a'*95 + ' '*20 → 48a01c6ded5003b8
    let name = format!("{}{}", "a".repeat(95), " ".repeat(20));
    assert_eq!(
        key(&name),
        format!("tool:{}%~48a01c6ded5003b8", "a".repeat(95))
    );
}

#[test]
fn cut_landing_after_the_first_hex_digit_of_a_triplet_keeps_both() {
    // "a"*94 then "%20"×20: characters 95 and 96 are "%2".
    // NAME = 'a'*94 + ' '*20 → 5922c63434334b6a
    let name = format!("{}{}", "a".repeat(94), " ".repeat(20));
    assert_eq!(
        key(&name),
        format!("tool:{}%2~5922c63434334b6a", "a".repeat(94))
    );
}

#[test]
fn cut_landing_at_the_end_of_a_triplet_keeps_the_whole_triplet() {
    // NAME = 'a'*93 + ' '*20 → 9dbe9f93fa06bb4f
    let name = format!("{}{}", "a".repeat(93), " ".repeat(20));
    assert_eq!(
        key(&name),
        format!("tool:{}%20~9dbe9f93fa06bb4f", "a".repeat(93))
    );
}

#[test]
fn cut_is_decided_on_the_encoded_length_not_the_name_length() {
    // 127 source characters, 132 encoded characters: cut.
    // NAME = 'a'*126 + 'é' → a148c39a2c1aa8bd
    let name = format!("{}é", "a".repeat(126));
    assert_eq!(name.chars().count(), 127);
    assert_eq!(
        key(&name),
        format!("tool:{}~a148c39a2c1aa8bd", "a".repeat(96))
    );
}

#[test]
fn four_byte_characters_cut_inside_a_character() {
    // 40 × U+1F680 encodes to 480 characters; 96 = 8 whole characters of 12.
    // NAME = '🚀'*40 → bbf69df0d9688fbd
    assert_eq!(
        key(&"🚀".repeat(40)),
        format!("tool:{}~bbf69df0d9688fbd", "%F0%9F%9A%80".repeat(8))
    );
}

#[test]
fn keys_order_by_their_text() {
    let mut keys = ["b", "B", "a b", "a"].map(ToolKey::from_name);
    keys.sort();
    let texts = keys.each_ref().map(ToolKey::as_str);
    assert_eq!(texts, ["tool:B", "tool:a", "tool:a%20b", "tool:b"]);
}

#[test]
fn a_literal_name_with_the_cut_shape_is_reported_as_cut() {
    // Documented property: `is_cut` judges by shape, and this name is not cut at all.
    let name = format!("{}~0123456789abcdef", "a".repeat(96));
    let k = ToolKey::from_name(&name);
    assert_eq!(k.body(), name);
    assert!(k.is_cut());
    assert_eq!(catalog_key::decode_body(k.body()), Some(name.into_bytes()));
}

#[test]
fn an_uncut_encoding_with_the_cut_shape_decodes_to_its_name() {
    // Regression (found by fuzz_key): a name with escapes whose whole encoding is 113
    // characters of the cut shape is not cut, and still decodes back to the name.
    let name = format!("{}~0123456789abcdef", " ".repeat(32));
    let k = ToolKey::from_name(&name);
    assert_eq!(k.body(), format!("{}~0123456789abcdef", "%20".repeat(32)));
    assert!(k.is_cut());
    assert_eq!(catalog_key::decode_body(k.body()), Some(name.into_bytes()));
}
