//! The `ToolKey` type: a validated `tool:<body>` key (seed 000 §4).

use std::fmt;

use crate::encode::{CUT_BODY_LEN, CUT_HASH_HEX_LEN, push_body};

/// The longest body that is kept literally (rule 3 cuts anything longer).
pub const MAX_BODY_LEN: usize = 128;

/// The number of encoded characters a cut body keeps before `~` and the hash suffix.
pub const CUT_PREFIX_LEN: usize = 96;

/// The prefix every key starts with (rule 4).
pub(crate) const KEY_PREFIX: &str = "tool:";

/// A catalog key: `tool:` followed by the encoded tool name (seed 000 §4).
///
/// The key text is printable ASCII, so ordering by the whole text (byte order) is the
/// code-point order the catalog fold sorts by (seed 000 §5 step 1).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ToolKey(String);

impl ToolKey {
    /// The key of the tool named `name`; the empty name is keyed as `tool:unnamed`.
    pub fn from_name(name: &str) -> ToolKey {
        // Most names need no encoding, so their length is the body's; a cut body is at most
        // CUT_BODY_LEN long.
        let mut text = String::with_capacity(KEY_PREFIX.len() + name.len().min(CUT_BODY_LEN));
        text.push_str(KEY_PREFIX);
        push_body(&mut text, name);
        ToolKey(text)
    }

    /// The key `tool:unnamed`, given to a definition with no name or an empty one.
    pub fn unnamed() -> ToolKey {
        ToolKey(String::from("tool:unnamed"))
    }

    /// Wraps key text that [`FromStr`](std::str::FromStr) has already validated.
    pub(crate) fn from_validated(text: String) -> ToolKey {
        ToolKey(text)
    }

    /// The whole key text, `tool:<body>`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The encoded body, without the `tool:` prefix.
    pub fn body(&self) -> &str {
        self.0.get(KEY_PREFIX.len()..).unwrap_or_default()
    }

    /// Whether rule 3 cut this key's body, judged by its shape: 96 characters, `~`, then 16
    /// lowercase hexadecimal characters.
    ///
    /// A name whose uncut encoding has exactly that shape is also reported as cut (see the
    /// crate docs, "Known properties").
    pub fn is_cut(&self) -> bool {
        has_cut_shape(self.body())
    }
}

/// Whether `body` is 96 characters, `~`, and 16 lowercase hex characters.
pub(crate) fn has_cut_shape(body: &str) -> bool {
    let bytes = body.as_bytes();
    bytes.len() == CUT_BODY_LEN
        && bytes[CUT_PREFIX_LEN] == b'~'
        && bytes[CUT_PREFIX_LEN + 1..]
            .iter()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        && bytes[CUT_PREFIX_LEN + 1..].len() == CUT_HASH_HEX_LEN
}

impl fmt::Display for ToolKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for ToolKey {
    fn as_ref(&self) -> &str {
        &self.0
    }
}
