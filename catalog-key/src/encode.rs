//! The body encoding of seed 000 §4 rules 2 and 3, and its inverse for uncut bodies.

use percent_encoding::{AsciiSet, CONTROLS, percent_decode_str, utf8_percent_encode};
use sha2::{Digest as _, Sha256};

use crate::key::{CUT_PREFIX_LEN, MAX_BODY_LEN};

/// The ASCII bytes rule 2 encodes: controls (0x00–0x1F and DEL 0x7F), space, `%` and `=`.
/// `percent-encoding` always encodes non-ASCII bytes, and writes uppercase hex.
const KEY_BODY_ENCODE_SET: &AsciiSet = &CONTROLS.add(b' ').add(b'%').add(b'=');

/// Length of the hash suffix appended by rule 3 (lowercase hex characters).
pub(crate) const CUT_HASH_HEX_LEN: usize = 16;

/// Length of a cut body: prefix, `~`, hash suffix.
pub(crate) const CUT_BODY_LEN: usize = CUT_PREFIX_LEN + 1 + CUT_HASH_HEX_LEN;

/// Rule 2: the percent-encoded body of a non-empty name, before any cut.
fn encode_uncut(name: &str) -> String {
    utf8_percent_encode(name, KEY_BODY_ENCODE_SET).collect()
}

/// Rules 1–3: appends the key body of `name` to `out`, which the caller has started with the
/// key's prefix (one allocation per key instead of one for the body and one for the key).
pub(crate) fn push_body(out: &mut String, name: &str) {
    if name.is_empty() {
        out.push_str("unnamed");
        return;
    }
    let start = out.len();
    out.extend(utf8_percent_encode(name, KEY_BODY_ENCODE_SET));
    if out.len() - start > MAX_BODY_LEN {
        // The encoded body is ASCII, so the character count is the byte count and
        // truncating at byte 96 is a character boundary even inside a `%XX` triplet.
        out.truncate(start + CUT_PREFIX_LEN);
        out.push('~');
        push_hash_suffix(out, name.as_bytes());
    }
}

/// Appends the first 16 lowercase hex characters of SHA-256 over `raw` (rule 3).
fn push_hash_suffix(body: &mut String, raw: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let hash = Sha256::digest(raw);
    for byte in hash.iter().take(CUT_HASH_HEX_LEN / 2) {
        body.push(char::from(HEX[usize::from(byte >> 4)]));
        body.push(char::from(HEX[usize::from(byte & 0x0F)]));
    }
}

/// The inverse of rule 2 for bodies that were not cut.
///
/// Returns the UTF-8 bytes of the name whose uncut encoding is exactly `body`, or `None` if no
/// name encodes to `body` without a cut: the body is empty or longer than [`MAX_BODY_LEN`], it
/// holds a character rule 2 would have encoded, a `%` that does not start an uppercase `%XX`
/// triplet, a triplet for a byte rule 2 writes literally (`%41`), or triplets that do not
/// decode to UTF-8.
///
/// The body `unnamed` decodes to the name `unnamed`, although the empty name has that body too
/// (rule 1). A cut body never decodes to the name it was cut from, but one whose prefix is a
/// complete encoding still decodes (to a 113-character body's worth of name, since rule 3 only
/// cuts bodies longer than 128); check [`ToolKey::is_cut`](crate::ToolKey::is_cut) first if that
/// matters.
///
/// ```
/// assert_eq!(catalog_key::decode_body("caf%C3%A9").as_deref(), Some("café".as_bytes()));
/// assert_eq!(catalog_key::decode_body("caf%c3%a9"), None); // lowercase hex is never produced
/// assert_eq!(catalog_key::decode_body("%41"), None); // `A` is always literal
/// ```
pub fn decode_body(body: &str) -> Option<Vec<u8>> {
    if body.is_empty() || body.len() > MAX_BODY_LEN {
        return None;
    }
    let decoded: Vec<u8> = percent_decode_str(body).collect();
    let name = std::str::from_utf8(&decoded).ok()?;
    // Re-encoding and comparing rejects every non-canonical form at once: stray characters,
    // lowercase or malformed triplets, and triplets for bytes that are written literally.
    if encode_uncut(name) == body {
        Some(decoded)
    } else {
        None
    }
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn hex_is_uppercase_and_del_space_percent_equals_are_encoded() {
        assert_eq!(encode_uncut("\u{7f} %=\u{1f}é"), "%7F%20%25%3D%1F%C3%A9");
    }

    #[test]
    fn every_other_printable_ascii_character_is_literal() {
        let printable: String = (0x21u8..=0x7E)
            .filter(|b| *b != b'%' && *b != b'=')
            .map(char::from)
            .collect();
        assert_eq!(encode_uncut(&printable), printable);
    }

    #[test]
    fn decode_rejects_bodies_with_characters_that_are_encoded() {
        assert_eq!(decode_body("a b"), None);
        assert_eq!(decode_body("a=b"), None);
        assert_eq!(decode_body("a%"), None);
        assert_eq!(decode_body("a%2"), None);
        assert_eq!(decode_body("%FF"), None);
        assert_eq!(decode_body(""), None);
        assert_eq!(decode_body(&"a".repeat(129)), None);
        assert_eq!(decode_body(&"a".repeat(128)), Some(vec![b'a'; 128]));
    }
}
