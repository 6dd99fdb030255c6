//! The well-formedness check of pass-through JSON (docs/design.md §5, "Pass-through data is not
//! rewritten"): tool-call arguments and results are carried as the bytes received, so they are
//! only checked, never converted. A small byte scanner, not a parser: numbers are checked
//! against the JSON grammar and never converted (so `1e400` and 2^53 + 1 are carried as
//! written), nesting is tracked on an explicit stack (no recursion, so no stack overflow
//! whatever the input), and member names are compared after unescaping (`"a"` and `"\u0061"`
//! are the same name).
//!
//! Refused: invalid UTF-8, anything outside the JSON grammar (RFC 8259), control characters in
//! strings, escapes of lone surrogates (not Unicode text, RFC 7493 §2.1), a member name twice in
//! one object (two readers could see two different values), and nesting deeper than the limit.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

/// The nesting limit of pass-through JSON, the same as the strict reader's
/// (`jcs_digest::StrictReader::DEFAULT_MAX_DEPTH`).
pub const DEFAULT_MAX_DEPTH: usize = 128;

/// What is wrong with a text that is not well-formed JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WellFormedErrorKind {
    /// The bytes are not UTF-8.
    InvalidUtf8,
    /// The text ends inside a value.
    UnexpectedEnd,
    /// A byte that cannot appear here.
    UnexpectedByte(u8),
    /// A number outside the JSON grammar (`01`, `1.`, `.5`, `1e`, `+1`, …).
    InvalidNumber,
    /// An escape that JSON does not have (`\x`, `\u12`).
    InvalidEscape,
    /// A `\u` escape of a surrogate that is not half of a pair.
    LoneSurrogate,
    /// A control character (below U+0020) unescaped in a string.
    ControlCharacter,
    /// A member name that appears twice in one object (the name, unescaped).
    DuplicateMember(String),
    /// Objects and arrays nested deeper than the limit.
    TooDeep(usize),
    /// Something after the value.
    TrailingData,
}

/// A text that is not well-formed JSON, with the byte offset where that was found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} at byte {offset}")]
pub struct WellFormedError {
    /// What is wrong.
    pub kind: WellFormedErrorKind,
    /// Where (bytes from the start).
    pub offset: usize,
}

impl fmt::Display for WellFormedErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WellFormedErrorKind::InvalidUtf8 => f.write_str("invalid UTF-8"),
            WellFormedErrorKind::UnexpectedEnd => f.write_str("the JSON text ends inside a value"),
            WellFormedErrorKind::UnexpectedByte(byte) if byte.is_ascii_graphic() => {
                write!(f, "unexpected {:?}", char::from(*byte))
            }
            WellFormedErrorKind::UnexpectedByte(byte) => write!(f, "unexpected byte 0x{byte:02x}"),
            WellFormedErrorKind::InvalidNumber => f.write_str("a number outside the JSON grammar"),
            WellFormedErrorKind::InvalidEscape => f.write_str("an invalid escape"),
            WellFormedErrorKind::LoneSurrogate => {
                f.write_str("an escaped lone surrogate (not Unicode text)")
            }
            WellFormedErrorKind::ControlCharacter => {
                f.write_str("an unescaped control character in a string")
            }
            WellFormedErrorKind::DuplicateMember(name) => {
                let shown: String = name.chars().take(100).collect();
                write!(f, "the member name {shown:?} twice in one object")
            }
            WellFormedErrorKind::TooDeep(limit) => {
                write!(f, "nesting deeper than {limit} levels")
            }
            WellFormedErrorKind::TrailingData => f.write_str("data after the JSON value"),
        }
    }
}

/// Checks that `bytes` are one well-formed JSON value (whitespace around it allowed), nested at
/// most `max_depth` deep.
///
/// # Errors
///
/// [`WellFormedError`] naming the first problem and its offset.
pub fn check_well_formed(bytes: &[u8], max_depth: usize) -> Result<(), WellFormedError> {
    let text = std::str::from_utf8(bytes).map_err(|error| WellFormedError {
        kind: WellFormedErrorKind::InvalidUtf8,
        offset: error.valid_up_to(),
    })?;
    Scanner::new(text, max_depth, false).scan().map(|_| ())
}

/// The members of a JSON text: `Ok(None)` when it is well-formed but not an object, otherwise
/// each member's name (unescaped; borrowed from `text` unless it holds an escape) and the byte
/// range of its value, in order.
///
/// # Errors
///
/// [`WellFormedError`] as [`check_well_formed`].
pub(crate) fn object_members(
    text: &str,
    max_depth: usize,
) -> Result<Option<Vec<Member<'_>>>, WellFormedError> {
    let is_object = text
        .trim_start_matches([' ', '\t', '\n', '\r'])
        .starts_with('{');
    let members = Scanner::new(text, max_depth, true).scan()?;
    Ok(is_object.then_some(members))
}

/// The members of a JSON object text, as [`object_members`] gives them, and, when its member
/// `nested` holds an object, that object's members too (their ranges in `text`), found in the
/// same pass: a message and its `params` are scanned once, not twice.
///
/// # Errors
///
/// [`WellFormedError`] as [`check_well_formed`].
pub(crate) fn object_members_and_nested<'a>(
    text: &'a str,
    max_depth: usize,
    nested: &'static str,
) -> Result<Option<ObjectMembers<'a>>, WellFormedError> {
    let is_object = text
        .trim_start_matches([' ', '\t', '\n', '\r'])
        .starts_with('{');
    let mut scanner = Scanner::new(text, max_depth, true);
    scanner.nested = Some(Nested {
        name: nested,
        members: None,
        member: None,
        open: false,
    });
    let (members, nested) = scanner.scan_with_nested()?;
    Ok(is_object.then_some(ObjectMembers { members, nested }))
}

/// What [`object_members_and_nested`] found.
#[derive(Debug, PartialEq)]
pub(crate) struct ObjectMembers<'a> {
    /// The object's members.
    pub(crate) members: Vec<Member<'a>>,
    /// The members of the object the named member holds; `None` when it is absent or not an
    /// object.
    pub(crate) nested: Option<Vec<Member<'a>>>,
}

/// The member of the outermost object whose own object's members are collected too.
struct Nested<'a> {
    name: &'static str,
    /// Its members, once its object opened.
    members: Option<Vec<Member<'a>>>,
    /// The one whose value is being read.
    member: Option<(Cow<'a, str>, usize)>,
    /// Whether its object is the open container at depth 2 (its members are being read).
    open: bool,
}

/// A member of an object: its name and the byte range of its value.
pub(crate) type Member<'a> = (Cow<'a, str>, std::ops::Range<usize>);

/// An open container: an object, or an array.
enum Open<'a> {
    /// Its member names are `names[first..]` of the scanner while there are few, and move to
    /// `index` when there are more ([`LINEAR_NAMES`]).
    Object {
        first: usize,
        index: Option<HashSet<Cow<'a, str>>>,
    },
    Array,
}

/// Up to this many member names, an object's duplicate check compares each new name with the
/// ones before it: no allocation for the small objects of ordinary messages. Beyond it, a hash
/// set keeps a large object's check linear.
const LINEAR_NAMES: usize = 16;

struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    max_depth: usize,
    open: Vec<Open<'a>>,
    /// The member names of the open objects with few members, innermost last; borrowed from
    /// the text unless they hold an escape.
    names: Vec<Cow<'a, str>>,
    /// Whether the outermost object's members are wanted ([`object_members`]).
    collect: bool,
    /// The outermost object's members found so far, and the one whose value is being read.
    members: Vec<Member<'a>>,
    member: Option<(Cow<'a, str>, usize)>,
    /// The outermost member whose object's members are wanted too
    /// ([`object_members_and_nested`]).
    nested: Option<Nested<'a>>,
}

impl<'a> Scanner<'a> {
    fn new(text: &'a str, max_depth: usize, collect: bool) -> Scanner<'a> {
        Scanner {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            max_depth,
            open: Vec::new(),
            names: Vec::new(),
            collect,
            members: Vec::new(),
            member: None,
            nested: None,
        }
    }

    fn fail<T>(&self, kind: WellFormedErrorKind) -> Result<T, WellFormedError> {
        Err(WellFormedError {
            kind,
            offset: self.pos,
        })
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn unexpected<T>(&self) -> Result<T, WellFormedError> {
        match self.peek() {
            None => self.fail(WellFormedErrorKind::UnexpectedEnd),
            Some(byte) => self.fail(WellFormedErrorKind::UnexpectedByte(byte)),
        }
    }

    fn expect(&mut self, byte: u8) -> Result<(), WellFormedError> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            self.unexpected()
        }
    }

    fn enter(&mut self, container: Open<'a>) -> Result<(), WellFormedError> {
        if self.open.len() >= self.max_depth {
            return self.fail(WellFormedErrorKind::TooDeep(self.max_depth));
        }
        self.open.push(container);
        Ok(())
    }

    /// A member name and its colon, in the innermost (object) container.
    fn member_name(&mut self) -> Result<(), WellFormedError> {
        let start = self.pos;
        if self.peek() != Some(b'"') {
            return self.unexpected();
        }
        let name = self.string()?;
        let outermost = self.open.len() == 1;
        // The name outlives the duplicate check only for a member whose span is collected;
        // every other name moves into the check.
        let collected = if (outermost && self.collect)
            || (self.open.len() == 2 && self.nested.as_ref().is_some_and(|nested| nested.open))
        {
            Some(name.clone())
        } else {
            None
        };
        if let Some(Open::Object { first, index }) = self.open.last_mut() {
            // The name the object already holds, when it holds this one.
            let repeated = match index {
                Some(index) => index.replace(name),
                None if self.names[*first..].contains(&name) => Some(name),
                None if self.names.len() - *first >= LINEAR_NAMES => {
                    let mut names: HashSet<Cow<'a, str>> = self.names.drain(*first..).collect();
                    names.insert(name);
                    *index = Some(names);
                    None
                }
                None => {
                    if self.names.capacity() == 0 {
                        // Room for every name the linear check holds: one allocation per
                        // text instead of one per doubling.
                        self.names.reserve(LINEAR_NAMES);
                    }
                    self.names.push(name);
                    None
                }
            };
            if let Some(name) = repeated {
                return Err(WellFormedError {
                    kind: WellFormedErrorKind::DuplicateMember(name.into_owned()),
                    offset: start,
                });
            }
        }
        self.skip_whitespace();
        self.expect(b':')?;
        if let Some(name) = collected {
            self.skip_whitespace();
            let pos = self.pos;
            if outermost {
                self.member = Some((name, pos));
            } else if let Some(nested) = self.nested.as_mut() {
                nested.member = Some((name, pos));
            }
        }
        Ok(())
    }

    /// An object just opened at depth 2: when it is the value of the nested member, its
    /// members are collected from now on.
    fn open_nested(&mut self) {
        let current = self.member.as_ref().map(|(name, _)| name.as_ref());
        if let Some(nested) = self.nested.as_mut() {
            if current == Some(nested.name) {
                nested.open = true;
                nested.members.get_or_insert_with(|| Vec::with_capacity(4));
            }
        }
    }

    /// Leaves the innermost container, forgetting its member names.
    fn leave(&mut self) {
        if self.open.len() == 2 {
            if let Some(nested) = self.nested.as_mut() {
                nested.open = false;
            }
        }
        if let Some(Open::Object { first, .. }) = self.open.pop() {
            self.names.truncate(first);
        }
    }

    /// [`Scanner::scan`], and the nested object's members.
    fn scan_with_nested(
        mut self,
    ) -> Result<(Vec<Member<'a>>, Option<Vec<Member<'a>>>), WellFormedError> {
        self.run()?;
        let nested = self.nested.and_then(|nested| nested.members);
        Ok((self.members, nested))
    }

    /// Scans the whole text; the outermost object's members (none for another value).
    fn scan(mut self) -> Result<Vec<Member<'a>>, WellFormedError> {
        self.run()?;
        Ok(self.members)
    }

    /// Scans the whole text, collecting the members asked for.
    fn run(&mut self) -> Result<(), WellFormedError> {
        'value: loop {
            self.skip_whitespace();
            match self.peek() {
                Some(b'{') => {
                    let first = self.names.len();
                    self.enter(Open::Object { first, index: None })?;
                    if self.open.len() == 2 {
                        self.open_nested();
                    }
                    self.pos += 1;
                    self.skip_whitespace();
                    if self.peek() == Some(b'}') {
                        self.pos += 1;
                        self.leave();
                    } else {
                        self.member_name()?;
                        continue 'value;
                    }
                }
                Some(b'[') => {
                    self.enter(Open::Array)?;
                    self.pos += 1;
                    self.skip_whitespace();
                    if self.peek() == Some(b']') {
                        self.pos += 1;
                        self.leave();
                    } else {
                        continue 'value;
                    }
                }
                Some(b'"') => self.skip_string()?,
                Some(b't') => self.literal(b"true")?,
                Some(b'f') => self.literal(b"false")?,
                Some(b'n') => self.literal(b"null")?,
                Some(b'-' | b'0'..=b'9') => self.number()?,
                _ => return self.unexpected(),
            }
            // After a complete value: close containers, or go on to the next value.
            loop {
                if self.open.len() == 1 {
                    if let Some((name, start)) = self.member.take() {
                        self.members.push((name, start..self.pos));
                    }
                } else if self.open.len() == 2 {
                    if let Some(nested) = self.nested.as_mut() {
                        if let Some((name, start)) = nested.member.take() {
                            let end = self.pos;
                            nested
                                .members
                                .get_or_insert_with(Vec::new)
                                .push((name, start..end));
                        }
                    }
                }
                self.skip_whitespace();
                let is_object = match self.open.last() {
                    None => {
                        return if self.pos == self.bytes.len() {
                            Ok(())
                        } else {
                            self.fail(WellFormedErrorKind::TrailingData)
                        };
                    }
                    Some(Open::Object { .. }) => true,
                    Some(Open::Array) => false,
                };
                match (self.peek(), is_object) {
                    (Some(b','), true) => {
                        self.pos += 1;
                        self.skip_whitespace();
                        self.member_name()?;
                        continue 'value;
                    }
                    (Some(b','), false) => {
                        self.pos += 1;
                        continue 'value;
                    }
                    (Some(b'}'), true) | (Some(b']'), false) => {
                        self.pos += 1;
                        self.leave();
                    }
                    _ => return self.unexpected(),
                }
            }
        }
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), WellFormedError> {
        for &byte in word {
            self.expect(byte)?;
        }
        Ok(())
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, checked, never converted.
    fn number(&mut self) -> Result<(), WellFormedError> {
        let digits = |scanner: &mut Self| {
            let start = scanner.pos;
            while matches!(scanner.peek(), Some(b'0'..=b'9')) {
                scanner.pos += 1;
            }
            scanner.pos > start
        };
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                digits(self);
            }
            _ => return self.fail(WellFormedErrorKind::InvalidNumber),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !digits(self) {
                return self.fail(WellFormedErrorKind::InvalidNumber);
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if !digits(self) {
                return self.fail(WellFormedErrorKind::InvalidNumber);
            }
        }
        // `01` or `1.5.2`: a number must not run into more number characters.
        if matches!(self.peek(), Some(b'0'..=b'9' | b'.')) {
            return self.fail(WellFormedErrorKind::InvalidNumber);
        }
        Ok(())
    }

    /// Four hex digits after `\u`.
    fn hex4(&mut self) -> Result<u16, WellFormedError> {
        let digits = self
            .bytes
            .get(self.pos..self.pos + 4)
            .and_then(|digits| std::str::from_utf8(digits).ok())
            .filter(|digits| digits.bytes().all(|byte| byte.is_ascii_hexdigit()))
            .and_then(|digits| u16::from_str_radix(digits, 16).ok());
        match digits {
            Some(unit) => {
                self.pos += 4;
                Ok(unit)
            }
            None => self.fail(WellFormedErrorKind::InvalidEscape),
        }
    }

    /// A member name at `"`: its unescaped text, borrowed unless it holds an escape.
    fn string(&mut self) -> Result<Cow<'a, str>, WellFormedError> {
        self.pos += 1;
        let text = self.text;
        let opened = self.pos;
        let mut decoded = String::new();
        let mut run = self.pos;
        loop {
            self.pos = jcs_digest::next_string_special(self.bytes, self.pos);
            match self.peek() {
                Some(b'"') => {
                    let closed = self.pos;
                    self.pos += 1;
                    if run == opened {
                        return Ok(Cow::Borrowed(&text[opened..closed]));
                    }
                    decoded.push_str(&text[run..closed]);
                    return Ok(Cow::Owned(decoded));
                }
                Some(b'\\') => {
                    decoded.push_str(&text[run..self.pos]);
                    decoded.push(self.escape()?);
                    run = self.pos;
                }
                _ => return self.string_fault(),
            }
        }
    }

    /// A string value at `"`, checked and passed over: nothing is decoded, nothing kept.
    fn skip_string(&mut self) -> Result<(), WellFormedError> {
        self.pos += 1;
        loop {
            self.pos = jcs_digest::next_string_special(self.bytes, self.pos);
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.escape()?;
                }
                _ => return self.string_fault(),
            }
        }
    }

    /// Where [`next_string_special`](jcs_digest::next_string_special) stopped inside a string
    /// on neither `"` nor `\`: a control character, or the end of the text. (The text is UTF-8
    /// already, and those three are ASCII, so the jumps land on char boundaries.)
    #[cold]
    fn string_fault<T>(&self) -> Result<T, WellFormedError> {
        match self.peek() {
            None => self.fail(WellFormedErrorKind::UnexpectedEnd),
            Some(_) => self.fail(WellFormedErrorKind::ControlCharacter),
        }
    }

    /// The escape whose `\` is at `self.pos`: the character it stands for; `self.pos` is left
    /// after it.
    fn escape(&mut self) -> Result<char, WellFormedError> {
        let escape_at = self.pos;
        self.pos += 1;
        let unescaped = match self.peek() {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                self.pos += 1;
                let unit = self.hex4()?;
                let scalar = match unit {
                    0xD800..=0xDBFF => {
                        if self.bytes.get(self.pos..self.pos + 2) != Some(b"\\u") {
                            return self.lone_surrogate(escape_at);
                        }
                        self.pos += 2;
                        let low = self.hex4()?;
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return self.lone_surrogate(escape_at);
                        }
                        0x10000 + ((u32::from(unit) - 0xD800) << 10) + (u32::from(low) - 0xDC00)
                    }
                    0xDC00..=0xDFFF => return self.lone_surrogate(escape_at),
                    other => u32::from(other),
                };
                // Every value here is a scalar value (surrogates handled above).
                return Ok(char::from_u32(scalar).unwrap_or('\u{FFFD}'));
            }
            _ => return self.fail(WellFormedErrorKind::InvalidEscape),
        };
        self.pos += 1;
        Ok(unescaped)
    }

    fn lone_surrogate<T>(&self, at: usize) -> Result<T, WellFormedError> {
        Err(WellFormedError {
            kind: WellFormedErrorKind::LoneSurrogate,
            offset: at,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn check(text: &str) -> Result<(), WellFormedError> {
        check_well_formed(text.as_bytes(), DEFAULT_MAX_DEPTH)
    }

    fn refused(text: &str) -> (WellFormedErrorKind, usize) {
        let error = check(text).unwrap_err();
        (error.kind, error.offset)
    }

    #[test]
    fn numbers_beyond_any_float_or_integer_are_well_formed() {
        for text in [
            "9007199254740993",
            "1E+2",
            "-0",
            "1e400",
            "-1.5e-7",
            "0.0",
            r#"{"n": 123456789012345678901234567890, "x": [1E+2, -0, 0e0]}"#,
            "  true ",
            "null",
            r#""é\u00e9\ud83d\ude00\n""#,
            "[]",
            "{}",
            r#"{"a": {"a": 1}, "b": [{"a": 2}, {"a": 3}]}"#,
        ] {
            assert_eq!(check(text), Ok(()), "{text}");
        }
    }

    #[test]
    fn what_is_not_json_is_refused_where_it_is() {
        use WellFormedErrorKind as K;
        let cases = [
            ("01", (K::InvalidNumber, 1)),
            ("1.", (K::InvalidNumber, 2)),
            (".5", (K::UnexpectedByte(b'.'), 0)),
            ("+1", (K::UnexpectedByte(b'+'), 0)),
            ("1e", (K::InvalidNumber, 2)),
            ("-", (K::InvalidNumber, 1)),
            ("[1,]", (K::UnexpectedByte(b']'), 3)),
            ("[1 2]", (K::UnexpectedByte(b'2'), 3)),
            (r#"{"a" 1}"#, (K::UnexpectedByte(b'1'), 5)),
            (r#"{"a":1,}"#, (K::UnexpectedByte(b'}'), 7)),
            (r#"{1:2}"#, (K::UnexpectedByte(b'1'), 1)),
            ("[1]]", (K::TrailingData, 3)),
            ("", (K::UnexpectedEnd, 0)),
            ("[", (K::UnexpectedEnd, 1)),
            (r#""abc"#, (K::UnexpectedEnd, 4)),
            ("tru", (K::UnexpectedEnd, 3)),
            ("nul1", (K::UnexpectedByte(b'1'), 3)),
            ("\"a\u{1}\"", (K::ControlCharacter, 2)),
            (r#""\x""#, (K::InvalidEscape, 2)),
            (r#""\u12""#, (K::InvalidEscape, 3)),
            (r#""\ud800""#, (K::LoneSurrogate, 1)),
            (r#""\udc00""#, (K::LoneSurrogate, 1)),
            (r#""\ud800\u0041""#, (K::LoneSurrogate, 1)),
            (r#"{"a":1,"a":2}"#, (K::DuplicateMember("a".into()), 7)),
            (r#"{"a":1,"\u0061":2}"#, (K::DuplicateMember("a".into()), 7)),
            (
                r#"{"x":{"a":1,"b":{"a":2},"a":3}}"#,
                (K::DuplicateMember("a".into()), 24),
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(refused(text), expected, "{text}");
        }
        let error = check_well_formed(b"[\xff]", 8).unwrap_err();
        assert_eq!((error.kind, error.offset), (K::InvalidUtf8, 1));
        assert_eq!(
            check(r#"{"a":1,"a":2}"#).unwrap_err().to_string(),
            "the member name \"a\" twice in one object at byte 7"
        );
    }

    /// Strings are scanned sixteen bytes a step: a control character, an escape or the end at
    /// every position of a long string (multi-byte characters around it) is found exactly
    /// where it is, and escapes after a long run decode as they do after a short one.
    #[test]
    fn long_strings_are_refused_and_decoded_at_the_exact_byte() {
        use WellFormedErrorKind as K;
        let filler = "aé€😀bcdefghijklmnopq";
        for at in 0..=filler.len() {
            if !filler.is_char_boundary(at) {
                continue;
            }
            let (before, after) = filler.split_at(at);
            let control = format!("[\"{before}\u{1f}{after}\"]");
            assert_eq!(
                refused(&control),
                (K::ControlCharacter, 2 + at),
                "{control:?}"
            );
            let open = format!("[\"{before}");
            assert_eq!(refused(&open), (K::UnexpectedEnd, open.len()), "{open:?}");
            let escape = format!("[\"{before}\\q{after}\"]");
            assert_eq!(refused(&escape), (K::InvalidEscape, 3 + at), "{escape:?}");
            let text = format!(r#"{{"{before}\"\u00e9{after}": "{after}\\{before}"}}"#);
            let members = object_members(&text, DEFAULT_MAX_DEPTH).unwrap().unwrap();
            assert_eq!(members.len(), 1, "{text:?}");
            assert_eq!(members[0].0, format!("{before}\"é{after}"), "{text:?}");
            let value = &text[members[0].1.clone()];
            assert_eq!(value, format!(r#""{after}\\{before}""#), "{text:?}");
        }
    }

    #[test]
    fn duplicates_are_found_in_large_objects_and_names_are_forgotten_when_an_object_closes() {
        use WellFormedErrorKind as K;
        // Members past the linear check's limit go to a hash set; a duplicate of an early
        // name, and one of a late name, are found either way.
        let names: Vec<String> = (0..40).map(|i| format!("\"m{i}\":{i}")).collect();
        let large = format!("{{{}}}", names.join(","));
        assert_eq!(check(&large), Ok(()));
        for (repeated, text) in [
            ("m3", format!("{{{},\"m3\":0}}", names.join(","))),
            ("m39", format!("{{{},\"m39\":0}}", names.join(","))),
            ("m1", format!("{{{},\"\\u006d1\":0}}", names.join(","))),
        ] {
            let error = check(&text).unwrap_err();
            assert_eq!(
                (error.kind, error.offset),
                (K::DuplicateMember(repeated.into()), large.len()),
                "{text}"
            );
        }
        // Sibling objects, nested ones, and a large object's neighbours do not share names.
        let nested = format!(r#"{{"a":{large},"b":{large},"m1":{{"m1":[{large}]}},"m2":1}}"#);
        assert_eq!(check(&nested), Ok(()));
        assert_eq!(
            refused(&format!(r#"{{"a":{large},"a":1}}"#)),
            (K::DuplicateMember("a".into()), large.len() + 6)
        );
    }

    #[test]
    fn the_outermost_members_are_found_with_their_spans() {
        let text = r#" {"a" : [1, {"b": 2}] , "\u0063":"x", "d":{}} "#;
        let members = object_members(text, DEFAULT_MAX_DEPTH).unwrap().unwrap();
        let shown: Vec<(&str, &str)> = members
            .iter()
            .map(|(name, span)| (name.as_ref(), &text[span.clone()]))
            .collect();
        assert_eq!(
            shown,
            [("a", r#"[1, {"b": 2}]"#), ("c", r#""x""#), ("d", "{}")]
        );
        assert_eq!(object_members("[1]", 8), Ok(None));
        assert_eq!(object_members("{}", 8), Ok(Some(Vec::new())));
        assert!(object_members(r#"{"a":1,"a":2}"#, 8).is_err());
    }

    #[test]
    fn depth_is_limited_without_recursion() {
        assert_eq!(check_well_formed(b"[[[]]]", 3), Ok(()));
        assert_eq!(
            check_well_formed(b"[[[[]]]]", 3).unwrap_err(),
            WellFormedError {
                kind: WellFormedErrorKind::TooDeep(3),
                offset: 3
            }
        );
        // A million open brackets: refused at the limit, no stack overflow.
        let deep = "[".repeat(1_000_000);
        assert_eq!(
            refused(&deep),
            (WellFormedErrorKind::TooDeep(DEFAULT_MAX_DEPTH), 128)
        );
        let deep = format!("{}1{}", "[".repeat(128), "]".repeat(128));
        assert_eq!(check(&deep), Ok(()));
    }

    #[test]
    fn the_nested_members_are_those_of_the_named_member_only() {
        let text = r#"{"a": {"x": 1}, "params" : { "name" : "e\u0063ho", "arguments": {"k": [1, {"z": 2}]}, "_meta": {} }, "b": []}"#;
        let found = object_members_and_nested(text, DEFAULT_MAX_DEPTH, "params")
            .unwrap()
            .unwrap();
        let names: Vec<&str> = found
            .members
            .iter()
            .map(|(name, _)| name.as_ref())
            .collect();
        assert_eq!(names, ["a", "params", "b"]);
        let nested: Vec<(&str, &str)> = found
            .nested
            .as_ref()
            .unwrap()
            .iter()
            .map(|(name, span)| (name.as_ref(), &text[span.clone()]))
            .collect();
        assert_eq!(
            nested,
            [
                ("name", r#""e\u0063ho""#),
                ("arguments", r#"{"k": [1, {"z": 2}]}"#),
                ("_meta", "{}")
            ]
        );
        // Absent, not an object, empty.
        fn nested_of(text: &str) -> Option<Vec<Member<'_>>> {
            object_members_and_nested(text, DEFAULT_MAX_DEPTH, "params")
                .unwrap()
                .unwrap()
                .nested
        }
        assert_eq!(nested_of(r#"{"a": {"b": 1}}"#), None);
        assert_eq!(nested_of(r#"{"params": [{"b": 1}]}"#), None);
        assert_eq!(nested_of(r#"{"params": {}}"#), Some(Vec::new()));
        assert_eq!(
            object_members_and_nested("[1]", DEFAULT_MAX_DEPTH, "params").unwrap(),
            None
        );
    }

    /// A JSON-ish text: the grammar's characters, so that most texts are near misses.
    fn jsonish() -> impl proptest::strategy::Strategy<Value = String> {
        proptest::string::string_regex(r#"[\[\]{}:, "\\abcu0-9eE+\-.tfnrl]{0,48}"#).unwrap()
    }

    /// A JSON value of bounded size and depth.
    fn value() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(serde_json::Value::from),
            "\\PC{0,8}".prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(6, 48, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::from),
                proptest::collection::btree_map("\\PC{0,6}", inner, 0..6)
                    .prop_map(|map| serde_json::Value::Object(map.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #[test]
        fn agrees_with_serde_json_except_for_what_it_refuses_on_purpose(text in jsonish()) {
            let ours = check(&text);
            let serde = serde_json::from_str::<serde::de::IgnoredAny>(&text);
            match (&ours, &serde) {
                (Ok(()), Ok(_)) | (Err(_), Err(_)) => {}
                // Duplicate names are refused here, accepted by serde_json.
                (Err(error), Ok(_)) => proptest::prop_assert!(
                    matches!(error.kind, WellFormedErrorKind::DuplicateMember(_)),
                    "{text:?}: {error}"
                ),
                (Ok(()), Err(error)) => proptest::prop_assert!(false, "{text:?}: serde_json: {error}"),
            }
            // Whatever the strict reader accepts is well-formed.
            if jcs_digest::parse_strict(text.as_bytes()).is_ok() {
                proptest::prop_assert_eq!(&ours, &Ok(()));
            }
        }

        /// The members of `params` found in the message's own pass are those a second scan of
        /// `params`' text finds (as the reader of a message did before), at the same places;
        /// and the message's members and errors are those of [`object_members`].
        #[test]
        fn nested_members_found_in_one_pass_equal_a_second_scan(
            params in value(),
            other in value(),
            pretty in proptest::bool::ANY,
            near_miss in jsonish(),
        ) {
            let message = serde_json::json!({"jsonrpc": "2.0", "id": 1, "params": params, "x": other});
            let text = if pretty {
                serde_json::to_string_pretty(&message).unwrap()
            } else {
                message.to_string()
            };
            for text in [text, near_miss.clone(), format!("{{\"params\": {near_miss}}}")] {
                let once = object_members_and_nested(&text, DEFAULT_MAX_DEPTH, "params");
                let members = object_members(&text, DEFAULT_MAX_DEPTH);
                match (&once, &members) {
                    (Ok(Some(once)), Ok(Some(members))) => {
                        proptest::prop_assert_eq!(&once.members, members);
                        let span = members
                            .iter()
                            .find(|(name, _)| name == "params")
                            .map(|(_, span)| span.clone());
                        let again = span.clone().and_then(|span| {
                            object_members(&text[span], DEFAULT_MAX_DEPTH).unwrap()
                        });
                        let shifted = again.map(|again| {
                            let start = span.map_or(0, |span| span.start);
                            again
                                .into_iter()
                                .map(|(name, inner)| (name, inner.start + start..inner.end + start))
                                .collect::<Vec<_>>()
                        });
                        proptest::prop_assert_eq!(&once.nested, &shifted, "{}", text);
                    }
                    (Ok(None), Ok(None)) => {}
                    (Err(once), Err(members)) => proptest::prop_assert_eq!(once, members),
                    _ => proptest::prop_assert!(false, "{text:?}: {once:?} against {members:?}"),
                }
            }
        }

        #[test]
        fn every_serialized_value_is_well_formed_and_kept_byte_for_byte(value in value()) {
            for text in [value.to_string(), serde_json::to_string_pretty(&value).unwrap()] {
                proptest::prop_assert_eq!(check(&text), Ok(()));
                let raw = crate::RawJson::from_slice(text.as_bytes()).unwrap();
                proptest::prop_assert_eq!(raw.as_str(), text.as_str());
            }
        }
    }
}
