//! Reading key text back (`FromStr`): the checks that a text could have come from §4.

use std::str::FromStr;

use crate::key::{CUT_PREFIX_LEN, KEY_PREFIX, MAX_BODY_LEN, ToolKey, has_cut_shape};

/// Why a text is not a valid `tool:<body>` key.
///
/// Offsets are byte offsets into the body (the text after `tool:`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolKeyParseError {
    /// The text does not start with `tool:`.
    #[error(
        "tool key must start with \"tool:\", found {found:?}; keys are written as tool:<body> (seed 000 §4)"
    )]
    MissingPrefix {
        /// The start of the text that was given (at most 32 characters).
        found: String,
    },
    /// The text is `tool:` with nothing after it.
    #[error("tool key \"tool:\" has an empty body; a tool with no name is keyed tool:unnamed")]
    EmptyBody,
    /// The body is longer than any key body can be.
    #[error(
        "tool key body is {length} bytes, longer than the maximum of {max}; longer names are cut to 96 characters + \"~\" + 16 hex (seed 000 §4 rule 3)"
    )]
    BodyTooLong {
        /// The maximum body length, [`MAX_BODY_LEN`].
        max: usize,
        /// The length of the body that was given.
        length: usize,
    },
    /// The body holds a character that the encoding never writes literally.
    #[error(
        "tool key body has {character:?} at offset {offset}; a body holds only printable ASCII other than \"=\", everything else is written as %XX"
    )]
    DisallowedCharacter {
        /// Byte offset in the body.
        offset: usize,
        /// The character found there.
        character: char,
    },
    /// A `%` is not followed by two uppercase hexadecimal digits.
    #[error(
        "tool key body has a \"%\" at offset {offset} that is not followed by two uppercase hex digits; escapes are written %XX with XX in 0-9A-F"
    )]
    MalformedEscape {
        /// Byte offset of the `%` in the body.
        offset: usize,
    },
    /// A `%XX` escape stands for a byte that the encoding writes literally.
    #[error(
        "tool key body escapes {literal:?} as \"%{byte:02X}\" at offset {offset}, but that character is always written literally; this key was not produced by the encoding"
    )]
    NonCanonicalEscape {
        /// Byte offset of the `%` in the body.
        offset: usize,
        /// The escaped byte.
        byte: u8,
        /// The byte as a character, as the encoding would have written it.
        literal: char,
    },
    /// The escapes do not decode to UTF-8 (a name is always UTF-8).
    #[error(
        "tool key body escapes starting at offset {offset} do not decode to UTF-8; a tool name is always UTF-8"
    )]
    InvalidUtf8 {
        /// Byte offset in the body of the escape where decoding fails.
        offset: usize,
    },
}

impl FromStr for ToolKey {
    type Err = ToolKeyParseError;

    fn from_str(text: &str) -> Result<ToolKey, ToolKeyParseError> {
        let Some(body) = text.strip_prefix(KEY_PREFIX) else {
            return Err(ToolKeyParseError::MissingPrefix {
                found: text.chars().take(32).collect(),
            });
        };
        if body.is_empty() {
            return Err(ToolKeyParseError::EmptyBody);
        }
        if body.len() > MAX_BODY_LEN {
            return Err(ToolKeyParseError::BodyTooLong {
                max: MAX_BODY_LEN,
                length: body.len(),
            });
        }
        if has_cut_shape(body) {
            // Rule 3 may cut inside a `%XX` triplet or inside a multi-byte character; the hash
            // suffix is already checked by the shape.
            check_encoding(&body[..CUT_PREFIX_LEN], Tail::MayBeCut)?;
        } else {
            check_encoding(body, Tail::Complete)?;
        }
        Ok(ToolKey::from_validated(text.to_owned()))
    }
}

/// Whether the checked text may end partway through a triplet or a UTF-8 sequence.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tail {
    Complete,
    MayBeCut,
}

/// Checks that `body` is (a prefix of, for [`Tail::MayBeCut`]) a rule-2 encoding of a UTF-8 name.
fn check_encoding(body: &str, tail: Tail) -> Result<(), ToolKeyParseError> {
    // The decoded bytes, each with the offset of the body text it came from, so that a UTF-8
    // error can point at its escape.
    let mut decoded: Vec<(u8, usize)> = Vec::with_capacity(body.len());
    let bytes = body.as_bytes();
    let mut offset = 0;
    while offset < bytes.len() {
        let byte = bytes[offset];
        if byte == b'%' {
            let digits = &bytes[offset + 1..bytes.len().min(offset + 3)];
            let complete = digits.len() == 2;
            if !digits
                .iter()
                .all(|d| matches!(d, b'0'..=b'9' | b'A'..=b'F'))
                || (!complete && tail == Tail::Complete)
            {
                return Err(ToolKeyParseError::MalformedEscape { offset });
            }
            if !complete {
                // A triplet cut by rule 3: nothing follows it in the prefix.
                break;
            }
            let value = (hex_value(digits[0]) << 4) | hex_value(digits[1]);
            if is_literal(value) {
                return Err(ToolKeyParseError::NonCanonicalEscape {
                    offset,
                    byte: value,
                    literal: char::from(value),
                });
            }
            decoded.push((value, offset));
            offset += 3;
        } else if is_literal(byte) {
            decoded.push((byte, offset));
            offset += 1;
        } else {
            let character = body[offset..].chars().next().unwrap_or('\u{FFFD}');
            return Err(ToolKeyParseError::DisallowedCharacter { offset, character });
        }
    }
    check_utf8(&decoded, tail)
}

/// Checks that the decoded bytes are UTF-8 (or, for a cut prefix, a prefix of UTF-8).
fn check_utf8(decoded: &[(u8, usize)], tail: Tail) -> Result<(), ToolKeyParseError> {
    let raw: Vec<u8> = decoded.iter().map(|(byte, _)| *byte).collect();
    match std::str::from_utf8(&raw) {
        Ok(_) => Ok(()),
        Err(error) if error.error_len().is_none() && tail == Tail::MayBeCut => Ok(()),
        Err(error) => Err(ToolKeyParseError::InvalidUtf8 {
            offset: decoded.get(error.valid_up_to()).map_or(0, |(_, at)| *at),
        }),
    }
}

/// Whether rule 2 writes `byte` literally: 0x21–0x7E except `%` and `=`.
fn is_literal(byte: u8) -> bool {
    matches!(byte, 0x21..=0x7E) && byte != b'%' && byte != b'='
}

/// The value of one uppercase hex digit (the caller has checked it is one).
fn hex_value(digit: u8) -> u8 {
    match digit {
        b'0'..=b'9' => digit - b'0',
        _ => digit - b'A' + 10,
    }
}
