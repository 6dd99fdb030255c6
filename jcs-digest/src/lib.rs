//! RFC 8785 canonical JSON, a strict JSON reader, and the MCP tool definition digest.
//!
//! # Example
//!
//! ```
//! use jcs_digest::{canonicalize, parse_strict, tool_definition_digest, Digest, Profile};
//!
//! // Read strictly, write canonically (RFC 8785): sorted members, ECMAScript numbers.
//! let value = parse_strict(br#"{"b": 1.50, "a": [1e3, "\u00e9"]}"#)?;
//! assert_eq!(String::from_utf8(canonicalize(&value)?)?, r#"{"a":[1000,"é"],"b":1.5}"#);
//!
//! // Duplicate member names are refused, naming the object.
//! let error = parse_strict(br#"{"x": {"a": 1, "a": 2}}"#).unwrap_err();
//! assert_eq!(
//!     error.to_string(),
//!     "duplicate member name \"a\" in the object at JSON Pointer \"/x\" at line 1 column 16 \
//!      (byte 15): a member name may appear once per object; remove or rename one of them"
//! );
//!
//! // The per-tool digest: six members, wrapped under the profile label, hashed.
//! let tool = parse_strict(br#"{"name": "echo", "_meta": {"ignored": true}}"#)?;
//! let digest = tool_definition_digest(&tool, Profile::Trace)?;
//! let preimage = br#"{"profile":"trace.mcp-tool-definition.v1","tool":{"name":"echo"}}"#;
//! assert_eq!(digest, Digest::of(preimage));
//! assert_eq!(digest.to_string().parse::<Digest>()?, digest);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The streaming path
//!
//! [`canonicalize_strict`], [`canonical_digest`] and [`StreamReader`] read the bytes once and
//! write canonical bytes without building a `Value` tree, with the same acceptance and the same
//! [`StrictJsonError`] as the tree path above (which stays, as the reference):
//!
//! ```
//! use jcs_digest::{Digest, Profile, StreamReader, StreamedTool, canonical_digest};
//!
//! let text = br#"{"b": 1.50, "a": [1e3, "\u00e9"]}"#;
//! assert_eq!(canonical_digest(text)?, Digest::of(r#"{"a":[1000,"é"],"b":1.5}"#.as_bytes()));
//!
//! let mut reader = StreamReader::new(br#"[{"name": "echo", "_meta": {"ignored": true}}]"#);
//! let tools = reader.tool_definitions(Profile::Trace)?;
//! reader.finish()?;
//! let preimage = br#"{"profile":"trace.mcp-tool-definition.v1","tool":{"name":"echo"}}"#;
//! assert!(matches!(&tools[..], [StreamedTool::Definition { digest, .. }] if *digest == Digest::of(preimage)));
//! # Ok::<(), jcs_digest::StrictJsonError>(())
//! ```
//!
//! # What is refused
//!
//! [`parse_strict`] refuses, each with its own [`StrictJsonErrorKind`] and the line, column,
//! byte offset and JSON Pointer of the problem: duplicate member names at any depth; integer
//! literals outside ±(2^53−1); numbers that overflow a double; invalid UTF-8 and lone
//! surrogate escapes; nesting deeper than [`StrictReader::DEFAULT_MAX_DEPTH`]; and everything
//! else RFC 8259 does not allow. Two parties reading the same bytes therefore hash the same
//! value, or neither hashes anything (docs/design.md §2, "Strict JSON").
//!
//! [`canonicalize`] accepts any `serde_json::Value` except one holding an integer outside
//! ±(2^53−1) (which only a value built in code can hold); NaN and infinities cannot be held
//! by a `serde_json::Number` at all.
//!
//! # Member order
//!
//! [`canonicalize`] sorts members itself (by UTF-16 code units), so it does not depend on the
//! order a `serde_json::Map` keeps, which changes when any crate in the build turns on
//! serde_json's `preserve_order`. [`order`] gives everything else the same independence:
//! members in name order, and JSON text written in it.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod canonical;
mod digest;
mod error;
mod lexer;
pub mod order;
mod pointer;
mod reader;
mod scan;
mod stream;
mod tool;

pub use crate::{
    canonical::{CanonicalizeError, canonicalize, write_canonical, write_canonical_str},
    digest::{Digest, DigestParseError, DigestText},
    error::{StrictJsonError, StrictJsonErrorKind},
    reader::{StrictReader, parse_strict},
    scan::next_string_special,
    stream::{
        JsonType, StreamReader, StreamedTool, ToolName, canonical_digest, canonicalize_strict,
        guess_element_start,
    },
    tool::{
        Profile, TOOL_DEFINITION_MEMBERS, ToolDigestError, UnknownProfile, tool_definition_digest,
        tool_definition_preimage,
    },
};
