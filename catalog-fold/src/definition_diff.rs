//! A readable difference of two tool definitions (docs/design.md §9): what a person reviews before
//! approving a changed definition, and what `toolgate diff` and `toolgate catalog verify` show.
//!
//! Only the six members the per-tool digest hashes count (seed 000 §3: `name`, `title`,
//! `description`, `inputSchema`, `outputSchema`, `annotations`), read as the digest reads them:
//! a member that is absent or `null` is left out, and values are compared in their RFC 8785
//! form (`1.0` and `1` are the same number). So a difference is empty exactly when the two
//! per-tool digests are equal.

use std::collections::BTreeSet;
use std::fmt;

use jcs_digest::{TOOL_DEFINITION_MEMBERS, canonicalize};
use serde_json::{Map, Value, json};

use crate::word_diff::{WordDiff, is_hidden, write_escaped};

/// One difference, at an RFC 6901 JSON Pointer into the definition (`/description`,
/// `/inputSchema/properties/query/type`, …).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DefinitionChange {
    /// A text changed: a string at a pointer ending in `title` or `description` (the tool's
    /// own, or a schema's or property's) on both sides. Compared word by word.
    Text {
        /// Where.
        pointer: String,
        /// The old text.
        old: String,
        /// The new text.
        new: String,
        /// The word-by-word difference.
        words: WordDiff,
    },
    /// A member (or array element) only the new definition has.
    Added {
        /// Where.
        pointer: String,
        /// Its value.
        new: Value,
    },
    /// A member (or array element) only the old definition has.
    Removed {
        /// Where.
        pointer: String,
        /// Its value.
        old: Value,
    },
    /// A value that differs, where it is not a text compared word by word (a number, a type
    /// name, a value whose JSON type changed, the tool's `name`).
    Changed {
        /// Where.
        pointer: String,
        /// The old value.
        old: Value,
        /// The new value.
        new: Value,
    },
}

impl DefinitionChange {
    /// The JSON Pointer into the definition.
    pub fn pointer(&self) -> &str {
        match self {
            DefinitionChange::Text { pointer, .. }
            | DefinitionChange::Added { pointer, .. }
            | DefinitionChange::Removed { pointer, .. }
            | DefinitionChange::Changed { pointer, .. } => pointer,
        }
    }

    /// `{"pointer", "change": "text"|"added"|"removed"|"changed", "old"?, "new"?, "words"?}`:
    /// values as JSON values, and for a text its word difference as [`WordDiff`] displays it.
    pub fn to_json(&self) -> Value {
        match self {
            DefinitionChange::Text {
                pointer,
                old,
                new,
                words,
            } => json!({
                "pointer": pointer, "change": "text", "old": old, "new": new,
                "words": words.to_string(),
            }),
            DefinitionChange::Added { pointer, new } => {
                json!({"pointer": pointer, "change": "added", "new": new})
            }
            DefinitionChange::Removed { pointer, old } => {
                json!({"pointer": pointer, "change": "removed", "old": old})
            }
            DefinitionChange::Changed { pointer, old, new } => {
                json!({"pointer": pointer, "change": "changed", "old": old, "new": new})
            }
        }
    }
}

/// One line: `changed  /description (text): Echo [-the-]{+a+} text`, `added    /P: VALUE`,
/// `removed  /P: VALUE`, `changed  /P: OLD -> NEW`, with values as compact RFC 8785 JSON and
/// every hidden character escaped (see [`WordDiff`]).
impl fmt::Display for DefinitionChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DefinitionChange::Text { pointer, words, .. } => {
                f.write_str("changed  ")?;
                write_escaped(f, pointer)?;
                write!(f, " (text): {words}")
            }
            DefinitionChange::Added { pointer, new } => {
                f.write_str("added    ")?;
                write_escaped(f, pointer)?;
                write!(f, ": {}", compact_json(new))
            }
            DefinitionChange::Removed { pointer, old } => {
                f.write_str("removed  ")?;
                write_escaped(f, pointer)?;
                write!(f, ": {}", compact_json(old))
            }
            DefinitionChange::Changed { pointer, old, new } => {
                f.write_str("changed  ")?;
                write_escaped(f, pointer)?;
                write!(f, ": {} -> {}", compact_json(old), compact_json(new))
            }
        }
    }
}

/// The difference between two tool definitions, in the order of the hashed members (`name`,
/// `title`, `description`, `inputSchema`, `outputSchema`, `annotations`), then depth first
/// with object members in code point order and array elements by index.
///
/// ```
/// use catalog_fold::DefinitionDiff;
/// use serde_json::json;
///
/// let approved = json!({"name": "echo", "description": "Returns the given text.",
///     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}});
/// let live = json!({"name": "echo", "description": "Returns the text, and mails it.",
///     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"},
///         "to": {"type": "string"}}}, "_meta": {"not": "hashed"}});
/// let diff = DefinitionDiff::between(&approved, &live);
/// assert_eq!(
///     diff.to_string(),
///     "changed  /description (text): Returns the [-given text.-]{+text, and mails it.+}\n\
///      added    /inputSchema/properties/to: {\"type\":\"string\"}"
/// );
/// assert!(DefinitionDiff::between(&live, &live).is_empty());
/// ```
///
/// A value that is not a JSON object has no hashed members (and no digest either).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DefinitionDiff {
    changes: Vec<DefinitionChange>,
}

impl DefinitionDiff {
    /// What changed from `old` to `new`.
    pub fn between(old: &Value, new: &Value) -> DefinitionDiff {
        let mut changes = Vec::new();
        // Work items in reverse order of output: the last pushed is compared first.
        let mut pending: Vec<(String, Option<&Value>, Option<&Value>)> = TOOL_DEFINITION_MEMBERS
            .iter()
            .rev()
            .map(|member| {
                (
                    format!("/{member}"),
                    hashed(old, member),
                    hashed(new, member),
                )
            })
            .collect();
        while let Some((pointer, old, new)) = pending.pop() {
            match (old, new) {
                (None, None) => {}
                (None, Some(new)) => changes.push(DefinitionChange::Added {
                    pointer,
                    new: new.clone(),
                }),
                (Some(old), None) => changes.push(DefinitionChange::Removed {
                    pointer,
                    old: old.clone(),
                }),
                (Some(Value::Object(old)), Some(Value::Object(new))) => {
                    let names: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
                    pending.extend(
                        names
                            .into_iter()
                            .rev()
                            .map(|name| (child(&pointer, name), old.get(name), new.get(name))),
                    );
                }
                (Some(Value::Array(old)), Some(Value::Array(new))) => {
                    pending.extend((0..old.len().max(new.len())).rev().map(|index| {
                        (format!("{pointer}/{index}"), old.get(index), new.get(index))
                    }));
                }
                (Some(old), Some(new)) if same_scalar(old, new) => {}
                (Some(Value::String(old)), Some(Value::String(new))) if is_text(&pointer) => {
                    changes.push(DefinitionChange::Text {
                        words: WordDiff::between(old, new),
                        pointer,
                        old: old.clone(),
                        new: new.clone(),
                    });
                }
                (Some(old), Some(new)) => changes.push(DefinitionChange::Changed {
                    pointer,
                    old: old.clone(),
                    new: new.clone(),
                }),
            }
        }
        DefinitionDiff { changes }
    }

    /// The changes, in the order described above.
    pub fn changes(&self) -> &[DefinitionChange] {
        &self.changes
    }

    /// Whether nothing hashed differs (the two per-tool digests are equal).
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// The changes as a JSON array (see [`DefinitionChange::to_json`]).
    pub fn to_json(&self) -> Value {
        Value::Array(self.changes.iter().map(DefinitionChange::to_json).collect())
    }
}

/// One change per line ([`DefinitionChange`]'s form), joined by `\n`, no trailing newline.
impl fmt::Display for DefinitionDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, change) in self.changes.iter().enumerate() {
            if index > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{change}")?;
        }
        Ok(())
    }
}

/// A hashed member of a definition: absent and `null` are both left out (docs/design.md §2).
fn hashed<'a>(definition: &'a Value, member: &str) -> Option<&'a Value> {
    definition
        .as_object()
        .and_then(|members: &Map<String, Value>| members.get(member))
        .filter(|value| !value.is_null())
}

/// `pointer` extended by the member `name`, escaped as RFC 6901 says (`~` → `~0`, `/` → `~1`).
fn child(pointer: &str, name: &str) -> String {
    format!("{pointer}/{}", name.replace('~', "~0").replace('/', "~1"))
}

/// Texts people read: a string at a `title` or `description`.
fn is_text(pointer: &str) -> bool {
    pointer.ends_with("/title") || pointer.ends_with("/description")
}

/// Equal as the digest sees them: numbers by their RFC 8785 form, everything else exactly.
/// Objects and arrays are never equal here (they are compared member by member).
fn same_scalar(old: &Value, new: &Value) -> bool {
    match (old, new) {
        (Value::Number(_), Value::Number(_)) => match (canonicalize(old), canonicalize(new)) {
            (Ok(old_form), Ok(new_form)) => old_form == new_form,
            _ => old == new,
        },
        (Value::Object(_), _) | (Value::Array(_), _) => false,
        _ => old == new,
    }
}

/// Compact JSON for a person: the RFC 8785 form, with hidden characters made visible.
fn compact_json(value: &Value) -> String {
    let text = canonicalize(value)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .unwrap_or_else(|| jcs_digest::order::to_string(value));
    escape_hidden_json(&text)
}

/// JSON text with the characters a person would not see (controls, bidirectional, zero-width,
/// format and tag characters; see [`WordDiff`]) written as `\u` escapes: the same JSON value,
/// made visible. Line breaks, carriage returns and tabs are left alone: a serializer escapes
/// them inside strings, so a raw one is whitespace between tokens.
pub fn escape_hidden_json(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for character in text.chars() {
        if is_hidden(character) && !matches!(character, '\n' | '\r' | '\t') {
            let mut units = [0u16; 2];
            for unit in character.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(character);
        }
    }
    out
}
