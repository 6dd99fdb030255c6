//! Scalars of the strict reader: strings and numbers, and the messages for unexpected bytes.
//!
//! These functions know nothing of the document's structure; the reader adds the JSON Pointer
//! when it turns a [`LexError`] into a [`crate::StrictJsonError`].

use serde_json::Number;

use crate::error::StrictJsonErrorKind;
use crate::scan;

/// The largest integer a double holds exactly together with its neighbours (2^53−1).
pub(crate) const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// A refused scalar, with the byte offset it starts at.
pub(crate) enum LexError {
    Syntax { message: String, offset: usize },
    InvalidUtf8 { offset: usize },
    LoneSurrogate { offset: usize },
    IntegerOutOfRange { literal: String, offset: usize },
    NumberOverflow { literal: String, offset: usize },
}

impl LexError {
    /// The error's kind and the offset it starts at; `pointer(of_container)` is the reader's
    /// JSON Pointer of the scalar (`true`: of the object holding it, for a member name, which
    /// only a lone surrogate can be).
    pub(crate) fn located(
        self,
        in_name: bool,
        pointer: impl Fn(bool) -> String,
    ) -> (StrictJsonErrorKind, usize) {
        match self {
            LexError::Syntax { message, offset } => {
                (StrictJsonErrorKind::Syntax { message }, offset)
            }
            LexError::InvalidUtf8 { offset } => (StrictJsonErrorKind::InvalidUtf8, offset),
            LexError::LoneSurrogate { offset } => (
                StrictJsonErrorKind::LoneSurrogate {
                    pointer: pointer(in_name),
                },
                offset,
            ),
            LexError::IntegerOutOfRange { literal, offset } => (
                StrictJsonErrorKind::IntegerOutOfRange {
                    pointer: pointer(false),
                    literal,
                },
                offset,
            ),
            LexError::NumberOverflow { literal, offset } => (
                StrictJsonErrorKind::NumberOverflow {
                    pointer: pointer(false),
                    literal,
                },
                offset,
            ),
        }
    }
}

/// Where the characters written as escapes go.
pub(crate) trait CharSink {
    /// One character written as an escape.
    fn push_char(&mut self, c: char);
}

/// Where the decoded text of a string goes, as `&str` (the tree reader).
pub(crate) trait StringSink: CharSink {
    /// A run of literal content: valid UTF-8 holding no `"`, `\\` or control character.
    fn push_run(&mut self, run: &str);
}

/// Where the decoded text of a string goes, as bytes (the streaming reader: the canonical
/// writer, which re-escapes; member names; or nowhere, for a value that is only checked).
pub(crate) trait ByteSink: CharSink {
    /// A run of literal content: valid UTF-8 holding no `"`, `\\` or control character.
    fn push_bytes(&mut self, run: &[u8]);
}

impl CharSink for String {
    fn push_char(&mut self, c: char) {
        self.push(c);
    }
}

impl StringSink for String {
    fn push_run(&mut self, run: &str) {
        self.push_str(run);
    }
}

/// Checks a string without keeping it.
pub(crate) struct Discard;

impl CharSink for Discard {
    fn push_char(&mut self, _: char) {}
}

impl ByteSink for Discard {
    fn push_bytes(&mut self, _: &[u8]) {}
}

/// Decoded text as UTF-8 bytes (member names of the streaming reader).
pub(crate) struct Utf8<'o>(pub(crate) &'o mut Vec<u8>);

impl CharSink for Utf8<'_> {
    fn push_char(&mut self, c: char) {
        let mut utf8 = [0u8; 4];
        self.0
            .extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
    }
}

impl ByteSink for Utf8<'_> {
    fn push_bytes(&mut self, run: &[u8]) {
        self.0.extend_from_slice(run);
    }
}

/// Reads the string whose opening quote is at `*pos`; leaves `*pos` after the closing quote.
pub(crate) fn string(input: &[u8], pos: &mut usize) -> Result<String, LexError> {
    let mut out = String::new();
    string_into(input, pos, &mut out)?;
    Ok(out)
}

/// Reads the string whose opening quote is at `*pos` into `out`; leaves `*pos` after the
/// closing quote.
pub(crate) fn string_into<S: StringSink>(
    input: &[u8],
    pos: &mut usize,
    out: &mut S,
) -> Result<(), LexError> {
    let opening = *pos;
    let mut i = opening + 1;
    loop {
        let run_start = i;
        i = scan::next_string_special(input, i);
        // Bytes of a multi-byte sequence are all >= 0x80, so a run never splits one that is
        // valid; a sequence cut short by a quote or backslash is invalid and reported here.
        let run = &input[run_start..i];
        match std::str::from_utf8(run) {
            Ok(text) => out.push_run(text),
            Err(error) => {
                return Err(LexError::InvalidUtf8 {
                    offset: run_start + error.valid_up_to(),
                });
            }
        }
        match input.get(i) {
            Some(b'"') => {
                *pos = i + 1;
                return Ok(());
            }
            Some(b'\\') => i = escape(input, i, out)?,
            Some(&control) => return Err(string_control(control, i)),
            None => return Err(unterminated(opening)),
        }
    }
}

/// [`string_into`] for a byte sink, checking UTF-8 as it scans: one pass over the bytes, and
/// the same error at the same offset (the first byte of the first invalid sequence, which
/// is where `str::from_utf8` stops too).
///
/// The string's opening quote is at `*pos`; its bytes up to `plain_end` were already scanned
/// by the caller and hold nothing special ([`scan::next_string_stop`] found nothing before
/// it; `*pos + 1` when nothing was scanned).
pub(crate) fn string_bytes<S: ByteSink>(
    input: &[u8],
    pos: &mut usize,
    plain_end: usize,
    out: &mut S,
) -> Result<(), LexError> {
    let opening = *pos;
    let mut i = plain_end;
    let mut run_start = opening + 1;
    loop {
        i = scan::next_string_stop(input, i);
        let Some(&byte) = input.get(i) else {
            out.push_bytes(&input[run_start..i]);
            return Err(unterminated(opening));
        };
        if byte >= 0x80 {
            i += utf8_sequence(input, i).ok_or(LexError::InvalidUtf8 { offset: i })?;
            continue;
        }
        out.push_bytes(&input[run_start..i]);
        match byte {
            b'"' => {
                *pos = i + 1;
                return Ok(());
            }
            b'\\' => {
                i = escape(input, i, out)?;
                run_start = i;
            }
            control => return Err(string_control(control, i)),
        }
    }
}

/// The length of the valid UTF-8 sequence (RFC 3629: no overlong forms, no surrogates,
/// nothing above U+10FFFF) whose lead byte, at least 0x80, is at `at`; `None` if invalid.
#[inline]
fn utf8_sequence(input: &[u8], at: usize) -> Option<usize> {
    let (len, low, high) = match input.get(at)? {
        0xC2..=0xDF => (2, 0x80, 0xBF),
        0xE0 => (3, 0xA0, 0xBF),
        0xE1..=0xEC | 0xEE..=0xEF => (3, 0x80, 0xBF),
        0xED => (3, 0x80, 0x9F),
        0xF0 => (4, 0x90, 0xBF),
        0xF1..=0xF3 => (4, 0x80, 0xBF),
        0xF4 => (4, 0x80, 0x8F),
        _ => return None,
    };
    let second = *input.get(at + 1)?;
    if !(low..=high).contains(&second) {
        return None;
    }
    for k in 2..len {
        if !(0x80..=0xBF).contains(input.get(at + k)?) {
            return None;
        }
    }
    Some(len)
}

/// The error for a raw control character in a string.
fn string_control(control: u8, offset: usize) -> LexError {
    LexError::Syntax {
        message: format!(
            "raw control character U+{control:04X} in a string; write it as \\u{control:04x}"
        ),
        offset,
    }
}

/// The error for a string whose opening quote is at `opening` and that never closes.
fn unterminated(opening: usize) -> LexError {
    LexError::Syntax {
        message: "unterminated string: expected '\"' before the end of the input".to_owned(),
        offset: opening,
    }
}

/// Decodes the escape whose backslash is at `at` into `out`; returns the offset after it.
fn escape<S: CharSink>(input: &[u8], at: usize, out: &mut S) -> Result<usize, LexError> {
    let simple = match input.get(at + 1) {
        Some(b'"') => '"',
        Some(b'\\') => '\\',
        Some(b'/') => '/',
        Some(b'b') => '\u{8}',
        Some(b'f') => '\u{c}',
        Some(b'n') => '\n',
        Some(b'r') => '\r',
        Some(b't') => '\t',
        Some(b'u') => return unicode_escape(input, at, out),
        _ => {
            return Err(unexpected(
                input,
                at + 1,
                "one of \" \\ / b f n r t u after '\\' in a string",
            ));
        }
    };
    out.push_char(simple);
    Ok(at + 2)
}

/// Four hexadecimal digits at `at`, if there are.
fn hex4(input: &[u8], at: usize) -> Option<u32> {
    let digits = input.get(at..at + 4)?;
    digits.iter().try_fold(0u32, |acc, &b| {
        let digit = char::from(b).to_digit(16)?;
        Some(acc << 4 | digit)
    })
}

/// Decodes `\uXXXX` (and its low-surrogate partner) whose backslash is at `at`.
fn unicode_escape<S: CharSink>(input: &[u8], at: usize, out: &mut S) -> Result<usize, LexError> {
    let bad_hex = |offset: usize| LexError::Syntax {
        message: "invalid \\u escape: expected four hexadecimal digits after \\u".to_owned(),
        offset,
    };
    let unit = hex4(input, at + 2).ok_or_else(|| bad_hex(at))?;
    let (code_point, end) = match unit {
        0xD800..=0xDBFF => {
            // A high surrogate is only a character together with the low surrogate after it.
            if input.get(at + 6..at + 8) != Some(b"\\u") {
                return Err(LexError::LoneSurrogate { offset: at });
            }
            let low = hex4(input, at + 8).ok_or_else(|| bad_hex(at + 6))?;
            if !(0xDC00..=0xDFFF).contains(&low) {
                return Err(LexError::LoneSurrogate { offset: at });
            }
            (0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00), at + 12)
        }
        0xDC00..=0xDFFF => return Err(LexError::LoneSurrogate { offset: at }),
        _ => (unit, at + 6),
    };
    match char::from_u32(code_point) {
        Some(c) => out.push_char(c),
        // Unreachable: surrogates were handled above, and a pair is at most U+10FFFF.
        None => return Err(LexError::LoneSurrogate { offset: at }),
    }
    Ok(end)
}

/// A number literal that passed every strict rule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum LexedNumber {
    /// An integer literal (no fraction, no exponent) of magnitude at most 2^53−1. Its
    /// canonical form is the literal itself, except `-0`, which is written `0`.
    Integer { magnitude: u64, negative: bool },
    /// A literal with a fraction or an exponent: the nearest double, finite.
    Float(f64),
    /// A literal with a fraction and no exponent that is already the canonical form of its
    /// double ([`is_canonical_fraction`]): RFC 8785 writes it unchanged, so it is not
    /// converted (the tree reader converts it, [`number`]).
    CanonicalFraction,
}

/// Reads the number starting at `*pos`; leaves `*pos` after it.
///
/// An integer literal becomes a `u64` (non-negative) or `i64` (negative) number, as serde_json
/// reads it, except `-0`, which is the double `-0.0` (again as serde_json reads it). Every
/// other literal becomes the nearest double: `str::parse::<f64>` rounds correctly.
pub(crate) fn number(input: &[u8], pos: &mut usize) -> Result<Number, LexError> {
    let start = *pos;
    Ok(match lex_number(input, pos)? {
        LexedNumber::Integer {
            magnitude,
            negative: false,
        } => Number::from(magnitude),
        LexedNumber::Integer {
            magnitude: 0,
            negative: true,
        } => float_number(-0.0),
        // magnitude <= 2^53−1, so the cast is exact and the negation cannot overflow.
        LexedNumber::Integer {
            magnitude,
            negative: true,
        } => Number::from(-(magnitude as i64)),
        LexedNumber::Float(value) => float_number(value),
        LexedNumber::CanonicalFraction => float_number(float(&input[start..*pos], start)?),
    })
}

/// Reads and checks the number literal starting at `*pos`; leaves `*pos` after it.
pub(crate) fn lex_number(input: &[u8], pos: &mut usize) -> Result<LexedNumber, LexError> {
    let start = *pos;
    let mut i = start;
    let negative = input.get(i) == Some(&b'-');
    if negative {
        i += 1;
        if input
            .get(i..)
            .is_some_and(|rest| rest.starts_with(b"Infinity"))
        {
            return Err(not_a_json_number(start));
        }
    }
    match input.get(i) {
        Some(b'0') => {
            i += 1;
            if input.get(i).is_some_and(u8::is_ascii_digit) {
                return Err(LexError::Syntax {
                    message: "a number must not have a leading zero".to_owned(),
                    offset: start,
                });
            }
        }
        Some(b'1'..=b'9') => i = skip_digits(input, i),
        _ => return Err(unexpected(input, i, "a digit after '-'")),
    }
    let integer_end = i;
    if input.get(i) == Some(&b'.') {
        i += 1;
        if !input.get(i).is_some_and(u8::is_ascii_digit) {
            return Err(unexpected(input, i, "a digit after the decimal point"));
        }
        i = skip_digits(input, i);
    }
    let fraction_end = i;
    if let Some(b'e' | b'E') = input.get(i) {
        i += 1;
        if let Some(b'+' | b'-') = input.get(i) {
            i += 1;
        }
        if !input.get(i).is_some_and(u8::is_ascii_digit) {
            return Err(unexpected(input, i, "a digit in the exponent"));
        }
        i = skip_digits(input, i);
    }
    *pos = i;
    let literal = &input[start..i];
    if i == integer_end {
        integer(literal, negative, start)
    } else if i == fraction_end
        && is_canonical_fraction(
            &input[start + usize::from(negative)..integer_end],
            &input[integer_end + 1..fraction_end],
        )
    {
        Ok(LexedNumber::CanonicalFraction)
    } else {
        float(literal, start).map(LexedNumber::Float)
    }
}

/// Whether `integer.fraction` (checked against the grammar, no exponent) is written exactly as
/// ECMAScript writes its double (RFC 8785 §3.2.2.3), so that converting it and writing the
/// shortest form back would give the same text.
///
/// It is when it has at most 15 significant digits, no trailing zero in the fraction (the
/// shortest form drops it: `1.50` is `1.5`), and, below 1, at most five zeros after the point
/// (from 10^-7 down ECMAScript writes an exponent: `1e-7`). Fifteen digits suffice: between
/// two powers of ten, doubles lie closer together than half the distance between decimals of
/// 15 significant digits, so such a decimal is the only one of at most 15 digits that rounds
/// to its double, and the shortest form that reads back as that double is that decimal.
fn is_canonical_fraction(integer: &[u8], fraction: &[u8]) -> bool {
    /// Significant digits every double keeps (C's `DBL_DIG`).
    const DIGITS_KEPT: usize = 15;
    /// Zeros after the point before ECMAScript switches to an exponent (0.000001 is written
    /// so, 0.0000001 as `1e-7`).
    const MAX_LEADING_ZEROS: usize = 5;
    if !fraction
        .last()
        .is_some_and(|digit| (b'1'..=b'9').contains(digit))
    {
        return false;
    }
    let significant = if integer == b"0" {
        let zeros = fraction.iter().take_while(|&&digit| digit == b'0').count();
        if zeros > MAX_LEADING_ZEROS {
            return false;
        }
        fraction.len() - zeros
    } else {
        integer.len() + fraction.len()
    };
    significant <= DIGITS_KEPT
}

fn skip_digits(input: &[u8], mut i: usize) -> usize {
    while input.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    i
}

/// An integer literal (already checked against the grammar), refused outside ±(2^53−1).
fn integer(literal: &[u8], negative: bool, offset: usize) -> Result<LexedNumber, LexError> {
    let digits = &literal[usize::from(negative)..];
    // 2^53−1 has 16 digits; 16 digits never overflow a u64.
    let magnitude = if digits.len() <= 16 {
        digits
            .iter()
            .fold(0u64, |acc, &d| acc * 10 + u64::from(d - b'0'))
    } else {
        u64::MAX
    };
    if magnitude > MAX_SAFE_INTEGER {
        return Err(LexError::IntegerOutOfRange {
            literal: String::from_utf8_lossy(literal).into_owned(),
            offset,
        });
    }
    Ok(LexedNumber::Integer {
        magnitude,
        negative,
    })
}

/// A literal with a fraction or an exponent: the nearest double, refused when it overflows.
fn float(literal: &[u8], offset: usize) -> Result<f64, LexError> {
    let overflow = || LexError::NumberOverflow {
        literal: String::from_utf8_lossy(literal).into_owned(),
        offset,
    };
    // The grammar was checked, so the text is ASCII and Rust's float syntax accepts it.
    let value: f64 = std::str::from_utf8(literal)
        .ok()
        .and_then(|text| text.parse().ok())
        .ok_or_else(overflow)?;
    if value.is_finite() {
        Ok(value)
    } else {
        Err(overflow())
    }
}

/// `Number::from_f64` for a value known to be finite.
fn float_number(value: f64) -> Number {
    Number::from_f64(value).unwrap_or_else(|| Number::from(0u8))
}

/// The error for `NaN`, `Infinity` and `-Infinity` at `offset`.
pub(crate) fn not_a_json_number(offset: usize) -> LexError {
    LexError::Syntax {
        message: "NaN and Infinity are not JSON numbers, and RFC 8785 cannot represent them"
            .to_owned(),
        offset,
    }
}

/// The error for an unexpected byte (or the end of the input) at `at`.
///
/// A byte that does not start a valid UTF-8 sequence is reported as invalid UTF-8, since that
/// is the more useful thing to know about it.
pub(crate) fn unexpected(input: &[u8], at: usize, expected: &str) -> LexError {
    let Some(rest) = input.get(at..).filter(|rest| !rest.is_empty()) else {
        return LexError::Syntax {
            message: format!("expected {expected}, found the end of the input"),
            offset: at,
        };
    };
    let prefix = &rest[..rest.len().min(4)];
    let first_char = match std::str::from_utf8(prefix) {
        Ok(text) => text.chars().next(),
        Err(error) if error.valid_up_to() > 0 => {
            std::str::from_utf8(&prefix[..error.valid_up_to()])
                .ok()
                .and_then(|text| text.chars().next())
        }
        Err(_) => None,
    };
    match first_char {
        Some(c) => LexError::Syntax {
            message: format!("expected {expected}, found {}", describe(c)),
            offset: at,
        },
        None => LexError::InvalidUtf8 { offset: at },
    }
}

/// A character as an error message shows it: `'x'` if printable ASCII, else `U+XXXX`.
fn describe(c: char) -> String {
    match c {
        '\u{feff}' => "U+FEFF (a byte order mark)".to_owned(),
        _ if c.is_ascii_graphic() => format!("'{c}'"),
        _ => format!("U+{:04X}", u32::from(c)),
    }
}
