//! Invisible and direction-changing characters in a tool definition (docs/design.md §9: what a
//! person approves must be what the model reads).
//!
//! A definition's text is read by two audiences: the person who approves it, through an
//! editor or a terminal, and the model, which receives every code point. Unicode tag
//! characters (U+E0000–U+E007F) are not drawn at all yet spell ASCII to a model ("ignore
//! previous instructions" hidden after a harmless description); bidirectional controls reorder
//! what a person sees; zero-width characters split or join words unseen. None belongs in a
//! tool definition often enough to pass without a look, so each is reported (a warning: ZWJ
//! and ZWNJ have rare legitimate uses, in emoji sequences and some scripts).

use std::fmt;

use jcs_digest::order;
use serde_json::Value;

use crate::code_points::{CodePoints, is_invisible};
use crate::location::{child, element};
use crate::printable::Printable;

/// One text in a definition that holds invisible or direction-changing characters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvisibleText {
    pointer: String,
    member_name: bool,
    code_points: CodePoints,
}

impl InvisibleText {
    /// The JSON Pointer (RFC 6901) into the definition: `/description`,
    /// `/inputSchema/properties/query/description`, … For a member name, the pointer of that
    /// member.
    pub fn pointer(&self) -> &str {
        &self.pointer
    }

    /// Whether the characters are in the member name at [`pointer`](Self::pointer) rather
    /// than in a string value.
    pub fn in_member_name(&self) -> bool {
        self.member_name
    }

    /// The characters found, in order of appearance.
    pub fn code_points(&self) -> &CodePoints {
        &self.code_points
    }

    /// What the tag characters spell, when some of them stand for printable ASCII
    /// (U+E0020–U+E007E stand for U+0020–U+007E): the text a model reads and a person does
    /// not see.
    pub fn tag_text(&self) -> Option<String> {
        let text: String = self
            .code_points
            .chars()
            .iter()
            .filter_map(|c| char::from_u32(u32::from(*c).checked_sub(0xE0000)?))
            .filter(|c| (' '..='~').contains(c))
            .collect();
        (!text.is_empty()).then_some(text)
    }
}

impl fmt::Display for InvisibleText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let place = if self.member_name {
            " (the member name)"
        } else {
            ""
        };
        let count = self.code_points.len();
        let plural = if count == 1 { "" } else { "s" };
        write!(
            f,
            "{}{place} holds {count} invisible or direction-changing character{plural} ({})",
            Printable(&self.pointer),
            self.code_points
        )?;
        if let Some(text) = self.tag_text() {
            write!(f, "; its tag characters spell {text:?}")?;
        }
        Ok(())
    }
}

/// Every string value and member name in `definition` that holds invisible or
/// direction-changing characters ([`is_invisible`]), depth first (members in name order, an
/// object's member names before its values; the same whatever serde_json's features).
///
/// The whole definition is searched, not only `name`, `title` and `description`: the model
/// reads all of it, schema titles and descriptions, enum values and property names included.
/// Works on any value (an approved definition, or a live one from `tools/list`); iterative, so
/// nesting depth costs no stack.
pub fn invisible_text(definition: &Value) -> Vec<InvisibleText> {
    let mut found = Vec::new();
    // Depth-first with an explicit stack; the path to the current value is kept as steps, and
    // a pointer is only written for a text that has something to report.
    let mut pending: Vec<(usize, Option<Step<'_>>, &Value)> = vec![(0, None, definition)];
    let mut path: Vec<Step<'_>> = Vec::new();
    while let Some((depth, step, value)) = pending.pop() {
        path.truncate(depth.saturating_sub(1));
        path.extend(step);
        match value {
            Value::String(text) => {
                if let Some(code_points) = invisible_in(text) {
                    found.push(InvisibleText {
                        pointer: pointer_of(&path),
                        member_name: false,
                        code_points,
                    });
                }
            }
            Value::Array(elements) => {
                for (index, element) in elements.iter().enumerate().rev() {
                    pending.push((depth + 1, Some(Step::Index(index)), element));
                }
            }
            Value::Object(members) => {
                for name in order::names(members) {
                    if let Some(code_points) = invisible_in(name) {
                        found.push(InvisibleText {
                            pointer: child(&pointer_of(&path), name),
                            member_name: true,
                            code_points,
                        });
                    }
                }
                for (name, member) in order::members(members).rev() {
                    pending.push((depth + 1, Some(Step::Member(name)), member));
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
    found
}

/// One step of a JSON Pointer.
#[derive(Clone, Copy)]
enum Step<'v> {
    Member(&'v str),
    Index(usize),
}

fn pointer_of(path: &[Step<'_>]) -> String {
    path.iter().fold(String::new(), |pointer, step| match step {
        Step::Member(name) => child(&pointer, name),
        Step::Index(index) => element(&pointer, *index),
    })
}

fn invisible_in(text: &str) -> Option<CodePoints> {
    // Every listed character is outside ASCII, and most definition text is ASCII: the byte
    // check is much cheaper than decoding each character.
    if text.is_ascii() || !text.chars().any(is_invisible) {
        return None;
    }
    Some(CodePoints::of(text, is_invisible))
}
