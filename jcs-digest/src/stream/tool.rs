//! Tool definitions read from the bytes: the six members of the per-tool digest written
//! canonically, everything else checked and skipped (seed 000 §3, docs/design.md §2).

use sha2::{Digest as _, Sha256};

use super::{JsonType, StreamReader};
use crate::canonical;
use crate::digest::Digest;
use crate::error::StrictJsonError;
use crate::tool::Profile;

/// The hashed members in RFC 8785 order (as `MEMBERS_IN_CANONICAL_ORDER` in `tool.rs`), each as
/// it is written in the preimage.
const SLOTS: [(&str, &[u8]); 6] = [
    ("annotations", b"\"annotations\":"),
    ("description", b"\"description\":"),
    ("inputSchema", b"\"inputSchema\":"),
    ("name", b"\"name\":"),
    ("outputSchema", b"\"outputSchema\":"),
    ("title", b"\"title\":"),
];
const NAME_SLOT: usize = 3;

/// One element of a `tools` array, read by [`StreamReader::tool_definition`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamedTool {
    /// An object: its `name` member and its definition digest.
    Definition {
        /// The `name` member.
        name: ToolName,
        /// The per-tool definition digest.
        digest: Digest,
    },
    /// Not an object, so not a tool definition.
    NotAnObject {
        /// The type found.
        found: JsonType,
    },
}

impl StreamedTool {
    /// What [`StreamReader::tool_definition`] gives for the bytes of `tool`, computed from the
    /// value by the tree path ([`crate::tool_definition_digest`]): the reference the streaming
    /// path is tested against.
    ///
    /// # Errors
    ///
    /// [`ToolDigestError::Canonicalize`](crate::ToolDigestError::Canonicalize) for an object
    /// whose hashed members hold an integer outside ±(2^53−1) (only a value built in code can).
    pub fn from_value(
        tool: &serde_json::Value,
        profile: Profile,
    ) -> Result<StreamedTool, crate::ToolDigestError> {
        use serde_json::Value;

        let Value::Object(members) = tool else {
            return Ok(StreamedTool::NotAnObject {
                found: JsonType::of_value(tool),
            });
        };
        let name = match members.get("name") {
            None | Some(Value::Null) => ToolName::Absent,
            Some(Value::String(text)) => ToolName::Text(text.clone()),
            Some(other) => ToolName::NotAString {
                found: JsonType::of_value(other),
            },
        };
        let digest = crate::tool_definition_digest(tool, profile)?;
        Ok(StreamedTool::Definition { name, digest })
    }
}

/// The `name` member of a tool definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolName {
    /// Absent or `null`.
    Absent,
    /// A string, decoded.
    Text(String),
    /// Present and neither a string nor `null`.
    NotAString {
        /// The type found.
        found: JsonType,
    },
}

/// Where the canonical bytes of each hashed member are in a buffer, in [`SLOTS`] order.
type Slots = [Option<(usize, usize)>; 6];

/// A tool read up to its digest: for an object, its name and where its members are.
enum Read {
    Definition(ToolName, Slots),
    NotAnObject(JsonType),
}

impl Read {
    /// The record, with the digest of the preimage of a definition whose members are in
    /// `buffer`.
    fn digest(self, buffer: &[u8], profile: Profile) -> StreamedTool {
        match self {
            Read::Definition(name, slots) => {
                let mut hasher = Sha256::new();
                emit_preimage(buffer, &slots, profile, |bytes| hasher.update(bytes));
                StreamedTool::Definition {
                    name,
                    digest: Digest::from_bytes(hasher.finalize().into()),
                }
            }
            Read::NotAnObject(found) => StreamedTool::NotAnObject { found },
        }
    }
}

/// Writes `{"profile":LABEL,"tool":{…}}` to `emit`: the members of `slots` (in `buffer`) in
/// RFC 8785 order, each after its name.
fn emit_preimage(buffer: &[u8], slots: &Slots, profile: Profile, mut emit: impl FnMut(&[u8])) {
    // A label needs no escaping (`every_label_is_its_own_canonical_string`), so it is emitted
    // between quotes as it is, with no buffer made per tool.
    emit(b"{\"profile\":\"");
    emit(profile.label().as_bytes());
    emit(b"\",\"tool\":{");
    let mut first = true;
    for ((_, prefix), slot) in SLOTS.iter().zip(slots) {
        let Some((start, end)) = *slot else {
            continue;
        };
        if !first {
            emit(b",");
        }
        first = false;
        emit(prefix);
        emit(&buffer[start..end]);
    }
    emit(b"}}");
}

impl StreamReader<'_> {
    /// Reads one tool definition (an element of a `tools` array) and digests it: the six
    /// members of [`crate::TOOL_DEFINITION_MEMBERS`] are written canonically, `null` ones
    /// omitted; every other member (`_meta` included) is checked and skipped. The digest is
    /// the one [`crate::tool_definition_digest`] gives for the same definition.
    ///
    /// # Errors
    ///
    /// [`StrictJsonError`], as the tree reader gives it for the same bytes.
    pub fn tool_definition(&mut self, profile: Profile) -> Result<StreamedTool, StrictJsonError> {
        let mut buffer = std::mem::take(&mut self.tool_buffer);
        buffer.clear();
        let read = self.read_tool(&mut buffer);
        let tool = read.map(|read| read.digest(&buffer, profile));
        self.tool_buffer = buffer;
        tool
    }

    /// Reads the array that is the next value and digests every element with
    /// [`tool_definition`](Self::tool_definition), in order.
    ///
    /// A large array (a megabyte or more of input left) on a machine with more than one CPU is
    /// read in two halves at once, the second half used only once the first proves it starts
    /// at an element; the result is the same, errors included.
    ///
    /// # Errors
    ///
    /// [`StrictJsonError`], as the tree reader gives it for the same bytes; a syntax error when
    /// the next value is not an array (check with [`peek`](Self::peek) first).
    pub fn tool_definitions(
        &mut self,
        profile: Profile,
    ) -> Result<Vec<StreamedTool>, StrictJsonError> {
        // A tool definition, not a nested schema, usually starts with its name.
        self.elements(Some(b"\"name\""), |reader: &mut StreamReader<'_>| {
            reader.tool_definition(profile)
        })
    }

    /// Reads one element; for an object, appends the canonical bytes of its hashed members to
    /// `buffer`.
    fn read_tool(&mut self, buffer: &mut Vec<u8>) -> Result<Read, StrictJsonError> {
        if self.peek() != Some(JsonType::Object) {
            return self.skip_value().map(Read::NotAnObject);
        }
        self.tool_members(buffer)
    }

    fn tool_members(&mut self, buffer: &mut Vec<u8>) -> Result<Read, StrictJsonError> {
        let mut slots: Slots = [None; 6];
        let mut name = ToolName::Absent;
        self.enter_object()?;
        while let Some(member) = self.next_member()? {
            let Some(slot) = SLOTS.iter().position(|(slot, _)| *slot == member) else {
                self.skip_value()?;
                continue;
            };
            let start = buffer.len();
            match self.peek() {
                // Absent and null are the same (seed 000 §3, step 1).
                Some(JsonType::Null) => {
                    self.skip_value()?;
                    continue;
                }
                Some(JsonType::String) if slot == NAME_SLOT => {
                    if let Some(text) = self.string_value()? {
                        canonical::write_string(&text, buffer);
                        name = ToolName::Text(text);
                    }
                }
                found => {
                    if slot == NAME_SLOT {
                        name = ToolName::NotAString {
                            found: found.unwrap_or(JsonType::Null),
                        };
                    }
                    self.canonical_value(buffer)?;
                }
            }
            slots[slot] = Some((start, buffer.len()));
        }
        Ok(Read::Definition(name, slots))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `emit_preimage` writes a label between quotes as it is.
    #[test]
    fn every_label_is_its_own_canonical_string() {
        for profile in Profile::ALL {
            let mut written = Vec::new();
            canonical::write_string(profile.label(), &mut written);
            assert_eq!(written, format!("\"{}\"", profile.label()).into_bytes());
        }
    }
}
