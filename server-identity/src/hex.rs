//! Lowercase hex of 32-byte hashes, written and read the same way for [`Fingerprint`] and
//! [`FileDigest`] (one spelling rule, one place).
//!
//! [`Fingerprint`]: crate::Fingerprint
//! [`FileDigest`]: crate::FileDigest

use std::fmt;

/// Writes `bytes` as lowercase hex, in one write: a catalog load shows every fingerprint
/// several times (its grouping key, its measurement, its report line), and formatting byte by
/// byte (`{:02x}`, 32 calls through the formatter) was a tenth of a load's time.
pub(crate) fn write_lower(f: &mut fmt::Formatter<'_>, bytes: &[u8; 32]) -> fmt::Result {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = [0u8; 64];
    for (pair, byte) in text.chunks_exact_mut(2).zip(bytes) {
        pair[0] = DIGITS[usize::from(byte >> 4)];
        pair[1] = DIGITS[usize::from(byte & 0xF)];
    }
    // Every byte written above is an ASCII digit.
    f.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?)
}

/// Reads 64 hex digits (any case) into 32 bytes; the error is the byte offset of the first
/// byte that is not a hex digit (the caller has checked the length is 64 bytes).
pub(crate) fn decode_32(text: &str) -> Result<[u8; 32], usize> {
    let bytes = text.as_bytes();
    let mut out = [0u8; 32];
    for (index, byte) in out.iter_mut().enumerate() {
        let high = digit(bytes, 2 * index)?;
        let low = digit(bytes, 2 * index + 1)?;
        *byte = (high << 4) | low;
    }
    Ok(out)
}

/// The value of the hex digit at `at`, or `Err(at)`.
pub(crate) fn digit(bytes: &[u8], at: usize) -> Result<u8, usize> {
    match bytes.get(at) {
        Some(&digit @ b'0'..=b'9') => Ok(digit - b'0'),
        Some(&digit @ b'a'..=b'f') => Ok(digit - b'a' + 10),
        Some(&digit @ b'A'..=b'F') => Ok(digit - b'A' + 10),
        _ => Err(at),
    }
}

/// The character of `text` that contains byte `at`, and where it starts: an offending byte may
/// fall inside a multi-byte character, and an error shows the whole character.
pub(crate) fn char_at(text: &str, at: usize) -> (char, usize) {
    let start = (0..=at.min(text.len()))
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    (text[start..].chars().next().unwrap_or('\u{FFFD}'), start)
}
