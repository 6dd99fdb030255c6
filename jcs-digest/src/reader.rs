//! The strict reader: JSON bytes to a `serde_json::Value`, refusing what two parties could read
//! differently (docs/design.md §2, "Strict JSON").
//!
//! The parser is iterative: open arrays and objects live on an explicit stack, so the depth
//! limit is the only bound on nesting and a deep document is an error, never a stack overflow.

use serde_json::{Map, Value};

use crate::error::{StrictJsonError, StrictJsonErrorKind};
use crate::lexer::{self, LexError};
use crate::pointer;

/// Reads JSON text strictly into a [`serde_json::Value`] with the default limits.
///
/// Shorthand for `StrictReader::new().parse(bytes)`; see [`StrictReader`] for what is refused.
///
/// # Errors
///
/// [`StrictJsonError`] naming what was refused and where.
pub fn parse_strict(bytes: &[u8]) -> Result<Value, StrictJsonError> {
    StrictReader::new().parse(bytes)
}

/// A strict JSON reader, configurable with a builder.
///
/// Refused, each with its own [`StrictJsonErrorKind`]: duplicate member names at any depth,
/// integer literals outside ±(2^53−1), numbers that overflow a double, invalid UTF-8, lone
/// surrogate escapes, nesting deeper than [`max_depth`](Self::max_depth), and everything
/// RFC 8259 does not allow (trailing data, `NaN`, leading zeros, raw control characters in
/// strings, a byte order mark, comments, trailing commas).
///
/// Numbers are read as serde_json reads them: a non-negative integer literal as a `u64`, a
/// negative one as an `i64`, `-0` and every literal with a fraction or exponent as the nearest
/// double (correctly rounded).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StrictReader {
    max_depth: usize,
}

impl StrictReader {
    /// The default nesting limit: 128 arrays and objects inside each other.
    pub const DEFAULT_MAX_DEPTH: usize = 128;

    /// A reader with the default limits.
    pub fn new() -> Self {
        Self {
            max_depth: Self::DEFAULT_MAX_DEPTH,
        }
    }

    /// Allows at most `limit` arrays and objects nested inside each other (`[[]]` is depth 2;
    /// with a limit of 0 only a scalar document is accepted).
    ///
    /// The reader itself never overflows the stack, whatever the limit; but serde_json's
    /// `Value` drops recursively, so a caller raising the limit far beyond the default takes
    /// on that risk for the values it keeps.
    pub fn max_depth(&mut self, limit: usize) -> &mut Self {
        self.max_depth = limit;
        self
    }

    /// Reads `bytes`, which must hold exactly one JSON value (whitespace around it allowed).
    ///
    /// # Errors
    ///
    /// [`StrictJsonError`] naming what was refused and where.
    pub fn parse(&self, bytes: &[u8]) -> Result<Value, StrictJsonError> {
        let mut pos = 0;
        let whole = Within {
            depth: 0,
            pointer: &String::new,
        };
        Parser::new(bytes, &mut pos, self.max_depth, whole).document(true)
    }
}

impl Default for StrictReader {
    fn default() -> Self {
        Self::new()
    }
}

/// An array or object whose closing bracket has not been read yet.
enum Frame {
    Array(Vec<Value>),
    /// `name` is the member whose value is being read.
    Object {
        members: Map<String, Value>,
        name: String,
    },
}

/// Where the value being read is: at the root of the document, or inside the containers a
/// streaming reader has open (`depth` of them, the value at `pointer`).
pub(crate) struct Within<'p> {
    pub(crate) depth: usize,
    pub(crate) pointer: &'p dyn Fn() -> String,
}

/// Reads one value at `*pos` into a tree, as [`StrictReader::parse`] reads it at the same
/// place in a document: the depth limit counts `within.depth` containers already open, and an
/// error's JSON Pointer starts with `within.pointer()`. Whitespace after the value is skipped;
/// what follows is the caller's to read.
pub(crate) fn value_at(
    input: &[u8],
    pos: &mut usize,
    max_depth: usize,
    within: Within<'_>,
) -> Result<Value, StrictJsonError> {
    Parser::new(input, pos, max_depth, within).document(false)
}

struct Parser<'a, 'p> {
    input: &'a [u8],
    pos: &'p mut usize,
    stack: Vec<Frame>,
    max_depth: usize,
    within: Within<'p>,
}

impl<'a, 'p> Parser<'a, 'p> {
    fn new(input: &'a [u8], pos: &'p mut usize, max_depth: usize, within: Within<'p>) -> Self {
        Parser {
            input,
            pos,
            stack: Vec::new(),
            max_depth,
            within,
        }
    }

    /// Reads a value; `whole`: it is the document, so only whitespace may follow it.
    fn document(mut self, whole: bool) -> Result<Value, StrictJsonError> {
        'value: loop {
            self.skip_whitespace();
            let mut complete = match self.input.get(*self.pos) {
                Some(b'[') => {
                    self.open(Frame::Array(Vec::new()))?;
                    self.skip_whitespace();
                    if self.input.get(*self.pos) != Some(&b']') {
                        continue 'value;
                    }
                    *self.pos += 1;
                    self.close()
                }
                Some(b'{') => {
                    self.open(Frame::Object {
                        members: Map::new(),
                        name: String::new(),
                    })?;
                    self.skip_whitespace();
                    if self.input.get(*self.pos) != Some(&b'}') {
                        self.member_name()?;
                        continue 'value;
                    }
                    *self.pos += 1;
                    self.close()
                }
                _ => self.scalar()?,
            };
            // Hand the complete value to its parent, closing every container it completes.
            loop {
                self.skip_whitespace();
                match self.stack.last_mut() {
                    None => {
                        if whole && *self.pos < self.input.len() {
                            let error = lexer::unexpected(
                                self.input,
                                *self.pos,
                                "the end of the input after the JSON value",
                            );
                            return Err(self.lex_error(error, false));
                        }
                        return Ok(complete);
                    }
                    Some(Frame::Array(items)) => {
                        items.push(complete);
                        match self.input.get(*self.pos) {
                            Some(b',') => {
                                *self.pos += 1;
                                continue 'value;
                            }
                            Some(b']') => {
                                *self.pos += 1;
                                complete = self.close();
                            }
                            _ => return Err(self.unexpected("',' or ']' after an array element")),
                        }
                    }
                    Some(Frame::Object { members, name }) => {
                        members.insert(std::mem::take(name), complete);
                        match self.input.get(*self.pos) {
                            Some(b',') => {
                                *self.pos += 1;
                                self.skip_whitespace();
                                self.member_name()?;
                                continue 'value;
                            }
                            Some(b'}') => {
                                *self.pos += 1;
                                complete = self.close();
                            }
                            _ => return Err(self.unexpected("',' or '}' after an object member")),
                        }
                    }
                }
            }
        }
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.input.get(*self.pos) {
            *self.pos += 1;
        }
    }

    /// Pushes a container whose opening bracket is at `*self.pos`, within the depth limit.
    fn open(&mut self, frame: Frame) -> Result<(), StrictJsonError> {
        if self.within.depth + self.stack.len() >= self.max_depth {
            return Err(self.error(
                StrictJsonErrorKind::TooDeep {
                    limit: self.max_depth,
                },
                *self.pos,
            ));
        }
        *self.pos += 1;
        self.stack.push(frame);
        Ok(())
    }

    /// Pops the innermost container, whose closing bracket has been read.
    fn close(&mut self) -> Value {
        match self.stack.pop() {
            Some(Frame::Array(items)) => Value::Array(items),
            Some(Frame::Object { members, .. }) => Value::Object(members),
            // Unreachable: only called right after a frame was pushed or matched.
            None => Value::Null,
        }
    }

    /// Reads `"name" :` of the innermost object, refusing a name it already holds.
    fn member_name(&mut self) -> Result<(), StrictJsonError> {
        if self.input.get(*self.pos) != Some(&b'"') {
            return Err(self.unexpected("a member name (a string in double quotes)"));
        }
        let name_offset = *self.pos;
        let name = lexer::string(self.input, self.pos).map_err(|e| self.lex_error(e, true))?;
        if let Some(Frame::Object {
            members,
            name: slot,
        }) = self.stack.last_mut()
        {
            if members.contains_key(&name) {
                let kind = StrictJsonErrorKind::DuplicateMember {
                    pointer: self.pointer(true),
                    name,
                };
                return Err(self.error(kind, name_offset));
            }
            *slot = name;
        }
        self.skip_whitespace();
        if self.input.get(*self.pos) != Some(&b':') {
            return Err(self.unexpected("':' after the member name"));
        }
        *self.pos += 1;
        Ok(())
    }

    /// Reads a string, number or literal at `*self.pos`.
    fn scalar(&mut self) -> Result<Value, StrictJsonError> {
        let input = self.input;
        let lexed = match input.get(*self.pos) {
            Some(b'"') => lexer::string(input, self.pos).map(Value::String),
            Some(b'-' | b'0'..=b'9') => lexer::number(input, self.pos).map(Value::Number),
            Some(b't') if input[*self.pos..].starts_with(b"true") => {
                *self.pos += 4;
                Ok(Value::Bool(true))
            }
            Some(b'f') if input[*self.pos..].starts_with(b"false") => {
                *self.pos += 5;
                Ok(Value::Bool(false))
            }
            Some(b'n') if input[*self.pos..].starts_with(b"null") => {
                *self.pos += 4;
                Ok(Value::Null)
            }
            Some(b'N') if input[*self.pos..].starts_with(b"NaN") => {
                Err(lexer::not_a_json_number(*self.pos))
            }
            Some(b'I') if input[*self.pos..].starts_with(b"Infinity") => {
                Err(lexer::not_a_json_number(*self.pos))
            }
            _ => Err(lexer::unexpected(input, *self.pos, "a JSON value")),
        };
        lexed.map_err(|e| self.lex_error(e, false))
    }

    fn unexpected(&self, expected: &str) -> StrictJsonError {
        self.lex_error(lexer::unexpected(self.input, *self.pos, expected), false)
    }

    /// Adds the JSON Pointer to a scalar's error; `in_name` when the scalar is a member name.
    fn lex_error(&self, error: LexError, in_name: bool) -> StrictJsonError {
        let (kind, offset) = error.located(in_name, |of_container| self.pointer(of_container));
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
        let mut out = (self.within.pointer)();
        for frame in frames {
            match frame {
                Frame::Array(items) => pointer::push_index(&mut out, items.len()),
                Frame::Object { name, .. } => pointer::push_member(&mut out, name),
            }
        }
        out
    }
}
