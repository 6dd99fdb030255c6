//! RFC 8785 (JCS) canonical bytes of a `serde_json::Value`.
//!
//! Members sorted by the UTF-16 code units of their names (§3.2.3), numbers in ECMAScript form
//! (§3.2.2.3), strings with the minimal escaping of §3.2.2.2, no whitespace. The writer walks
//! the value with an explicit stack, so a deep value built in code cannot overflow the stack.

use std::cmp::Ordering;

use serde_json::{Map, Number, Value};

use crate::lexer::MAX_SAFE_INTEGER;
use crate::pointer;
use crate::scan;

/// A value the canonicalizer refuses.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CanonicalizeError {
    /// An integer outside ±(2^53−1), which a value built in code (not read by
    /// [`crate::parse_strict`]) can hold; it is refused rather than rounded to a double.
    #[error(
        "integer {value} at JSON Pointer {pointer:?} is outside ±(2^53−1) and has no exact \
         RFC 8785 form; write it as a string, or as an f64 if rounding is intended"
    )]
    IntegerOutOfRange {
        /// JSON Pointer of the number.
        pointer: String,
        /// The integer, in decimal.
        value: String,
    },
    /// A number that is not a finite double. Reachable only when serde_json's
    /// `arbitrary_precision` feature lets a `Number` hold such text.
    #[error(
        "number {value} at JSON Pointer {pointer:?} is not a finite double and has no \
         RFC 8785 form; write it as a string"
    )]
    NumberNotFinite {
        /// JSON Pointer of the number.
        pointer: String,
        /// The number as serde_json displays it.
        value: String,
    },
}

/// The RFC 8785 canonical bytes of `value`.
///
/// # Errors
///
/// [`CanonicalizeError::IntegerOutOfRange`] for an integer outside ±(2^53−1).
pub fn canonicalize(value: &Value) -> Result<Vec<u8>, CanonicalizeError> {
    let mut out = Vec::with_capacity(128);
    write_canonical(value, &mut out)?;
    Ok(out)
}

/// Appends the RFC 8785 canonical bytes of `value` to `out`.
///
/// # Errors
///
/// As [`canonicalize`]; `out` is then left as it was.
pub fn write_canonical(value: &Value, out: &mut Vec<u8>) -> Result<(), CanonicalizeError> {
    let start = out.len();
    write_value(value, out, "").inspect_err(|_| out.truncate(start))
}

/// Appends `text` as an RFC 8785 string (§3.2.2.2: `"`, `\\` and the controls escaped,
/// everything else as it is): what [`write_canonical`] writes for `Value::String(text)`, without
/// building the value.
pub fn write_canonical_str(text: &str, out: &mut Vec<u8>) {
    write_string(text, out);
}

/// The members of one object, in canonical order.
enum Members<'v> {
    /// The map already iterates in UTF-16 order (the usual case for a `BTreeMap`).
    InOrder(serde_json::map::Iter<'v>),
    Sorted(std::vec::IntoIter<(&'v String, &'v Value)>),
}

impl<'v> Iterator for Members<'v> {
    type Item = (&'v String, &'v Value);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Self::InOrder(members) => members.next(),
            Self::Sorted(members) => members.next(),
        }
    }
}

/// An array or object whose members are being written.
enum Frame<'v> {
    Array {
        items: std::slice::Iter<'v, Value>,
        index: usize,
    },
    Object {
        members: Members<'v>,
        name: &'v str,
    },
}

/// Writes `value`; `prefix` is the JSON Pointer of `value` itself, for errors.
pub(crate) fn write_value(
    value: &Value,
    out: &mut Vec<u8>,
    prefix: &str,
) -> Result<(), CanonicalizeError> {
    let mut stack: Vec<Frame<'_>> = Vec::new();
    let mut next = value;
    'value: loop {
        match next {
            Value::Null => out.extend_from_slice(b"null"),
            Value::Bool(true) => out.extend_from_slice(b"true"),
            Value::Bool(false) => out.extend_from_slice(b"false"),
            Value::Number(number) => {
                write_number(number, out).map_err(|refusal| refusal.at(prefix, &stack))?
            }
            Value::String(text) => write_string(text, out),
            Value::Array(items) => {
                let mut items = items.iter();
                if let Some(first) = items.next() {
                    out.push(b'[');
                    stack.push(Frame::Array { items, index: 0 });
                    next = first;
                    continue 'value;
                }
                out.extend_from_slice(b"[]");
            }
            Value::Object(map) => {
                let mut members = ordered(map);
                if let Some((name, first)) = members.next() {
                    out.push(b'{');
                    write_string(name, out);
                    out.push(b':');
                    stack.push(Frame::Object { members, name });
                    next = first;
                    continue 'value;
                }
                out.extend_from_slice(b"{}");
            }
        }
        // `next` is written: move on to its next sibling, closing finished containers.
        loop {
            match stack.last_mut() {
                None => return Ok(()),
                Some(Frame::Array { items, index }) => {
                    if let Some(item) = items.next() {
                        out.push(b',');
                        *index += 1;
                        next = item;
                        continue 'value;
                    }
                    out.push(b']');
                }
                Some(Frame::Object { members, name }) => {
                    if let Some((member_name, member)) = members.next() {
                        out.push(b',');
                        write_string(member_name, out);
                        out.push(b':');
                        *name = member_name;
                        next = member;
                        continue 'value;
                    }
                    out.push(b'}');
                }
            }
            stack.pop();
        }
    }
}

/// The members of `map` in RFC 8785 order, sorting only when the map's own order differs.
fn ordered(map: &Map<String, Value>) -> Members<'_> {
    let mut names = map.keys();
    let in_order = match names.next() {
        None => true,
        Some(first) => names
            .try_fold(first, |previous, name| {
                (utf16_cmp(previous, name) == Ordering::Less).then_some(name)
            })
            .is_some(),
    };
    if in_order {
        return Members::InOrder(map.iter());
    }
    let mut members: Vec<(&String, &Value)> = map.iter().collect();
    members.sort_unstable_by(|a, b| utf16_cmp(a.0, b.0));
    Members::Sorted(members.into_iter())
}

/// Compares two strings by their UTF-16 code units (RFC 8785 §3.2.3) without transcoding.
///
/// UTF-8 byte order is code point order, which agrees with UTF-16 order except between a
/// character above U+FFFF (UTF-8 lead byte F0–F4, UTF-16 high surrogate D800–DBFF) and one in
/// U+E000–U+FFFF (lead byte EE or EF). The first differing byte is a lead byte of both
/// characters, or a continuation byte of characters of the same length, so looking at it
/// alone decides.
pub(crate) fn utf16_cmp(a: &str, b: &str) -> Ordering {
    utf16_cmp_bytes(a.as_bytes(), b.as_bytes())
}

/// [`utf16_cmp`] on the UTF-8 bytes of two strings.
pub(crate) fn utf16_cmp_bytes(a: &[u8], b: &[u8]) -> Ordering {
    match a.iter().zip(b).position(|(x, y)| x != y) {
        None => a.len().cmp(&b.len()),
        Some(i) => match (a[i], b[i]) {
            (0xF0.., 0xEE | 0xEF) => Ordering::Less,
            (0xEE | 0xEF, 0xF0..) => Ordering::Greater,
            (x, y) => x.cmp(&y),
        },
    }
}

/// Writes `text` as a JSON string with the minimal escaping of RFC 8785 §3.2.2.2.
pub(crate) fn write_string(text: &str, out: &mut Vec<u8>) {
    write_string_bytes(text.as_bytes(), out);
}

/// [`write_string`] for the UTF-8 bytes of a string.
pub(crate) fn write_string_bytes(bytes: &[u8], out: &mut Vec<u8>) {
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut run_start = 0;
    loop {
        let i = scan::next_string_special(bytes, run_start);
        out.extend_from_slice(&bytes[run_start..i]);
        let Some(&byte) = bytes.get(i) else {
            break;
        };
        run_start = i + 1;
        write_char(char::from(byte), out);
    }
    out.push(b'"');
}

/// Writes one character of a string's content with the escaping of RFC 8785 §3.2.2.2: `"`,
/// `\\` and the controls U+0000–U+001F escaped (short forms where JSON has them, else
/// `\u00xx` in lowercase), everything else as UTF-8.
pub(crate) fn write_char(c: char, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    match c {
        '"' => out.extend_from_slice(b"\\\""),
        '\\' => out.extend_from_slice(b"\\\\"),
        '\u{8}' => out.extend_from_slice(b"\\b"),
        '\t' => out.extend_from_slice(b"\\t"),
        '\n' => out.extend_from_slice(b"\\n"),
        '\u{c}' => out.extend_from_slice(b"\\f"),
        '\r' => out.extend_from_slice(b"\\r"),
        '\0'..='\u{1f}' => {
            let byte = c as u8;
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 0xF)],
            ]);
        }
        _ => {
            let mut utf8 = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
        }
    }
}

/// Why a number was refused; the writer adds where.
enum NumberRefusal {
    IntegerOutOfRange(String),
    NotFinite(String),
}

impl NumberRefusal {
    fn at(self, prefix: &str, stack: &[Frame<'_>]) -> CanonicalizeError {
        let mut pointer = prefix.to_owned();
        for frame in stack {
            match frame {
                Frame::Array { index, .. } => pointer::push_index(&mut pointer, *index),
                Frame::Object { name, .. } => pointer::push_member(&mut pointer, name),
            }
        }
        match self {
            Self::IntegerOutOfRange(value) => {
                CanonicalizeError::IntegerOutOfRange { pointer, value }
            }
            Self::NotFinite(value) => CanonicalizeError::NumberNotFinite { pointer, value },
        }
    }
}

/// Writes a number in ECMAScript form (RFC 8785 §3.2.2.3).
fn write_number(number: &Number, out: &mut Vec<u8>) -> Result<(), NumberRefusal> {
    if let Some(unsigned) = number.as_u64() {
        if unsigned > MAX_SAFE_INTEGER {
            return Err(NumberRefusal::IntegerOutOfRange(unsigned.to_string()));
        }
        write_integer(unsigned, false, out);
    } else if let Some(signed) = number.as_i64() {
        // as_u64 failed, so the value is negative.
        if signed.unsigned_abs() > MAX_SAFE_INTEGER {
            return Err(NumberRefusal::IntegerOutOfRange(signed.to_string()));
        }
        write_integer(signed.unsigned_abs(), true, out);
    } else {
        let float = number.as_f64().unwrap_or(f64::NAN);
        if !float.is_finite() {
            return Err(NumberRefusal::NotFinite(number.to_string()));
        }
        if float == 0.0 {
            // Both zeros are written "0" (ECMAScript Number::toString(-0) is "0").
            out.push(b'0');
        } else {
            let mut buffer = ryu_js::Buffer::new();
            out.extend_from_slice(buffer.format_finite(float).as_bytes());
        }
    }
    Ok(())
}

/// Writes an integer of magnitude at most 2^53−1 in decimal; ECMAScript writes these the same.
fn write_integer(magnitude: u64, negative: bool, out: &mut Vec<u8>) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    let mut rest = magnitude;
    loop {
        start -= 1;
        digits[start] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if negative {
        out.push(b'-');
    }
    out.extend_from_slice(&digits[start..]);
}
