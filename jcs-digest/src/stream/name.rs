//! Member names of the open objects, as the streaming reader keeps them: where the decoded
//! name is (in the input itself when it is written there as it decodes, else in the reader's
//! name text), and its first eight bytes as a number, which settles most comparisons
//! (duplicate checks and RFC 8785 order) without looking at the text.

use std::cmp::Ordering;

use crate::canonical::utf16_cmp_bytes;

/// Where the decoded names are: the input, for a name written without escapes (its bytes
/// between the quotes are its text), and the reader's name text for the others.
#[derive(Clone, Copy)]
pub(super) struct NameTexts<'t> {
    pub(super) input: &'t [u8],
    pub(super) decoded: &'t [u8],
}

impl<'t> NameTexts<'t> {
    pub(super) fn new(input: &'t [u8], decoded: &'t [u8]) -> Self {
        NameTexts { input, decoded }
    }
}

/// A decoded member name at `start..end` of the input or of the name text ([`NameTexts`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct Name {
    start: usize,
    end: usize,
    /// Whether the name is in the name text rather than in the input.
    decoded: bool,
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
    /// The name at `input[start..end]`, which holds no escape and is valid UTF-8.
    pub(super) fn in_input(input: &[u8], start: usize, end: usize) -> Name {
        Name::new(input, start, end, false)
    }

    /// The name at `text[start..end]` of the name text.
    pub(super) fn decoded(text: &[u8], start: usize, end: usize) -> Name {
        Name::new(text, start, end, true)
    }

    fn new(text: &[u8], start: usize, end: usize, decoded: bool) -> Name {
        let bytes = text.get(start..end).unwrap_or_default();
        // A short name's prefix is read as eight bytes from its start, those past its end masked
        // off, when the text holds eight there (in the input, the closing quote and what
        // follows): one load instead of a loop over its bytes.
        let ahead = text.get(start..).and_then(<[u8]>::first_chunk::<8>);
        let prefix = match (bytes.first_chunk::<8>(), ahead) {
            (Some(head), _) => u64::from_be_bytes(*head),
            // Fewer than eight bytes: keep the first `len` of the eight (none: the mask is 0).
            (None, Some(ahead)) => {
                u64::from_be_bytes(*ahead) & !(u64::MAX >> (8 * bytes.len() as u32))
            }
            (None, None) => {
                let short = bytes.iter().fold(0u64, |acc, &b| acc << 8 | u64::from(b));
                // Fewer than eight bytes; none (the empty name) would shift by 64.
                let pad = 8 * (8 - bytes.len() as u32);
                short.checked_shl(pad).unwrap_or(0)
            }
        };
        Name {
            start,
            end,
            decoded,
            prefix,
            // ASCII only: cheaper to test than "below EE", and names are ASCII as a rule.
            orders: prefix & 0x8080_8080_8080_8080 == 0,
        }
    }

    /// The decoded bytes of the name.
    pub(super) fn bytes<'t>(&self, texts: NameTexts<'t>) -> &'t [u8] {
        let text = if self.decoded {
            texts.decoded
        } else {
            texts.input
        };
        text.get(self.start..self.end).unwrap_or_default()
    }

    /// Whether the two names are the same.
    pub(super) fn same(&self, other: &Name, texts: NameTexts<'_>) -> bool {
        self.prefix == other.prefix
            && self.end - self.start == other.end - other.start
            && self.bytes(texts) == other.bytes(texts)
    }

    /// The RFC 8785 order of the two names.
    #[inline]
    pub(super) fn cmp(&self, other: &Name, texts: NameTexts<'_>) -> Ordering {
        if self.orders && other.orders && self.prefix != other.prefix {
            return self.prefix.cmp(&other.prefix);
        }
        utf16_cmp_bytes(self.bytes(texts), other.bytes(texts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pair of a set of names chosen around the prefix's edges (length 8, zero bytes,
    /// a shared prefix, and the characters whose UTF-8 and UTF-16 orders differ) compares as
    /// the full comparison does, and is the same only when equal, whichever of the input and
    /// the name text each of the two is in.
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
        // The input holds the names in order, the name text in reverse order.
        let input: Vec<u8> = names.concat().into_bytes();
        let decoded: Vec<u8> = names.iter().rev().copied().collect::<String>().into_bytes();
        let texts = NameTexts {
            input: &input,
            decoded: &decoded,
        };
        let mut at = 0;
        let in_input: Vec<Name> = names
            .iter()
            .map(|name| {
                at += name.len();
                Name::in_input(&input, at - name.len(), at)
            })
            .collect();
        let mut end = decoded.len();
        let in_text: Vec<Name> = names
            .iter()
            .map(|name| {
                end -= name.len();
                Name::decoded(&decoded, end, end + name.len())
            })
            .collect();
        for kept in [&in_input, &in_text] {
            for (a, x) in names.iter().zip(kept) {
                assert_eq!(x.bytes(texts), a.as_bytes());
                for (b, y) in names
                    .iter()
                    .chain(&names)
                    .zip(in_input.iter().chain(&in_text))
                {
                    let expected = utf16_cmp_bytes(a.as_bytes(), b.as_bytes());
                    assert_eq!(x.cmp(y, texts), expected, "{a:?} against {b:?}");
                    assert_eq!(x.same(y, texts), a == b, "{a:?} against {b:?}");
                }
            }
        }
        assert!(in_input[9].orders && !in_input[11].orders && !in_text[14].orders);
    }
}
