//! Encode an MCP tool name as a bounded, printable `tool:<body>` catalog key.
//!
//! This is section 4 of the tool-catalog observed digest ("seed 000"): the key under which a
//! tool's per-definition digest is folded into a catalog digest. The key is printable ASCII
//! (0x21–0x7E), never contains `=` or a line break (the fold's separators), and its body is at
//! most [`MAX_BODY_LEN`] characters.
//!
//! # Example
//!
//! ```
//! use catalog_key::ToolKey;
//!
//! let key = ToolKey::from_name("ask wiki=question");
//! assert_eq!(key.as_str(), "tool:ask%20wiki%3Dquestion");
//! assert_eq!(key.body(), "ask%20wiki%3Dquestion");
//! assert!(!key.is_cut());
//!
//! // The empty name is keyed as `unnamed`.
//! assert_eq!(ToolKey::from_name(""), ToolKey::unnamed());
//!
//! // A key read back from JSON is validated.
//! let parsed: ToolKey = "tool:ask%20wiki%3Dquestion".parse()?;
//! assert_eq!(parsed, key);
//! assert!("tool:a=b".parse::<ToolKey>().is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The rules (seed 000 §4)
//!
//! 1. An empty name is keyed as `unnamed`. (Whether a *missing*, `null` or non-string `name`
//!    member is `unnamed` or an error is decided by the caller that reads the definition; see
//!    `catalog-fold`.)
//! 2. Every byte of the name's UTF-8 outside 0x21–0x7E, plus `%` and `=`, is written as `%XX`
//!    with two uppercase hexadecimal digits; everything else is literal.
//! 3. An encoded body longer than 128 characters is cut to its first 96 characters (possibly
//!    inside a `%XX` triplet, kept as it falls), then `~` and the first 16 lowercase hexadecimal
//!    characters of SHA-256 over the raw UTF-8 name are appended.
//! 4. The key is `tool:` followed by the body.
//!
//! # Known properties
//!
//! - **Not injective at one point.** The empty name and a tool literally named `unnamed` both
//!   get the key `tool:unnamed`, exactly as the seed says. Every other uncut key decodes back to
//!   exactly one name ([`decode_body`]).
//! - **Cut keys are told apart by their shape.** A cut body is 96 characters, `~`, 16 lowercase
//!   hex (113 characters). A name whose *uncut* encoding has that same shape (for example 32
//!   spaces, `~` and 16 hex digits) is reported by [`ToolKey::is_cut`] as cut although it was
//!   not; it can only collide with a real cut key through a 64-bit SHA-256 prefix match.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod encode;
mod key;
mod parse;

pub use crate::{
    encode::decode_body,
    key::{CUT_PREFIX_LEN, MAX_BODY_LEN, ToolKey},
    parse::ToolKeyParseError,
};
