//! The streaming strict reader: JSON bytes read once, checked by the rules of the tree reader
//! ([`crate::StrictReader`]) and written as RFC 8785 canonical bytes with no `Value` tree.
//!
//! The reader is a pull parser over one byte slice. Arrays and objects are entered and walked
//! ([`StreamReader::enter_array`], [`StreamReader::next_element`], …), and any value can be
//! skipped (checked, nothing kept) or written canonically. Open containers live on an explicit
//! stack, so nesting is bounded by the depth limit alone, never by the call stack.
//!
//! Canonical objects are the one thing that needs a buffer: members are written in input
//! order, each as one span of the output, and only when the names arrived out of RFC 8785
//! order are the spans copied once more, sorted, at the closing brace. Member names of the
//! open objects are kept (decoded) for duplicate detection, sorting and error pointers; they
//! are dropped when their object closes.
//!
//! Every error is the one the tree reader gives for the same bytes: the same kind, JSON
//! Pointer and offset (the tests and the differential fuzz target compare the two).

use std::collections::HashSet;

use sha2::{Digest as _, Sha256};

use crate::canonical::{self, utf16_cmp_bytes};
use crate::digest::Digest;
use crate::error::{StrictJsonError, StrictJsonErrorKind};
use crate::lexer::{self, ByteSink, CharSink, Discard, LexError, LexedNumber, Utf8};
use crate::pointer;
use crate::reader::StrictReader;

mod tool;

pub use tool::{StreamedTool, ToolName};

/// The type of a JSON value, as its first byte announces it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JsonType {
    /// `null`.
    Null,
    /// `true` or `false`.
    Boolean,
    /// A number.
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

impl JsonType {
    /// The type's name in error messages: `"null"`, `"boolean"`, `"number"`, `"string"`,
    /// `"array"` or `"object"`.
    pub const fn name(self) -> &'static str {
        match self {
            JsonType::Null => "null",
            JsonType::Boolean => "boolean",
            JsonType::Number => "number",
            JsonType::String => "string",
            JsonType::Array => "array",
            JsonType::Object => "object",
        }
    }

    /// The type of `value`.
    pub fn of_value(value: &serde_json::Value) -> JsonType {
        use serde_json::Value;
        match value {
            Value::Null => JsonType::Null,
            Value::Bool(_) => JsonType::Boolean,
            Value::Number(_) => JsonType::Number,
            Value::String(_) => JsonType::String,
            Value::Array(_) => JsonType::Array,
            Value::Object(_) => JsonType::Object,
        }
    }

    /// The type a value starting with `byte` has, if it is a valid value.
    fn of_first_byte(byte: u8) -> Option<JsonType> {
        Some(match byte {
            b'{' => JsonType::Object,
            b'[' => JsonType::Array,
            b'"' => JsonType::String,
            b'-' | b'0'..=b'9' => JsonType::Number,
            b't' | b'f' => JsonType::Boolean,
            b'n' => JsonType::Null,
            _ => return None,
        })
    }
}

/// Objects with more members than this check duplicates with a hash set instead of comparing
/// the new name with every earlier one (so a hostile object costs linear time).
const LINEAR_DUPLICATE_SCAN: usize = 16;

/// Canonical bytes are handed to the hasher in pieces of about this size when no object is
/// open (an open object may still be reordered).
const FLUSH_AT: usize = 1 << 16;

/// An array or object whose closing bracket has not been read yet.
struct Frame {
    object: bool,
    /// Elements or members completed: the index of the element being read, for pointers.
    count: usize,
    /// Whether the walk API has looked past the opening bracket (unused by the engine).
    started: bool,
    /// Objects: index into `StreamReader::names` of the first and the current member name.
    names_start: usize,
    current: Option<usize>,
    /// Objects past [`LINEAR_DUPLICATE_SCAN`] members: every name so far.
    seen: Option<HashSet<Box<[u8]>>>,
    /// Canonical objects: where `{` is in the output, the first of their spans, and whether
    /// the names so far are in RFC 8785 order.
    canonical: Option<CanonicalObject>,
}

struct CanonicalObject {
    open_at: usize,
    spans_start: usize,
    in_order: bool,
}

/// One member of a canonical object in the output: `"name":value`, without the comma; `name`
/// is where its decoded name is in `StreamReader::name_text`.
struct Span {
    name: (usize, usize),
    start: usize,
    end: usize,
}

/// A streaming strict JSON reader over one byte slice: walk arrays and objects, skip values or
/// write them in RFC 8785 canonical form, with the errors of [`crate::StrictReader`].
///
/// The reader accepts exactly the bytes the tree reader accepts, provided every value is
/// consumed: after [`next_element`](Self::next_element) returns `true` or
/// [`next_member`](Self::next_member) returns a name, read that value with one of the
/// value methods; after the document's value, call [`finish`](Self::finish). After an error
/// the reader is spent: the error is the one to report.
///
/// ```
/// use jcs_digest::{JsonType, StreamReader};
///
/// let mut reader = StreamReader::new(br#"{"b": [1.50, "\u00e9"], "a": {"y": 1, "x": 2}}"#);
/// reader.enter_object()?;
/// let mut canonical = Vec::new();
/// while let Some(name) = reader.next_member()? {
///     if name == "a" {
///         reader.canonical_value(&mut canonical)?;
///     } else {
///         assert_eq!(reader.peek(), Some(JsonType::Array));
///         reader.skip_value()?;
///     }
/// }
/// reader.finish()?;
/// assert_eq!(canonical, br#"{"x":2,"y":1}"#);
/// # Ok::<(), jcs_digest::StrictJsonError>(())
/// ```
pub struct StreamReader<'a> {
    input: &'a [u8],
    pos: usize,
    max_depth: usize,
    stack: Vec<Frame>,
    /// Decoded member names of the open objects (UTF-8), end to end.
    name_text: Vec<u8>,
    /// Ranges of `name_text`, one per member name read in an open object.
    names: Vec<(usize, usize)>,
    spans: Vec<Span>,
    /// Where sorted members are assembled before they replace the unsorted ones.
    scratch: Vec<u8>,
    /// Canonical objects open (while there is none, the output can go to a hasher).
    canonical_objects: usize,
    /// The per-tool buffer of [`tool_definition`](Self::tool_definition), kept for reuse.
    pub(super) tool_buffer: Vec<u8>,
}

impl<'a> StreamReader<'a> {
    /// A reader of `input` with the default depth limit
    /// ([`StrictReader::DEFAULT_MAX_DEPTH`]).
    pub fn new(input: &'a [u8]) -> Self {
        Self::with_max_depth(input, StrictReader::DEFAULT_MAX_DEPTH)
    }

    /// A reader of `input` that allows at most `limit` arrays and objects nested inside each
    /// other (as [`StrictReader::max_depth`]).
    pub fn with_max_depth(input: &'a [u8], limit: usize) -> Self {
        StreamReader {
            input,
            pos: 0,
            max_depth: limit,
            stack: Vec::new(),
            name_text: Vec::new(),
            names: Vec::new(),
            spans: Vec::new(),
            scratch: Vec::new(),
            canonical_objects: 0,
            tool_buffer: Vec::new(),
        }
    }

    /// The byte offset the reader has reached.
    pub fn offset(&self) -> usize {
        self.pos
    }

    /// The type of the next value, judged by its first byte after whitespace, or `None` when
    /// that byte cannot start a value. Reading the value may still fail (`tru`, `1e400`).
    pub fn peek(&mut self) -> Option<JsonType> {
        self.skip_whitespace();
        self.input
            .get(self.pos)
            .copied()
            .and_then(JsonType::of_first_byte)
    }

    /// Reads the next value, checking it, and keeps nothing; returns its type.
    ///
    /// # Errors
    ///
    /// [`StrictJsonError`], as the tree reader gives it for the same bytes.
    pub fn skip_value(&mut self) -> Result<JsonType, StrictJsonError> {
        let kind = self.peek();
        self.value::<false>(&mut Vec::new(), None)?;
        // A value was read, so its first byte named its type.
        Ok(kind.unwrap_or(JsonType::Null))
    }

    /// Reads the next value and appends its RFC 8785 canonical bytes to `out`.
    ///
    /// # Errors
    ///
    /// [`StrictJsonError`], as the tree reader gives it for the same bytes; `out` may then
    /// hold part of the value.
    pub fn canonical_value(&mut self, out: &mut Vec<u8>) -> Result<(), StrictJsonError> {
        self.value::<true>(out, None)
    }

    /// Reads the next value, which must be a string, and returns it decoded; any other value
    /// is read (and checked) and `None` returned.
    ///
    /// # Errors
    ///
    /// [`StrictJsonError`], as the tree reader gives it for the same bytes.
    pub fn string_value(&mut self) -> Result<Option<String>, StrictJsonError> {
        if self.peek() != Some(JsonType::String) {
            self.skip_value()?;
            return Ok(None);
        }
        let input = self.input;
        let mut text = String::new();
        lexer::string_into(input, &mut self.pos, &mut text)
            .map_err(|error| self.lex_error(error, false))?;
        Ok(Some(text))
    }

    /// Reads the `[` of the array that is the next value.
    ///
    /// # Errors
    ///
    /// [`StrictJsonErrorKind::TooDeep`] past the depth limit; a syntax error when the next
    /// value is not an array (check with [`peek`](Self::peek) first).
    pub fn enter_array(&mut self) -> Result<(), StrictJsonError> {
        self.enter(b'[', "'[' (an array)")
    }

    /// Moves to the next element of the innermost array: `true` when there is one (read it
    /// next), `false` when the array closed.
    ///
    /// # Errors
    ///
    /// A syntax error when neither `,` nor `]` follows an element.
    pub fn next_element(&mut self) -> Result<bool, StrictJsonError> {
        self.skip_whitespace();
        let Some(frame) = self.stack.last_mut() else {
            return Err(self.unexpected("the end of the input after the JSON value"));
        };
        let at = self.input.get(self.pos).copied();
        if frame.started {
            frame.count += 1;
            match at {
                Some(b',') => {
                    self.pos += 1;
                    return Ok(true);
                }
                Some(b']') => {}
                _ => return Err(self.unexpected("',' or ']' after an array element")),
            }
        } else {
            frame.started = true;
            if at != Some(b']') {
                return Ok(true);
            }
        }
        self.pos += 1;
        self.close::<false>(&mut Vec::new());
        Ok(false)
    }

    /// Reads the `{` of the object that is the next value.
    ///
    /// # Errors
    ///
    /// [`StrictJsonErrorKind::TooDeep`] past the depth limit; a syntax error when the next
    /// value is not an object (check with [`peek`](Self::peek) first).
    pub fn enter_object(&mut self) -> Result<(), StrictJsonError> {
        self.enter(b'{', "'{' (an object)")
    }

    /// Moves to the next member of the innermost object: its decoded name (read its value
    /// next), or `None` when the object closed.
    ///
    /// # Errors
    ///
    /// [`StrictJsonErrorKind::DuplicateMember`] for a name the object already holds; the
    /// errors of a string for the name; a syntax error when neither `,` nor `}` follows a
    /// member.
    pub fn next_member(&mut self) -> Result<Option<&str>, StrictJsonError> {
        self.skip_whitespace();
        let Some(frame) = self.stack.last_mut() else {
            return Err(self.unexpected("the end of the input after the JSON value"));
        };
        let at = self.input.get(self.pos).copied();
        if frame.started {
            frame.count += 1;
            match at {
                Some(b',') => {
                    self.pos += 1;
                    self.skip_whitespace();
                }
                Some(b'}') => {
                    self.pos += 1;
                    self.close::<false>(&mut Vec::new());
                    return Ok(None);
                }
                _ => return Err(self.unexpected("',' or '}' after an object member")),
            }
        } else {
            frame.started = true;
            if at == Some(b'}') {
                self.pos += 1;
                self.close::<false>(&mut Vec::new());
                return Ok(None);
            }
        }
        let index = self.member_name::<false>(&mut Vec::new())?;
        let (start, end) = self.names[index];
        // The name was checked to be UTF-8 as it was read, so this cannot fall back.
        Ok(Some(
            std::str::from_utf8(&self.name_text[start..end]).unwrap_or_default(),
        ))
    }

    /// Ends the document: only whitespace may follow the value that was read.
    ///
    /// # Errors
    ///
    /// A syntax error for anything after the value (or for a document not read to its end).
    pub fn finish(mut self) -> Result<(), StrictJsonError> {
        self.skip_whitespace();
        if self.stack.is_empty() && self.pos == self.input.len() {
            return Ok(());
        }
        Err(self.unexpected("the end of the input after the JSON value"))
    }

    fn enter(&mut self, bracket: u8, expected: &str) -> Result<(), StrictJsonError> {
        self.skip_whitespace();
        if self.input.get(self.pos) != Some(&bracket) {
            return Err(self.unexpected(expected));
        }
        self.open::<false>(bracket == b'{', &mut Vec::new())
    }

    /// Reads one value, skipping it or writing it canonically to `out`. With a `hasher`,
    /// `out` is emptied into it whenever no object is open and it has grown large.
    fn value<const CANONICAL: bool>(
        &mut self,
        out: &mut Vec<u8>,
        mut hasher: Option<&mut Sha256>,
    ) -> Result<(), StrictJsonError> {
        let base = self.stack.len();
        'value: loop {
            self.skip_whitespace();
            match self.input.get(self.pos) {
                Some(b'[') => {
                    self.open::<CANONICAL>(false, out)?;
                    self.skip_whitespace();
                    if self.input.get(self.pos) != Some(&b']') {
                        continue 'value;
                    }
                    self.pos += 1;
                    self.close::<CANONICAL>(out);
                }
                Some(b'{') => {
                    self.open::<CANONICAL>(true, out)?;
                    self.skip_whitespace();
                    if self.input.get(self.pos) != Some(&b'}') {
                        self.member_name::<CANONICAL>(out)?;
                        continue 'value;
                    }
                    self.pos += 1;
                    self.close::<CANONICAL>(out);
                }
                _ => self.scalar::<CANONICAL>(out)?,
            }
            // A value is complete: move past its parent's delimiter, closing what it completes.
            loop {
                if let Some(hasher) = hasher.as_deref_mut() {
                    if self.canonical_objects == 0 && out.len() >= FLUSH_AT {
                        hasher.update(&*out);
                        out.clear();
                    }
                }
                if self.stack.len() == base {
                    return Ok(());
                }
                self.skip_whitespace();
                let at = self.input.get(self.pos).copied();
                let Some(frame) = self.stack.last_mut() else {
                    return Ok(());
                };
                frame.count += 1;
                if frame.object {
                    if CANONICAL {
                        if let Some(span) = self.spans.last_mut() {
                            span.end = out.len();
                        }
                    }
                    match at {
                        Some(b',') => {
                            self.pos += 1;
                            if CANONICAL {
                                out.push(b',');
                            }
                            self.skip_whitespace();
                            self.member_name::<CANONICAL>(out)?;
                            continue 'value;
                        }
                        Some(b'}') => {
                            self.pos += 1;
                            self.close::<CANONICAL>(out);
                        }
                        _ => return Err(self.unexpected("',' or '}' after an object member")),
                    }
                } else {
                    match at {
                        Some(b',') => {
                            self.pos += 1;
                            if CANONICAL {
                                out.push(b',');
                            }
                            continue 'value;
                        }
                        Some(b']') => {
                            self.pos += 1;
                            self.close::<CANONICAL>(out);
                        }
                        _ => return Err(self.unexpected("',' or ']' after an array element")),
                    }
                }
            }
        }
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.input.get(self.pos) {
            self.pos += 1;
        }
    }

    /// Pushes a container whose opening bracket is at `self.pos`, within the depth limit.
    fn open<const CANONICAL: bool>(
        &mut self,
        object: bool,
        out: &mut Vec<u8>,
    ) -> Result<(), StrictJsonError> {
        if self.stack.len() >= self.max_depth {
            return Err(self.error(
                StrictJsonErrorKind::TooDeep {
                    limit: self.max_depth,
                },
                self.pos,
            ));
        }
        self.pos += 1;
        let canonical = (CANONICAL && object).then_some(CanonicalObject {
            open_at: out.len(),
            spans_start: self.spans.len(),
            in_order: true,
        });
        if CANONICAL {
            out.push(if object { b'{' } else { b'[' });
            if object {
                self.canonical_objects += 1;
            }
        }
        self.stack.push(Frame {
            object,
            count: 0,
            started: false,
            names_start: self.names.len(),
            current: None,
            seen: None,
            canonical,
        });
        Ok(())
    }

    /// Pops the innermost container, whose closing bracket has been read; a canonical object
    /// gets its members sorted first if they arrived out of order.
    fn close<const CANONICAL: bool>(&mut self, out: &mut Vec<u8>) {
        let Some(frame) = self.stack.pop() else {
            return;
        };
        if CANONICAL && !frame.object {
            out.push(b']');
        }
        if let Some(object) = frame.canonical {
            self.canonical_objects -= 1;
            if !object.in_order {
                self.sort_members(&object, out);
            }
            self.spans.truncate(object.spans_start);
            out.push(b'}');
        }
        if frame.object {
            if let Some(&(start, _)) = self.names.get(frame.names_start) {
                self.name_text.truncate(start);
            }
            self.names.truncate(frame.names_start);
        }
    }

    /// Rewrites the members of `object` (everything after its `{` in `out`) in RFC 8785 order.
    fn sort_members(&mut self, object: &CanonicalObject, out: &mut Vec<u8>) {
        let text = &self.name_text;
        let spans = &mut self.spans[object.spans_start..];
        spans.sort_unstable_by(|a, b| {
            utf16_cmp_bytes(&text[a.name.0..a.name.1], &text[b.name.0..b.name.1])
        });
        self.scratch.clear();
        for (index, span) in spans.iter().enumerate() {
            if index > 0 {
                self.scratch.push(b',');
            }
            self.scratch.extend_from_slice(&out[span.start..span.end]);
        }
        out.truncate(object.open_at + 1);
        out.extend_from_slice(&self.scratch);
    }

    /// Reads `"name" :` of the innermost object, refusing a name it already holds; returns the
    /// name's index in `self.names`.
    fn member_name<const CANONICAL: bool>(
        &mut self,
        out: &mut Vec<u8>,
    ) -> Result<usize, StrictJsonError> {
        if self.input.get(self.pos) != Some(&b'"') {
            return Err(self.unexpected("a member name (a string in double quotes)"));
        }
        let name_offset = self.pos;
        let start = self.name_text.len();
        let input = self.input;
        lexer::string_bytes(input, &mut self.pos, &mut Utf8(&mut self.name_text))
            .map_err(|error| self.lex_error(error, true))?;
        let end = self.name_text.len();
        let index = self.names.len();
        if let Some(duplicate) = self.check_duplicate(start, end) {
            let kind = StrictJsonErrorKind::DuplicateMember {
                pointer: self.pointer(true),
                name: duplicate,
            };
            return Err(self.error(kind, name_offset));
        }
        self.names.push((start, end));
        let name = &self.name_text[start..end];
        if let Some(frame) = self.stack.last_mut() {
            if CANONICAL {
                if let (Some(object), Some(previous)) = (&mut frame.canonical, frame.current) {
                    let (p_start, p_end) = self.names[previous];
                    if utf16_cmp_bytes(&self.name_text[p_start..p_end], name).is_ge() {
                        object.in_order = false;
                    }
                }
                self.spans.push(Span {
                    name: (start, end),
                    start: out.len(),
                    end: out.len(),
                });
                // Every escape is longer than what it decodes to, so a name as long as its
                // decoded text has none, and its raw bytes are already canonical.
                let raw = &input[name_offset..self.pos];
                if raw.len() == name.len() + 2 {
                    out.extend_from_slice(raw);
                } else {
                    canonical::write_string_bytes(name, out);
                }
                out.push(b':');
            }
            frame.current = Some(index);
        }
        self.skip_whitespace();
        if self.input.get(self.pos) != Some(&b':') {
            return Err(self.unexpected("':' after the member name"));
        }
        self.pos += 1;
        Ok(index)
    }

    /// Whether the innermost object already holds the name at `name_text[start..end]`: the
    /// name, decoded, if it does.
    fn check_duplicate(&mut self, start: usize, end: usize) -> Option<String> {
        let name = &self.name_text[start..end];
        let frame = self.stack.last_mut()?;
        let earlier = &self.names[frame.names_start..];
        let duplicate = || Some(String::from_utf8_lossy(name).into_owned());
        if let Some(seen) = &mut frame.seen {
            return if seen.insert(name.into()) {
                None
            } else {
                duplicate()
            };
        }
        let text = &self.name_text;
        if earlier.iter().any(|&(s, e)| &text[s..e] == name) {
            return duplicate();
        }
        if earlier.len() + 1 >= LINEAR_DUPLICATE_SCAN {
            let mut seen: HashSet<Box<[u8]>> = earlier
                .iter()
                .map(|&(s, e)| Box::from(&text[s..e]))
                .collect();
            seen.insert(name.into());
            frame.seen = Some(seen);
        }
        None
    }

    /// Reads a string, number or literal at `self.pos`.
    fn scalar<const CANONICAL: bool>(&mut self, out: &mut Vec<u8>) -> Result<(), StrictJsonError> {
        let input = self.input;
        let pos = self.pos;
        let rest = &input[pos.min(input.len())..];
        let lexed = match rest.first() {
            Some(b'"') => {
                if CANONICAL {
                    out.push(b'"');
                    let result = lexer::string_bytes(input, &mut self.pos, &mut Escaper(out));
                    out.push(b'"');
                    result
                } else {
                    lexer::string_bytes(input, &mut self.pos, &mut Discard)
                }
            }
            Some(b'-' | b'0'..=b'9') => match lexer::lex_number(input, &mut self.pos) {
                Ok(number) => {
                    if CANONICAL {
                        write_number(number, &input[pos..self.pos], out);
                    }
                    Ok(())
                }
                Err(error) => Err(error),
            },
            Some(b't') if rest.starts_with(b"true") => {
                self.literal::<CANONICAL>(b"true", out);
                Ok(())
            }
            Some(b'f') if rest.starts_with(b"false") => {
                self.literal::<CANONICAL>(b"false", out);
                Ok(())
            }
            Some(b'n') if rest.starts_with(b"null") => {
                self.literal::<CANONICAL>(b"null", out);
                Ok(())
            }
            Some(b'N') if rest.starts_with(b"NaN") => Err(lexer::not_a_json_number(pos)),
            Some(b'I') if rest.starts_with(b"Infinity") => Err(lexer::not_a_json_number(pos)),
            _ => Err(lexer::unexpected(input, pos, "a JSON value")),
        };
        lexed.map_err(|error| self.lex_error(error, false))
    }

    fn literal<const CANONICAL: bool>(&mut self, literal: &[u8], out: &mut Vec<u8>) {
        self.pos += literal.len();
        if CANONICAL {
            out.extend_from_slice(literal);
        }
    }

    fn unexpected(&self, expected: &str) -> StrictJsonError {
        self.lex_error(lexer::unexpected(self.input, self.pos, expected), false)
    }

    /// Adds the JSON Pointer to a scalar's error; `in_name` when the scalar is a member name.
    fn lex_error(&self, error: LexError, in_name: bool) -> StrictJsonError {
        let (kind, offset) = match error {
            LexError::Syntax { message, offset } => {
                (StrictJsonErrorKind::Syntax { message }, offset)
            }
            LexError::InvalidUtf8 { offset } => (StrictJsonErrorKind::InvalidUtf8, offset),
            LexError::LoneSurrogate { offset } => (
                StrictJsonErrorKind::LoneSurrogate {
                    pointer: self.pointer(in_name),
                },
                offset,
            ),
            LexError::IntegerOutOfRange { literal, offset } => (
                StrictJsonErrorKind::IntegerOutOfRange {
                    pointer: self.pointer(false),
                    literal,
                },
                offset,
            ),
            LexError::NumberOverflow { literal, offset } => (
                StrictJsonErrorKind::NumberOverflow {
                    pointer: self.pointer(false),
                    literal,
                },
                offset,
            ),
        };
        self.error(kind, offset)
    }

    fn error(&self, kind: StrictJsonErrorKind, offset: usize) -> StrictJsonError {
        StrictJsonError::at(kind, self.input, offset)
    }

    /// The JSON Pointer of the value being read, or with `of_container` of the innermost open
    /// container (for an error in a member name, which has no pointer of its own).
    fn pointer(&self, of_container: bool) -> String {
        let frames = if of_container {
            &self.stack[..self.stack.len().saturating_sub(1)]
        } else {
            &self.stack[..]
        };
        let mut out = String::new();
        for frame in frames {
            if frame.object {
                let name = frame
                    .current
                    .and_then(|index| self.names.get(index))
                    .and_then(|&(start, end)| self.name_text.get(start..end))
                    .unwrap_or_default();
                pointer::push_member(&mut out, &String::from_utf8_lossy(name));
            } else {
                pointer::push_index(&mut out, frame.count);
            }
        }
        out
    }
}

/// Writes a number that passed the strict rules in ECMAScript form (RFC 8785 §3.2.2.3).
fn write_number(number: LexedNumber, literal: &[u8], out: &mut Vec<u8>) {
    match number {
        // Both zeros are written "0"; any other integer literal is already its decimal form
        // (the grammar allows no leading zero and no '+').
        LexedNumber::Integer { magnitude: 0, .. } => out.push(b'0'),
        LexedNumber::Integer { .. } => out.extend_from_slice(literal),
        LexedNumber::Float(value) => {
            if value == 0.0 {
                out.push(b'0');
            } else {
                let mut buffer = ryu_js::Buffer::new();
                out.extend_from_slice(buffer.format_finite(value).as_bytes());
            }
        }
    }
}

/// A string's decoded content written with the minimal escaping of RFC 8785 §3.2.2.2.
struct Escaper<'o>(&'o mut Vec<u8>);

impl ByteSink for Escaper<'_> {
    fn push_bytes(&mut self, run: &[u8]) {
        // A run holds no '"', '\\' or control character, so it is written as it is.
        self.0.extend_from_slice(run);
    }
}

impl CharSink for Escaper<'_> {
    fn push_char(&mut self, c: char) {
        canonical::write_char(c, self.0);
    }
}

/// The RFC 8785 canonical bytes of the JSON text `bytes`, read strictly and without a tree:
/// the bytes `canonicalize(&parse_strict(bytes)?)` gives.
///
/// # Errors
///
/// [`StrictJsonError`], as [`crate::parse_strict`] gives it for the same bytes.
pub fn canonicalize_strict(bytes: &[u8]) -> Result<Vec<u8>, StrictJsonError> {
    let mut reader = StreamReader::new(bytes);
    let mut out = Vec::with_capacity(bytes.len());
    reader.canonical_value(&mut out)?;
    reader.finish()?;
    Ok(out)
}

/// The SHA-256 of the RFC 8785 canonical bytes of the JSON text `bytes`, read strictly and
/// written straight into the hasher (buffered only inside objects, which may need sorting).
///
/// # Errors
///
/// [`StrictJsonError`], as [`crate::parse_strict`] gives it for the same bytes.
pub fn canonical_digest(bytes: &[u8]) -> Result<Digest, StrictJsonError> {
    let mut reader = StreamReader::new(bytes);
    let mut hasher = Sha256::new();
    let mut out = Vec::with_capacity(FLUSH_AT.min(bytes.len()) + 64);
    reader.value::<true>(&mut out, Some(&mut hasher))?;
    reader.finish()?;
    hasher.update(&out);
    Ok(Digest::from_bytes(hasher.finalize().into()))
}
