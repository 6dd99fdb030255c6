//! Finding the bytes a JSON string cannot hold raw: `"`, `\` and the controls U+0000–U+001F.
//!
//! Both the reader (where a run of literal content ends) and the canonicalizer (what RFC 8785
//! §3.2.2.2 escapes) look for exactly this set, eight bytes at a time.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Whether `byte` cannot appear raw inside a JSON string.
pub(crate) fn is_string_special(byte: u8) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\'
}

/// A mask with the high bit of each byte of `word` that is below `bound` (at most 0x80).
///
/// Borrows only run upwards from a flagged byte, so the lowest flagged byte is exact even
/// when bytes above it are flagged falsely.
fn bytes_below(word: u64, bound: u8) -> u64 {
    word.wrapping_sub(ONES * u64::from(bound)) & !word & HIGHS
}

/// The index of the first byte at or after `from` that a JSON string cannot hold raw (`"`, `\`
/// or a control character U+0000–U+001F), or `bytes.len()` if there is none; sixteen bytes a
/// step. Every other byte, including those of multi-byte UTF-8 sequences, is string content, so
/// a scanner of JSON text that has checked its UTF-8 jumps to here from inside a string.
///
/// ```
/// use jcs_digest::next_string_special;
///
/// let text = br#""plain words, and then a quote: \" and more""#;
/// let escape = next_string_special(text, 1);
/// assert_eq!(text[escape], b'\\');
/// assert_eq!(next_string_special(text, escape + 2), text.len() - 1);
/// assert_eq!(next_string_special(b"no end", 0), 6);
/// ```
pub fn next_string_special(bytes: &[u8], from: usize) -> usize {
    first_flagged::<false>(bytes, from)
}

/// The index of the first special byte or byte of at least 0x80 (part of a multi-byte UTF-8
/// sequence, which the streaming reader checks as it goes) in `bytes` at or after `from`, or
/// `bytes.len()`.
pub(crate) fn next_string_stop(bytes: &[u8], from: usize) -> usize {
    first_flagged::<true>(bytes, from)
}

/// The index of the first special byte (with `HIGH`, or byte of at least 0x80) at or after
/// `from`, or `bytes.len()`: sixteen bytes a step as two words, then byte by byte.
fn first_flagged<const HIGH: bool>(bytes: &[u8], from: usize) -> usize {
    let flags = |word: u64| {
        let special = bytes_below(word ^ (ONES * u64::from(b'"')), 1)
            | bytes_below(word ^ (ONES * u64::from(b'\\')), 1)
            | bytes_below(word, 0x20);
        if HIGH {
            special | (word & HIGHS)
        } else {
            special
        }
    };
    let rest = bytes.get(from..).unwrap_or_default();
    let mut chunks = rest.chunks_exact(16);
    let mut i = from;
    for chunk in &mut chunks {
        let (low, high) = chunk.split_at(8);
        let low = flags(word(low));
        let high = flags(word(high));
        if low | high != 0 {
            // Little-endian: the lowest set bit belongs to the first flagged byte.
            let first = if low != 0 {
                low.trailing_zeros()
            } else {
                64 + high.trailing_zeros()
            };
            return i + (first / 8) as usize;
        }
        i += 16;
    }
    for &byte in chunks.remainder() {
        if is_string_special(byte) || (HIGH && byte >= 0x80) {
            return i;
        }
        i += 1;
    }
    i
}

/// Eight bytes as a little-endian word (`bytes` has eight).
fn word(bytes: &[u8]) -> u64 {
    u64::from_le_bytes(bytes.try_into().unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every special byte at every position of a 17-byte window, surrounded by bytes that are
    /// not special (including the neighbours 0x20, 0x21, 0x23, 0x5b, 0x5d and 0x80–0xff),
    /// is found at its exact index; the byte-by-byte definition is the reference.
    #[test]
    fn finds_the_first_special_byte_exactly() {
        let fillers = [
            0x20u8, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xa2, 0xdc, 0xff, b'a',
        ];
        let specials: Vec<u8> = (0u8..=0xff).filter(|&b| is_string_special(b)).collect();
        assert_eq!(specials.len(), 34);
        for filler in fillers {
            for special in &specials {
                for position in 0..17 {
                    let mut bytes = vec![filler; 17];
                    bytes[position] = *special;
                    // A second special later must not hide the first.
                    if position + 3 < 17 {
                        bytes[position + 3] = 0;
                    }
                    assert_eq!(next_string_special(&bytes, 0), position);
                    assert_eq!(next_string_special(&bytes, position), position);
                    // The stop scan also stops at the first byte of at least 0x80.
                    let stop = bytes
                        .iter()
                        .position(|&b| is_string_special(b) || b >= 0x80);
                    assert_eq!(next_string_stop(&bytes, 0), stop.unwrap_or(17));
                }
                assert_eq!(next_string_special(&[filler; 17], 0), 17);
            }
        }
    }
}
