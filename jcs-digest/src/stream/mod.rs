//! The streaming strict reader: JSON bytes read once, checked by the rules of the tree reader
//! ([`crate::StrictReader`]) and written as RFC 8785 canonical bytes with no `Value` tree.
//!
//! The reader is a pull parser over one byte slice. Arrays and objects are entered and walked
//! ([`StreamReader::enter_array`], [`StreamReader::next_element`], …), and any value can be
//! skipped (checked, nothing kept) or written canonically. Open containers live on an explicit
//! stack, so nesting is bounded by the depth limit alone, never by the call stack.
//!
//! Canonical objects are the one thing that needs a buffer: members are written in input
//! order, each as one span of the output. The spans are kept in RFC 8785 order as the names
//! arrive (the same comparisons find a repeated name), or for an object of many members sorted
//! at the closing brace; only when the names arrived out of order are the spans copied once
//! more, in order, at the closing brace. Member names of the
//! open objects are kept (decoded) for duplicate detection, sorting and error pointers; they
//! are dropped when their object closes.
//!
//! Every error is the one the tree reader gives for the same bytes: the same kind, JSON
//! Pointer and offset (the tests and the differential fuzz target compare the two).

use std::collections::HashSet;

use sha2::{Digest as _, Sha256};

use crate::digest::Digest;
use crate::error::StrictJsonError;
use crate::lexer;
use crate::reader::StrictReader;
use name::{Name, NameTexts};
use spare::Buffers;

mod engine;
mod name;
mod spare;
mod split;
mod tool;

pub use split::guess_element_start;
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

    /// The type's name with its article, as messages say what was found: `"null"`,
    /// `"a boolean"`, `"a number"`, `"a string"`, `"an array"` or `"an object"`.
    pub const fn with_article(self) -> &'static str {
        match self {
            JsonType::Null => "null",
            JsonType::Boolean => "a boolean",
            JsonType::Number => "a number",
            JsonType::String => "a string",
            JsonType::Array => "an array",
            JsonType::Object => "an object",
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
    /// Objects: index into `StreamReader::names` of the first and the current member name,
    /// and the length of `StreamReader::name_text` when the object opened.
    names_start: usize,
    text_start: usize,
    current: Option<usize>,
    /// Objects past [`LINEAR_DUPLICATE_SCAN`] members: every name so far.
    seen: Option<HashSet<Box<[u8]>>>,
    /// Canonical objects: where `{` is in the output, their spans, and how they are ordered.
    canonical: Option<CanonicalObject>,
}

struct CanonicalObject {
    open_at: usize,
    spans_start: usize,
    /// The span of the member being read (not the last one when members are kept in order).
    member: usize,
    /// Whether every member came after those before it (nothing to rewrite at the close).
    in_order: bool,
    /// Whether the spans are in RFC 8785 order (nothing to sort at the close).
    sorted: bool,
}

/// One member of a canonical object in the output: `"name":value`, without the comma; `name`
/// is the index of its decoded name in `StreamReader::names`.
struct Span {
    name: usize,
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
    /// Decoded member names of the open objects (UTF-8), end to end, of those names written
    /// with an escape or outside ASCII; the others are read from the input.
    name_text: Vec<u8>,
    /// Where each member name read in an open object is.
    names: Vec<Name>,
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
        let Buffers {
            stack,
            name_text,
            names,
            spans,
            scratch,
            tool_buffer,
        } = Buffers::take();
        StreamReader {
            input,
            pos: 0,
            max_depth: limit,
            stack,
            name_text,
            names,
            spans,
            scratch,
            canonical_objects: 0,
            tool_buffer,
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

    /// Reads the next value into a [`serde_json::Value`], as [`crate::parse_strict`] reads it
    /// at the same place in the document: the same value, or the same error (its JSON Pointer
    /// from the document's root, the depth limit counting the containers open around it).
    ///
    /// # Errors
    ///
    /// [`StrictJsonError`], as the tree reader gives it for the same bytes.
    pub fn tree_value(&mut self) -> Result<serde_json::Value, StrictJsonError> {
        self.skip_whitespace();
        let mut pos = self.pos;
        let within = crate::reader::Within {
            depth: self.stack.len(),
            pointer: &|| self.pointer(false),
        };
        let value = crate::reader::value_at(self.input, &mut pos, self.max_depth, within);
        self.pos = pos;
        value
    }

    /// Reads the array that is the next value, every element with
    /// [`tree_value`](Self::tree_value): the elements [`crate::parse_strict`] gives.
    ///
    /// A large array (a megabyte or more of input left) on a machine with more than one CPU is
    /// read in two halves at once, the second half used only once the first proves it starts
    /// at an element (as [`tool_definitions`](Self::tool_definitions) does); the result is the
    /// same, errors included.
    ///
    /// # Errors
    ///
    /// [`StrictJsonError`], as the tree reader gives it for the same bytes; a syntax error when
    /// the next value is not an array (check with [`peek`](Self::peek) first).
    pub fn tree_elements(&mut self) -> Result<Vec<serde_json::Value>, StrictJsonError> {
        self.elements_with(|reader: &mut StreamReader<'a>| reader.tree_value())
    }

    /// Reads the array that is the next value, every element with `read`, in order: `read`
    /// is called once per element, with the reader before it, and must read exactly that one
    /// value (with the value methods, or by walking it to its end). What it returns must
    /// depend on the element's bytes alone, not on where the array is: the result is then the
    /// one reading the elements one after the other gives.
    ///
    /// A large array (a megabyte or more of input left) on a machine with more than one CPU is
    /// read in two halves at once, as [`tree_elements`](Self::tree_elements) reads it: the
    /// second half, read by a second reader of its own, is used only once this reader arrives
    /// exactly where it starts, and when it meets an error the first reads on alone, so every
    /// error is this reader's, in document order.
    ///
    /// ```
    /// use jcs_digest::{JsonType, StreamReader};
    ///
    /// let mut reader = StreamReader::new(br#"[{"a": 1}, "x", {"a": [2]}]"#);
    /// let types = reader.elements_with(|element| element.skip_value())?;
    /// reader.finish()?;
    /// assert_eq!(types, [JsonType::Object, JsonType::String, JsonType::Object]);
    /// # Ok::<(), jcs_digest::StrictJsonError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`StrictJsonError`], as the tree reader gives it for the same bytes, or the first error
    /// `read` returns; a syntax error when the next value is not an array (check with
    /// [`peek`](Self::peek) first).
    pub fn elements_with<T, F>(&mut self, read: F) -> Result<Vec<T>, StrictJsonError>
    where
        T: Send,
        F: Fn(&mut StreamReader<'a>) -> Result<T, StrictJsonError> + Sync,
    {
        self.skip_whitespace();
        // Elements written by one program probably all start with the first one's first
        // member, which a nested object rarely does.
        let first = split::first_member_name(self.input, self.pos + 1);
        self.elements(first, read)
    }

    /// Reads the `[` of the array that is the next value.
    ///
    /// # Errors
    ///
    /// [`TooDeep`](crate::StrictJsonErrorKind::TooDeep) past the depth limit; a syntax error
    /// when the next value is not an array (check with [`peek`](Self::peek) first).
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
    /// [`TooDeep`](crate::StrictJsonErrorKind::TooDeep) past the depth limit; a syntax error
    /// when the next value is not an object (check with [`peek`](Self::peek) first).
    pub fn enter_object(&mut self) -> Result<(), StrictJsonError> {
        self.enter(b'{', "'{' (an object)")
    }

    /// Moves to the next member of the innermost object: its decoded name (read its value
    /// next), or `None` when the object closed.
    ///
    /// # Errors
    ///
    /// [`DuplicateMember`](crate::StrictJsonErrorKind::DuplicateMember) for a name the object
    /// already holds; the errors of a string for the name; a syntax error when neither `,` nor
    /// `}` follows a member.
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
        let name = self.names[index].bytes(NameTexts::new(self.input, &self.name_text));
        // The name was checked to be UTF-8 as it was read, so this cannot fall back.
        Ok(Some(std::str::from_utf8(name).unwrap_or_default()))
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
}

/// The reader's buffers stay on its thread for the next reader (`stream/spare.rs`).
impl Drop for StreamReader<'_> {
    fn drop(&mut self) {
        Buffers {
            stack: std::mem::take(&mut self.stack),
            name_text: std::mem::take(&mut self.name_text),
            names: std::mem::take(&mut self.names),
            spans: std::mem::take(&mut self.spans),
            scratch: std::mem::take(&mut self.scratch),
            tool_buffer: std::mem::take(&mut self.tool_buffer),
        }
        .give_back();
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
