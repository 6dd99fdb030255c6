//! The engine of the streaming reader: one value at a time, iteratively (skipped or written
//! canonically), member names and their duplicates, scalars, sorting at the closing brace, and
//! errors with the tree reader's pointers.

use std::cmp::Ordering;

use sha2::{Digest as _, Sha256};

use super::{
    CanonicalObject, FLUSH_AT, Frame, LINEAR_DUPLICATE_SCAN, Name, NameTexts, Span, StreamReader,
};
use crate::error::{StrictJsonError, StrictJsonErrorKind};
use crate::lexer::{self, ByteSink, CharSink, Discard, LexError, LexedNumber, Utf8};
use crate::pointer;
use crate::{canonical, scan};

impl StreamReader<'_> {
    /// Reads one value, skipping it or writing it canonically to `out`. With a `hasher`,
    /// `out` is emptied into it whenever no object is open and it has grown large.
    pub(super) fn value<const CANONICAL: bool>(
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
                    if let Some(object) = &frame.canonical {
                        if let Some(span) = self.spans.get_mut(object.member) {
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

    pub(super) fn skip_whitespace(&mut self) {
        /// Eight spaces: a pretty-printed document's indentation is skipped that many at a
        /// time (a tenth of a catalog load went to this loop, one byte at a time).
        const SPACES: [u8; 8] = *b"        ";
        loop {
            match self.input.get(self.pos) {
                // Most calls stand before a token (compact documents have no whitespace
                // between tokens): one comparison settles them.
                Some(&byte) if byte > b' ' => return,
                Some(b' ') => {
                    let ahead = self.input.get(self.pos..self.pos + SPACES.len());
                    if ahead.and_then(|ahead| <[u8; 8]>::try_from(ahead).ok()) == Some(SPACES) {
                        self.pos += SPACES.len();
                    } else {
                        self.pos += 1;
                    }
                }
                Some(b'\t' | b'\n' | b'\r') => self.pos += 1,
                _ => return,
            }
        }
    }

    /// Pushes a container whose opening bracket is at `self.pos`, within the depth limit.
    pub(super) fn open<const CANONICAL: bool>(
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
            member: self.spans.len(),
            in_order: true,
            sorted: true,
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
            text_start: self.name_text.len(),
            current: None,
            seen: None,
            canonical,
        });
        Ok(())
    }

    /// Pops the innermost container, whose closing bracket has been read; a canonical object
    /// gets its members sorted first if they arrived out of order.
    pub(super) fn close<const CANONICAL: bool>(&mut self, out: &mut Vec<u8>) {
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
            self.name_text.truncate(frame.text_start);
            self.names.truncate(frame.names_start);
        }
    }

    /// Rewrites the members of `object` (everything after its `{` in `out`) in RFC 8785 order.
    fn sort_members(&mut self, object: &CanonicalObject, out: &mut Vec<u8>) {
        let texts = NameTexts::new(self.input, &self.name_text);
        let names = &self.names;
        let spans = &mut self.spans[object.spans_start..];
        if !object.sorted {
            spans.sort_unstable_by(|a, b| names[a.name].cmp(&names[b.name], texts));
        }
        self.scratch.clear();
        for (index, span) in spans.iter().enumerate() {
            if index > 0 {
                self.scratch.push(b',');
            }
            append(&mut self.scratch, out, span.start, span.end);
        }
        out.truncate(object.open_at + 1);
        out.extend_from_slice(&self.scratch);
    }

    /// Reads `"name" :` of the innermost object, refusing a name it already holds; returns the
    /// name's index in `self.names`.
    pub(super) fn member_name<const CANONICAL: bool>(
        &mut self,
        out: &mut Vec<u8>,
    ) -> Result<usize, StrictJsonError> {
        if self.input.get(self.pos) != Some(&b'"') {
            return Err(self.unexpected("a member name (a string in double quotes)"));
        }
        let name_offset = self.pos;
        let input = self.input;
        // The name is written straight into `names`. Built on the machine stack and copied in,
        // it was read back with wide loads right after its narrow stores, which the processor
        // cannot forward: a stall on every name (BENCHMARKS.md, "Link-time optimization, and
        // names read back before their stores landed").
        let index = self.names.len();
        // A name of printable ASCII without escapes (the rule) is its own text in the input.
        let plain_end = scan::next_string_stop(input, name_offset + 1);
        if input.get(plain_end) == Some(&b'"') {
            self.pos = plain_end + 1;
            self.names
                .push(Name::in_input(input, name_offset + 1, plain_end));
        } else {
            let start = self.name_text.len();
            let mut decoded = Utf8(&mut self.name_text);
            lexer::string_bytes(input, &mut self.pos, plain_end, &mut decoded)
                .map_err(|error| self.lex_error(error, true))?;
            self.names
                .push(Name::decoded(&self.name_text, start, self.name_text.len()));
        }
        let duplicate = if CANONICAL {
            self.place_member(index, out.len())
        } else {
            self.is_duplicate(index)
        };
        if duplicate {
            let texts = NameTexts::new(input, &self.name_text);
            let name = String::from_utf8_lossy(self.names[index].bytes(texts)).into_owned();
            self.names.truncate(index);
            let kind = StrictJsonErrorKind::DuplicateMember {
                pointer: self.pointer(true),
                name,
            };
            return Err(self.error(kind, name_offset));
        }
        let texts = NameTexts::new(input, &self.name_text);
        if let Some(frame) = self.stack.last_mut() {
            if CANONICAL {
                let name = &self.names[index];
                // Every escape is longer than what it decodes to, so a name as long as its
                // decoded text has none, and its raw bytes are already canonical.
                let decoded = name.bytes(texts);
                if self.pos - name_offset == decoded.len() + 2 {
                    append(out, input, name_offset, self.pos);
                } else {
                    canonical::write_string_bytes(decoded, out);
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

    /// Records the member of the innermost (canonical) object whose name is at `index` (its
    /// newest) and whose bytes start at `start` in the output; returns whether the object
    /// already held the name.
    ///
    /// Below [`LINEAR_DUPLICATE_SCAN`] members, the spans are kept in RFC 8785 order as they
    /// come: the new one is compared from the greatest down until its place is found, and an
    /// equal name on the way is a duplicate. One walk finds both, and the object needs no sort
    /// when it closes. Beyond that, a member is appended, its name checked against the set of
    /// names (`is_duplicate`), and the object is sorted at its closing brace if it must be.
    fn place_member(&mut self, index: usize, start: usize) -> bool {
        let Some(frame) = self.stack.last() else {
            return false;
        };
        let Some(object) = &frame.canonical else {
            return self.is_duplicate(index);
        };
        let texts = NameTexts::new(self.input, &self.name_text);
        let names = &self.names;
        let Some(name) = names.get(index) else {
            return false;
        };
        let spans = self.spans.get(object.spans_start..).unwrap_or_default();
        let (member, in_order, sorted) = if object.sorted && spans.len() + 1 < LINEAR_DUPLICATE_SCAN
        {
            let mut place = spans.len();
            while let Some(before) = place.checked_sub(1) {
                match names[spans[before].name].cmp(name, texts) {
                    Ordering::Greater => place = before,
                    Ordering::Equal => return true,
                    Ordering::Less => break,
                }
            }
            (object.spans_start + place, place == spans.len(), true)
        } else {
            // The last span holds the greatest name when the spans are sorted.
            let greater = spans
                .last()
                .is_none_or(|last| names[last.name].cmp(name, texts).is_lt());
            if self.is_duplicate(index) {
                return true;
            }
            (self.spans.len(), greater, greater)
        };
        self.spans.insert(
            member,
            Span {
                name: index,
                start,
                end: start,
            },
        );
        if let Some(object) = self.stack.last_mut().and_then(|f| f.canonical.as_mut()) {
            object.member = member;
            object.in_order &= in_order;
            object.sorted &= sorted;
        }
        false
    }

    /// Whether the innermost object held the name at `index` (its newest) before it.
    fn is_duplicate(&mut self, index: usize) -> bool {
        let Some(frame) = self.stack.last() else {
            return false;
        };
        let Some((name, earlier)) = self
            .names
            .get(frame.names_start..=index)
            .and_then(<[Name]>::split_last)
        else {
            return false;
        };
        if earlier.is_empty() {
            // The object's first name.
            return false;
        }
        if frame.seen.is_none() && earlier.len() + 1 < LINEAR_DUPLICATE_SCAN {
            let texts = NameTexts::new(self.input, &self.name_text);
            return earlier.iter().any(|other| other.same(name, texts));
        }
        self.is_duplicate_in_set(index)
    }

    /// [`is_duplicate`](Self::is_duplicate) for an object with [`LINEAR_DUPLICATE_SCAN`]
    /// names or more: checked against (and added to) the set of its names, made on the way.
    #[cold]
    fn is_duplicate_in_set(&mut self, index: usize) -> bool {
        let texts = NameTexts::new(self.input, &self.name_text);
        let Some(frame) = self.stack.last_mut() else {
            return false;
        };
        let Some((name, earlier)) = self
            .names
            .get(frame.names_start..=index)
            .and_then(<[Name]>::split_last)
        else {
            return false;
        };
        let seen = match &mut frame.seen {
            Some(seen) => seen,
            None => {
                if earlier.iter().any(|other| other.same(name, texts)) {
                    return true;
                }
                frame.seen.insert(
                    earlier
                        .iter()
                        .map(|other| other.bytes(texts).into())
                        .collect(),
                )
            }
        };
        !seen.insert(name.bytes(texts).into())
    }

    /// Reads a string, number or literal at `self.pos`.
    fn scalar<const CANONICAL: bool>(&mut self, out: &mut Vec<u8>) -> Result<(), StrictJsonError> {
        let input = self.input;
        let pos = self.pos;
        let rest = &input[pos.min(input.len())..];
        let lexed = match rest.first() {
            Some(b'"') => {
                let plain_end = scan::next_string_stop(input, pos + 1);
                if input.get(plain_end) == Some(&b'"') {
                    // Printable ASCII without escapes is written as it is (RFC 8785 §3.2.2.2).
                    if CANONICAL {
                        append(out, input, pos, plain_end + 1);
                    }
                    self.pos = plain_end + 1;
                    Ok(())
                } else if CANONICAL {
                    out.push(b'"');
                    let result =
                        lexer::string_bytes(input, &mut self.pos, plain_end, &mut Escaper(out));
                    out.push(b'"');
                    result
                } else {
                    lexer::string_bytes(input, &mut self.pos, plain_end, &mut Discard)
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

    pub(super) fn unexpected(&self, expected: &str) -> StrictJsonError {
        self.lex_error(lexer::unexpected(self.input, self.pos, expected), false)
    }

    /// Adds the JSON Pointer to a scalar's error; `in_name` when the scalar is a member name.
    pub(super) fn lex_error(&self, error: LexError, in_name: bool) -> StrictJsonError {
        let (kind, offset) = error.located(in_name, |of_container| self.pointer(of_container));
        self.error(kind, offset)
    }

    pub(super) fn error(&self, kind: StrictJsonErrorKind, offset: usize) -> StrictJsonError {
        StrictJsonError::at(kind, self.input, offset)
    }

    /// The JSON Pointer of the value being read, or with `of_container` of the innermost open
    /// container (for an error in a member name, which has no pointer of its own).
    pub(super) fn pointer(&self, of_container: bool) -> String {
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
                    .map(|name| name.bytes(NameTexts::new(self.input, &self.name_text)))
                    .unwrap_or_default();
                pointer::push_member(&mut out, &String::from_utf8_lossy(name));
            } else {
                pointer::push_index(&mut out, frame.count);
            }
        }
        out
    }
}

/// The length up to which [`append`] copies a fixed number of bytes.
const SHORT: usize = 32;

/// Appends `source[start..end]` to `out`. A piece of at most [`SHORT`] bytes (most member names
/// and many strings) is copied as that many bytes, known when compiling, and the excess is cut
/// off again: a few moves in place of a call to `memcpy`, whose cost is in the call for pieces
/// this short.
#[inline]
fn append(out: &mut Vec<u8>, source: &[u8], start: usize, end: usize) {
    let len = end.saturating_sub(start);
    if len <= SHORT {
        if let Some(ahead) = source.get(start..).and_then(<[u8]>::first_chunk::<SHORT>) {
            out.extend_from_slice(ahead);
            out.truncate(out.len() - (SHORT - len));
            return;
        }
    }
    out.extend_from_slice(&source[start..end]);
}

/// Writes a number that passed the strict rules in ECMAScript form (RFC 8785 §3.2.2.3).
fn write_number(number: LexedNumber, literal: &[u8], out: &mut Vec<u8>) {
    match number {
        // Both zeros are written "0"; any other integer literal is already its decimal form
        // (the grammar allows no leading zero and no '+'), and a canonical fraction its own
        // shortest form (`lexer::is_canonical_fraction`).
        LexedNumber::Integer { magnitude: 0, .. } => out.push(b'0'),
        LexedNumber::Integer { .. } | LexedNumber::CanonicalFraction => {
            out.extend_from_slice(literal);
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every piece of a 70-byte source, from every start to every end (pieces longer and
    /// shorter than `SHORT`, pieces near the end with fewer than `SHORT` bytes left after their
    /// start, and empty ones), appended to an output that already holds bytes: the same bytes as
    /// `extend_from_slice`.
    #[test]
    fn append_writes_exactly_the_piece() {
        let source: Vec<u8> = (0..70u8).map(|byte| byte.wrapping_mul(37)).collect();
        for start in 0..=source.len() {
            for end in start..=source.len() {
                let mut out = b"held".to_vec();
                append(&mut out, &source, start, end);
                let mut expected = b"held".to_vec();
                expected.extend_from_slice(&source[start..end]);
                assert_eq!(out, expected, "{start}..{end}");
            }
        }
    }
}
