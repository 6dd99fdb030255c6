//! The error of the strict reader: what went wrong, and where.

use std::fmt;

/// What the strict reader refused (docs/design.md §2, "Strict JSON").
///
/// Pointers are [RFC 6901](https://www.rfc-editor.org/rfc/rfc6901) JSON Pointers (`""` is the
/// whole document, `/tools/0/name` a member of an element); `~` and `/` in member names are
/// written `~0` and `~1`.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StrictJsonErrorKind {
    /// An object holds the same member name twice. Two readers could keep different values.
    #[error("duplicate member name {name:?} in the object at JSON Pointer {pointer:?}")]
    DuplicateMember {
        /// JSON Pointer of the object that holds the duplicate.
        pointer: String,
        /// The repeated member name, decoded.
        name: String,
    },
    /// An integer literal (no fraction, no exponent) outside ±(2^53−1): 2^53 and 2^53+1 would
    /// read as the same double.
    #[error("integer {literal} at JSON Pointer {pointer:?} is outside ±(2^53−1)")]
    IntegerOutOfRange {
        /// JSON Pointer of the number.
        pointer: String,
        /// The literal as written.
        literal: String,
    },
    /// A number whose magnitude is too large for an IEEE 754 double (`1e400`).
    #[error("number {literal} at JSON Pointer {pointer:?} overflows an IEEE 754 double")]
    NumberOverflow {
        /// JSON Pointer of the number.
        pointer: String,
        /// The literal as written.
        literal: String,
    },
    /// The bytes are not UTF-8; the error's offset is the first byte of the bad sequence.
    #[error("invalid UTF-8")]
    InvalidUtf8,
    /// A `\uD800`–`\uDBFF` escape not followed by a `\uDC00`–`\uDFFF` escape, or a low
    /// surrogate escape on its own. For a member name, the pointer is that of the object.
    #[error("lone UTF-16 surrogate escape in a string at JSON Pointer {pointer:?}")]
    LoneSurrogate {
        /// JSON Pointer of the string (of the object, for a member name).
        pointer: String,
    },
    /// Arrays and objects nested deeper than the reader's limit.
    #[error("arrays and objects nested deeper than the limit of {limit}")]
    TooDeep {
        /// The limit in force ([`crate::StrictReader::max_depth`]).
        limit: usize,
    },
    /// Anything else the JSON grammar (RFC 8259) rejects.
    #[error("{message}")]
    Syntax {
        /// What was expected and what was found.
        message: String,
    },
}

impl StrictJsonErrorKind {
    /// What the author of the document can do about it.
    fn advice(&self) -> &'static str {
        match self {
            Self::DuplicateMember { .. } => {
                "a member name may appear once per object; remove or rename one of them"
            }
            Self::IntegerOutOfRange { .. } => {
                "integers must lie within -9007199254740991..=9007199254740991 to have one \
                 canonical form; write larger values as strings"
            }
            Self::NumberOverflow { .. } => {
                "numbers must lie within ±1.7976931348623157e+308; write larger values as strings"
            }
            Self::InvalidUtf8 => "JSON text must be UTF-8; re-encode the input as UTF-8",
            Self::LoneSurrogate { .. } => {
                "escape a character outside the Basic Multilingual Plane as a high and low \
                 surrogate pair, or write it unescaped"
            }
            // Said to whoever wrote the document (often a command-line user), so it names no
            // library setter; a program that needs more sets `StrictReader::max_depth`.
            Self::TooDeep { .. } => {
                "flatten the document: deeper nesting is refused so that no reader of it can be \
                 driven to exhaust its stack"
            }
            Self::Syntax { .. } => "the input is not JSON (RFC 8259); fix the syntax",
        }
    }
}

/// The strict reader refused its input: [`kind`](Self::kind) says what, the offset, line and
/// column say where.
///
/// `Display` reads, for example: ``duplicate member name "a" in the object at JSON Pointer ""
/// at line 1 column 10 (byte 9): a member name may appear once per object; remove or rename
/// one of them``.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StrictJsonError {
    kind: StrictJsonErrorKind,
    offset: usize,
    line: usize,
    column: usize,
}

impl StrictJsonError {
    /// An error of `kind` at byte `offset` of `input` (line and column are derived from it).
    pub(crate) fn at(kind: StrictJsonErrorKind, input: &[u8], offset: usize) -> Self {
        let before = input.get(..offset).unwrap_or(input);
        let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |newline| newline + 1);
        Self {
            kind,
            offset,
            line,
            column: offset - line_start + 1,
        }
    }

    /// What was refused.
    pub fn kind(&self) -> &StrictJsonErrorKind {
        &self.kind
    }

    /// Byte offset (0-based) of the refused token: the first byte of the duplicate name, the
    /// number, the bad UTF-8 sequence, the `\u` escape, the bracket past the limit, or the
    /// unexpected byte.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Line (1-based) of [`offset`](Self::offset); lines end at `\n`.
    pub fn line(&self) -> usize {
        self.line
    }

    /// Column (1-based, counted in bytes) of [`offset`](Self::offset) within its line.
    pub fn column(&self) -> usize {
        self.column
    }
}

impl fmt::Display for StrictJsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at line {} column {} (byte {}): {}",
            self.kind,
            self.line,
            self.column,
            self.offset,
            self.kind.advice()
        )
    }
}

impl std::error::Error for StrictJsonError {}
