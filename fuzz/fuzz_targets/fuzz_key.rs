//! Fuzz `catalog_key`: for any name (arbitrary bytes taken as UTF-8, lossily), the key keeps
//! the seed 000 §4 invariants and reads back through `FromStr`.
#![no_main]

use catalog_key::{CUT_PREFIX_LEN, MAX_BODY_LEN, ToolKey, decode_body};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let name = String::from_utf8_lossy(data);
    let key = ToolKey::from_name(&name);
    let body = key.body();

    // `tool:` + printable ASCII without `=`, bounded.
    assert!(key.as_str().starts_with("tool:"));
    assert!(!body.is_empty());
    assert!(body.len() <= MAX_BODY_LEN);
    assert!(body.bytes().all(|b| (0x21..=0x7E).contains(&b) && b != b'='));

    // Deterministic.
    assert_eq!(ToolKey::from_name(&name), key);

    // Every produced key reads back unchanged.
    assert_eq!(key.as_str().parse::<ToolKey>().as_ref(), Ok(&key));

    let decoded = decode_body(body);
    if name.is_empty() {
        assert_eq!(key, ToolKey::unnamed());
    } else if key.is_cut() {
        let suffix = &body[CUT_PREFIX_LEN..];
        assert_eq!(body.len(), CUT_PREFIX_LEN + 17);
        assert!(suffix.starts_with('~'));
        assert!(suffix[1..].bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')));
        // Only a literal name that happens to have the cut shape decodes to itself.
        if decoded.as_deref() == Some(name.as_bytes()) {
            assert_eq!(body, &*name);
        }
    } else {
        // Injective: an uncut body decodes back to exactly the name.
        assert_eq!(decoded.as_deref(), Some(name.as_bytes()));
    }
});
