//! Member names of the open objects, as the streaming reader keeps them: where the decoded
//! name is, and its first eight bytes as a number, which settles most comparisons (duplicate
//! checks and RFC 8785 order) without looking at the text.

use std::cmp::Ordering;

use crate::canonical::utf16_cmp_bytes;

/// A decoded member name at `text[start..end]` of the reader's name text.
#[derive(Clone, Copy, Debug)]
pub(super) struct Name {
    pub(super) start: usize,
    pub(super) end: usize,
    /// The first eight bytes, big-endian, zero-padded: equal names have equal prefixes.
    prefix: u64,
    /// Whether `prefix` orders as the names do (RFC 8785: by UTF-16 code units).
    ///
    /// UTF-8 byte order is UTF-16 order except between lead bytes EE–EF and F0–F4 (see
    /// [`utf16_cmp_bytes`]), so an ASCII prefix orders correctly: where two prefixes differ,
    /// the names first differ there too (or the shorter one ends there, its zero padding
    /// against a byte of the longer: shorter first, as in both orders).
    orders: bool,
}

impl Name {
    /// The name at `text[start..end]`.
    pub(super) fn new(text: &[u8], start: usize, end: usize) -> Name {
        let bytes = text.get(start..end).unwrap_or_default();
        let prefix = match bytes.first_chunk::<8>() {
            Some(head) => u64::from_be_bytes(*head),
            None => {
                let short = bytes.iter().fold(0u64, |acc, &b| acc << 8 | u64::from(b));
                // Fewer than eight bytes; none (the empty name) would shift by 64.
                let pad = 8 * (8 - bytes.len() as u32);
                short.checked_shl(pad).unwrap_or(0)
            }
        };
        Name {
            start,
            end,
            prefix,
            // ASCII only: cheaper to test than "below EE", and names are ASCII as a rule.
            orders: prefix & 0x8080_8080_8080_8080 == 0,
        }
    }

    /// The decoded bytes of the name in `text`.
    pub(super) fn bytes<'t>(&self, text: &'t [u8]) -> &'t [u8] {
        text.get(self.start..self.end).unwrap_or_default()
    }

    /// Whether the two names are the same, both in `text`.
    pub(super) fn same(&self, other: &Name, text: &[u8]) -> bool {
        self.prefix == other.prefix
            && self.end - self.start == other.end - other.start
            && self.bytes(text) == other.bytes(text)
    }

    /// The RFC 8785 order of the two names, both in `text`.
    pub(super) fn cmp(&self, other: &Name, text: &[u8]) -> Ordering {
        if self.orders && other.orders && self.prefix != other.prefix {
            return self.prefix.cmp(&other.prefix);
        }
        utf16_cmp_bytes(self.bytes(text), other.bytes(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pair of a set of names chosen around the prefix's edges (length 8, zero bytes,
    /// a shared prefix, and the characters whose UTF-8 and UTF-16 orders differ) compares as
    /// the full comparison does, and is the same only when equal.
    #[test]
    fn prefixes_agree_with_the_full_comparison() {
        let names: [&str; 16] = [
            "",
            "a",
            "a\0",
            "a\0b",
            "ab",
            "abcdefgh",
            "abcdefgh\0",
            "abcdefghi",
            "abcdefgi",
            "type",
            "description",
            "é",
            "\u{e000}",
            "\u{ffff}",
            "\u{10000}",
            "abcdefg\u{10000}",
        ];
        let text: Vec<u8> = names.concat().into_bytes();
        let mut at = 0;
        let kept: Vec<Name> = names
            .iter()
            .map(|name| {
                at += name.len();
                Name::new(&text, at - name.len(), at)
            })
            .collect();
        for (a, x) in names.iter().zip(&kept) {
            for (b, y) in names.iter().zip(&kept) {
                let expected = utf16_cmp_bytes(a.as_bytes(), b.as_bytes());
                assert_eq!(x.cmp(y, &text), expected, "{a:?} against {b:?}");
                assert_eq!(x.same(y, &text), a == b, "{a:?} against {b:?}");
            }
        }
        assert!(kept[9].orders && !kept[11].orders && !kept[14].orders);
    }
}
