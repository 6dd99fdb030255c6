//! The `sha256:<64 lowercase hex>` digest (seed 000 §3, step 4).

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

use sha2::{Digest as _, Sha256};
use subtle::ConstantTimeEq;

/// The text every digest starts with.
const PREFIX: &str = "sha256:";
/// Number of hexadecimal characters after the prefix.
const HEX_LEN: usize = 64;

/// A SHA-256 digest, written `sha256:` + 64 lowercase hexadecimal characters.
///
/// Equality is constant-time (a gateway compares a live digest with a pinned one). Ordering is
/// by bytes, which is the order of the hexadecimal text; it is not constant-time.
#[derive(Clone, Copy)]
pub struct Digest([u8; 32]);

impl Digest {
    /// The SHA-256 digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Digest {
        Digest(Sha256::digest(bytes).into())
    }

    /// The digest whose 32 bytes are `bytes`.
    pub const fn from_bytes(bytes: [u8; 32]) -> Digest {
        Digest(bytes)
    }

    /// The 32 bytes of the digest.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The digest's text, `sha256:` and 64 lowercase hexadecimal characters, made without a
    /// formatter: a catalog fold and a listing of 10,000 tools each write 10,000 of them.
    ///
    /// ```
    /// use jcs_digest::Digest;
    ///
    /// let digest = Digest::of(b"");
    /// assert_eq!(
    ///     digest.text().as_str(),
    ///     "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    /// );
    /// assert_eq!(digest.text().as_str(), digest.to_string());
    /// ```
    pub fn text(&self) -> DigestText {
        let mut text = [0u8; TEXT_LEN];
        let (prefix, hex) = text.split_at_mut(PREFIX.len());
        prefix.copy_from_slice(PREFIX.as_bytes());
        // One table lookup per byte, where there were two, one per nibble: a fold and a
        // listing of 10,000 tools write 10,000 texts each (BENCHMARKS.md, "The seventeenth
        // session: an object's names kept in order as they come").
        for (pair, byte) in hex.chunks_exact_mut(2).zip(self.0) {
            pair.copy_from_slice(&HEX_PAIRS[usize::from(byte)]);
        }
        DigestText(text)
    }
}

/// Each byte's two lowercase hexadecimal characters.
static HEX_PAIRS: [[u8; 2]; 256] = hex_pairs();

const fn hex_pairs() -> [[u8; 2]; 256] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut pairs = [[0u8; 2]; 256];
    let mut byte = 0;
    while byte < 256 {
        pairs[byte] = [HEX[byte >> 4], HEX[byte & 0xF]];
        byte += 1;
    }
    pairs
}

/// The length of a digest's text: `sha256:` and 64 hexadecimal characters.
const TEXT_LEN: usize = PREFIX.len() + HEX_LEN;

/// A digest's text, held on the stack ([`Digest::text`]).
#[derive(Clone, Copy)]
pub struct DigestText([u8; TEXT_LEN]);

impl DigestText {
    /// The text as bytes (all ASCII).
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        // Only ASCII is ever written into it (`Digest::text`), so this never takes the
        // fallback; it is here because the crate has no `unsafe` to skip the check.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

impl fmt::Debug for DigestText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl PartialEq for Digest {
    fn eq(&self, other: &Self) -> bool {
        self.0.ct_eq(&other.0).into()
    }
}

impl Eq for Digest {}

// Written by hand because `PartialEq` is; hashing the bytes agrees with byte equality.
impl Hash for Digest {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl PartialOrd for Digest {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Digest {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.cmp(&other.0)
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text().as_str())
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Why a text is not a digest. Positions are byte offsets into the whole text, 0-based.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DigestParseError {
    /// The text does not start with `sha256:`.
    #[error(
        "a digest must start with {expected:?}, found {found:?}; write the algorithm in \
         lowercase followed by a colon, as in \"sha256:<64 lowercase hex>\""
    )]
    Prefix {
        /// `"sha256:"`.
        expected: &'static str,
        /// The start of the text (up to its first colon, or its first 7 characters).
        found: String,
    },
    /// An uppercase hexadecimal digit; the canonical text is lowercase.
    #[error(
        "uppercase hexadecimal digit {character:?} at position {position}; a digest is \
         written in lowercase hexadecimal"
    )]
    UppercaseHex {
        /// Byte offset of the character in the text.
        position: usize,
        /// The character.
        character: char,
    },
    /// A character that is not a hexadecimal digit.
    #[error(
        "{character:?} at position {position} is not a lowercase hexadecimal digit; after \
         \"sha256:\" a digest holds exactly 64 characters 0-9 a-f"
    )]
    InvalidCharacter {
        /// Byte offset of the character in the text.
        position: usize,
        /// The character.
        character: char,
    },
    /// Too few or too many hexadecimal digits.
    #[error(
        "a digest has {expected} hexadecimal digits after \"sha256:\", found {found}; \
         check that it was copied whole"
    )]
    Length {
        /// 64.
        expected: usize,
        /// The number of digits found.
        found: usize,
    },
}

impl FromStr for Digest {
    type Err = DigestParseError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let Some(hex) = text.strip_prefix(PREFIX) else {
            let found = match text.find(':') {
                Some(colon) => &text[..=colon],
                None => text
                    .char_indices()
                    .nth(7)
                    .map_or(text, |(end, _)| &text[..end]),
            };
            return Err(DigestParseError::Prefix {
                expected: PREFIX,
                found: found.to_owned(),
            });
        };
        for (offset, character) in hex.char_indices() {
            let position = PREFIX.len() + offset;
            match character {
                '0'..='9' | 'a'..='f' => {}
                'A'..='F' => {
                    return Err(DigestParseError::UppercaseHex {
                        position,
                        character,
                    });
                }
                _ => {
                    return Err(DigestParseError::InvalidCharacter {
                        position,
                        character,
                    });
                }
            }
        }
        if hex.len() != HEX_LEN {
            return Err(DigestParseError::Length {
                expected: HEX_LEN,
                found: hex.len(),
            });
        }
        let mut bytes = [0u8; 32];
        for (byte, pair) in bytes.iter_mut().zip(hex.as_bytes().chunks_exact(2)) {
            *byte = (nibble(pair[0]) << 4) | nibble(pair[1]);
        }
        Ok(Digest(bytes))
    }
}

/// The value of a lowercase hexadecimal digit (already checked).
fn nibble(digit: u8) -> u8 {
    match digit {
        b'a'..=b'f' => digit - b'a' + 10,
        _ => digit.wrapping_sub(b'0'),
    }
}
