//! Fuzz `catalog_key`: for any name (arbitrary bytes taken as UTF-8, lossily), the key is what an
//! independent, byte-by-byte reading of seed 000 §4 gives, keeps its invariants, and reads back
//! through `FromStr`; the same bytes read as key text are accepted only if they are a key that
//! `from_name` produces (for uncut bodies).
#![no_main]

use catalog_key::{CUT_PREFIX_LEN, MAX_BODY_LEN, ToolKey, decode_body};
use libfuzzer_sys::fuzz_target;

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

fuzz_target!(|data: &[u8]| {
    let name = String::from_utf8_lossy(data);
    let key = ToolKey::from_name(&name);
    let body = key.body();

    // `tool:` + printable ASCII without `=`, bounded.
    assert!(key.as_str().starts_with("tool:"));
    assert!(!body.is_empty());
    assert!(body.len() <= MAX_BODY_LEN);
    assert!(
        body.bytes()
            .all(|b| (0x21..=0x7E).contains(&b) && b != b'=')
    );

    // Deterministic.
    assert_eq!(ToolKey::from_name(&name), key);

    // Every produced key reads back unchanged.
    assert_eq!(key.as_str().parse::<ToolKey>().as_ref(), Ok(&key));

    let encoded = encode_independently(&name);
    let decoded = decode_body(body);
    if name.is_empty() {
        assert_eq!(key, ToolKey::unnamed());
    } else if encoded.len() > MAX_BODY_LEN {
        // Rule 3: 96 characters of the encoding as they fall, `~`, 16 lowercase hex.
        assert!(key.is_cut());
        assert_eq!(body.len(), CUT_PREFIX_LEN + 17);
        assert_eq!(&body[..CUT_PREFIX_LEN], &encoded[..CUT_PREFIX_LEN]);
        assert_eq!(&body[CUT_PREFIX_LEN..=CUT_PREFIX_LEN], "~");
        assert!(
            body[CUT_PREFIX_LEN + 1..]
                .bytes()
                .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        );
        // A cut body never decodes to the name it came from.
        assert_ne!(decoded.as_deref(), Some(name.as_bytes()));
    } else {
        // Uncut: the body is the encoding, and decodes back to exactly the name (injective).
        assert_eq!(body, encoded);
        assert_eq!(decoded.as_deref(), Some(name.as_bytes()));
    }

    // The same bytes as key text, with and without the prefix (libFuzzer rarely guesses it).
    check_key_text(&name);
    check_key_text(&format!("tool:{name}"));
});

/// Hostile key text: `FromStr` never panics, and what it accepts has the key invariants; an
/// accepted uncut body is exactly the key of the name it decodes to.
fn check_key_text(text: &str) {
    let Ok(key) = text.parse::<ToolKey>() else {
        return;
    };
    let body = key.body();
    assert!(!body.is_empty() && body.len() <= MAX_BODY_LEN);
    assert!(
        body.bytes()
            .all(|b| (0x21..=0x7E).contains(&b) && b != b'=')
    );
    if !key.is_cut() {
        let decoded = decode_body(body).expect("an accepted uncut body decodes");
        let name = String::from_utf8(decoded).expect("decoded names are UTF-8");
        assert_eq!(ToolKey::from_name(&name), key);
    }
}
