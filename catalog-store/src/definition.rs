//! The approved definition: MCP or snake_case member names in, MCP names out (docs/design.md §4).
//!
//! A definition is read from the bytes once, by the streaming reader: each member's name and
//! type, the `name` text, the RFC 8785 bytes of every hashed member, and the object's span
//! as written. The checks, the digest of the normalized definition and the search for
//! invisible characters work on that; the normalized `Value` is only built from the span when
//! a caller asks for it ([`normalized_value`]), since schemas are the bulk of a catalog and
//! building their trees (and freeing them) was half of a load.

use std::borrow::Cow;
use std::cell::Cell;
use std::ops::Range;

use jcs_digest::{Digest, JsonType, Profile, StreamReader, StrictJsonError, write_canonical_str};
use serde_json::{Map, Value};

use crate::code_points::is_invisible;
use crate::error::CatalogError;
use crate::location::child;
use crate::members::Problems;
use crate::small::{SmallObject, SmallValue, read_string_text};

/// The members an approved definition may carry: the six that are hashed (seed 000 §3), with
/// the seed 003 §2 snake_case spellings of the two schemas.
pub(crate) const DEFINITION_MEMBERS: &[&str] = &[
    "name",
    "title",
    "description",
    "inputSchema",
    "input_schema",
    "outputSchema",
    "output_schema",
    "annotations",
];

const WHY_DEFINITION: &str = "Only the members that are hashed may be approved: anything else \
     (_meta, icons, ...) would reach clients without ever being checked against the upstream";

/// The hashed members other than `name`: (MCP name, snake_case name, JSON type it must have).
const DEFINITION_FIELDS: [(&str, Option<&str>, Kind); 5] = [
    ("title", None, Kind::String),
    ("description", None, Kind::String),
    ("inputSchema", Some("input_schema"), Kind::Object),
    ("outputSchema", Some("output_schema"), Kind::Object),
    ("annotations", None, Kind::Object),
];

/// The six hashed members (`jcs_digest::TOOL_DEFINITION_MEMBERS`) in RFC 8785 order: the order
/// of the per-tool preimage.
const IN_CANONICAL_ORDER: [&str; 6] = [
    "annotations",
    "description",
    "inputSchema",
    "name",
    "outputSchema",
    "title",
];

thread_local! {
    /// A buffer kept between the definitions a thread reads (canonical bytes, preimages): each
    /// is a few KiB, and growing a new one each time was a tenth of a load's time.
    static SCRATCH: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// The scratch buffer is kept only up to this size, so that one huge definition does not stay
/// allocated on the thread (the gateway's) after the load.
const SCRATCH_KEPT: usize = 1 << 20;

/// Runs `read` with this thread's scratch buffer, empty, and keeps the buffer for the next
/// caller (unless it grew past [`SCRATCH_KEPT`]).
pub(crate) fn with_scratch<R>(read: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    let mut buffer = take_scratch();
    let result = read(&mut buffer);
    give_back(buffer);
    result
}

/// This thread's scratch buffer, empty.
fn take_scratch() -> Vec<u8> {
    let mut buffer = SCRATCH.take();
    buffer.clear();
    buffer
}

fn give_back(buffer: Vec<u8>) {
    if buffer.capacity() <= SCRATCH_KEPT {
        SCRATCH.set(buffer);
    }
}

#[derive(Clone, Copy)]
enum Kind {
    String,
    Object,
}

/// `approved_definition` as read from the file: an object, or the type found instead.
pub(crate) enum DefinitionRead<'a> {
    Object(DefinitionMembers<'a>),
    Other(JsonType),
}

/// The members of an `approved_definition` object, read strictly, nothing built from them yet
/// but what needs their canonical bytes (the digest, whether they may hold an invisible
/// character): those bytes are written to the thread's scratch buffer and used up at the end
/// of the entry's read ([`finish`](Self::finish)), not kept until the entry is checked.
pub(crate) struct DefinitionMembers<'a> {
    /// The object as written (the file's bytes, read strictly).
    span: Cow<'a, [u8]>,
    /// Every member, in file order.
    members: Vec<Member<'a>>,
    /// Whether the canonical bytes of the hashed members may hold an invisible character.
    canonical_may_hold_invisible: bool,
    /// The digest of the normalized definition with `name` = the entry's upstream name
    /// ([`entry_upstream_name`]), when it could be read: the digest to check if the entry
    /// proves valid.
    digest: Option<Digest>,
}

struct Member<'a> {
    /// The name as written: one of [`DEFINITION_MEMBERS`] (not allocated), or another.
    name: Cow<'static, str>,
    found: JsonType,
    /// Where the member's canonical bytes were in the buffer they were written to, until
    /// [`DefinitionMembers::finish`].
    canonical: Option<Range<usize>>,
    /// The `name` member's text, when it is a string (borrowed when written without escapes).
    text: Option<Cow<'a, str>>,
}

/// Whether a member's value is written canonically (to be hashed, if the definition is valid).
fn is_hashed(name: &str, found: JsonType) -> bool {
    found != JsonType::Null && name != "name" && DEFINITION_MEMBERS.contains(&name)
}

/// `name`, not allocated when it is one of the members a definition may carry.
fn member_name(name: &str) -> Cow<'static, str> {
    match DEFINITION_MEMBERS.iter().find(|allowed| **allowed == name) {
        Some(allowed) => Cow::Borrowed(allowed),
        None => Cow::Owned(name.to_owned()),
    }
}

impl<'a> DefinitionRead<'a> {
    /// Reads the next value of `reader`, an element of `input`, writing the canonical bytes of
    /// its hashed members to `canonical` (empty), for [`DefinitionMembers::finish`].
    pub(crate) fn read(
        reader: &mut StreamReader<'a>,
        input: &'a [u8],
        canonical: &mut Vec<u8>,
    ) -> Result<DefinitionRead<'a>, StrictJsonError> {
        if reader.peek() != Some(JsonType::Object) {
            return reader.skip_value().map(DefinitionRead::Other);
        }
        let start = reader.offset();
        let mut members = Vec::new();
        reader.enter_object()?;
        while let Some(name) = reader.next_member()? {
            let name = member_name(name);
            let mut member = Member {
                found: reader.peek().unwrap_or(JsonType::Null),
                name,
                canonical: None,
                text: None,
            };
            if member.name == "name" && member.found == JsonType::String {
                member.text = Some(read_string_text(reader, input)?);
            } else if is_hashed(&member.name, member.found) {
                let from = canonical.len();
                reader.canonical_value(canonical)?;
                member.canonical = Some(from..canonical.len());
            } else {
                // A value `peek` cannot type is refused here, with the tree reader's error.
                reader.skip_value()?;
            }
            members.push(member);
        }
        let span = input.get(start..reader.offset()).unwrap_or_default();
        Ok(DefinitionRead::Object(DefinitionMembers {
            span: Cow::Borrowed(span),
            members,
            canonical_may_hold_invisible: false,
            digest: None,
        }))
    }

    /// What [`read`](Self::read) gives for the bytes `value` was parsed from: the tree loader's
    /// path, the reference the streaming one is tested against.
    #[cfg(any(test, feature = "reference-loader"))]
    pub(crate) fn from_value(value: Value, canonical: &mut Vec<u8>) -> DefinitionRead<'static> {
        let Value::Object(object) = value else {
            return DefinitionRead::Other(JsonType::of_value(&value));
        };
        let members = object
            .iter()
            .map(|(name, value)| {
                let found = JsonType::of_value(value);
                let from = canonical.len();
                let written =
                    is_hashed(name, found) && jcs_digest::write_canonical(value, canonical).is_ok();
                Member {
                    name: member_name(name),
                    found,
                    canonical: written.then_some(from..canonical.len()),
                    text: value
                        .as_str()
                        .filter(|_| name == "name")
                        .map(|text| Cow::Owned(text.to_owned())),
                }
            })
            .collect();
        let span = serde_json::to_vec(&Value::Object(object)).unwrap_or_default();
        DefinitionRead::Object(DefinitionMembers {
            span: Cow::Owned(span),
            members,
            canonical_may_hold_invisible: false,
            digest: None,
        })
    }
}

impl DefinitionMembers<'_> {
    fn member(&self, name: &str) -> Option<&Member<'_>> {
        self.members.iter().find(|member| member.name == name)
    }

    /// The definition as written, to build its value from when it is asked for.
    pub(crate) fn span(&self) -> &[u8] {
        &self.span
    }

    /// Whether the normalized definition (its hashed members and `name` = `upstream_name`) may
    /// hold an invisible character; `false` means it holds none. RFC 8785 writes every such
    /// character as itself (it escapes only `"`, `\` and controls), so its canonical bytes
    /// show an escaped `\u200b` as well as a literal one.
    pub(crate) fn may_hold_invisible(&self, upstream_name: &str) -> bool {
        self.canonical_may_hold_invisible || upstream_name.chars().any(is_invisible)
    }

    /// Uses up `canonical`, the bytes [`DefinitionRead::read`] wrote, at the end of the
    /// entry's read, once `upstream_name` (the entry's, [`entry_upstream_name`]) is known: the
    /// digest of the normalized definition, and whether it may hold an invisible character.
    ///
    /// The digest is that of the hashed members that were written, under their MCP names;
    /// when the definition proves valid ([`check_definition`]), those are exactly the members
    /// it is normalized to.
    pub(crate) fn finish(&mut self, canonical: &mut Vec<u8>, upstream_name: Option<&str>) {
        self.canonical_may_hold_invisible = may_hold_invisible(canonical);
        self.digest =
            upstream_name.map(|upstream| definition_digest(&self.members, canonical, upstream));
    }
}

/// The name a valid entry's definition is normalized with: `upstream_name`, or `tool_name`
/// when it is absent or `null`; `None` when that member is not a non-empty string (the entry
/// is then invalid). The rule `read_entry` reads the two members by.
pub(crate) fn entry_upstream_name<'v>(entry: &'v SmallObject<'_>) -> Option<&'v str> {
    let written = match entry.get("upstream_name") {
        None | Some(SmallValue::Null) => entry.get("tool_name"),
        written => written,
    };
    written?.as_str().filter(|text| !text.is_empty())
}

/// Checks `approved_definition` and digests it normalized to MCP member names with `name` =
/// `upstream_name`: the definition the gateway serves (after renaming to `tool_name`) and a
/// live one must hash to.
///
/// `null` members are left out (absent and `null` hash the same, seed 000 §3 step 1). Returns
/// `None` when a problem was recorded. `upstream_name` is `None` when it could not be read;
/// the definition is still checked.
pub(crate) fn check_definition(
    problems: &mut Problems<'_>,
    definition: &DefinitionMembers<'_>,
    pointer: &str,
    upstream_name: Option<&str>,
) -> Option<Digest> {
    let errors_before = problems.errors.len();
    // In name order, as the tree of an object iterates.
    let mut names: Vec<&str> = definition.members.iter().map(|m| &*m.name).collect();
    names.sort_unstable();
    problems.refuse_unknown_names(names, pointer, DEFINITION_MEMBERS, WHY_DEFINITION);

    match definition.member("name") {
        None => {}
        Some(Member {
            text: Some(name), ..
        }) => {
            if let Some(upstream_name) = upstream_name.filter(|upstream| *upstream != name) {
                let at = problems.at(child(pointer, "name"));
                problems.push(CatalogError::DefinitionNameMismatch {
                    at,
                    name: name.to_string(),
                    upstream_name: upstream_name.to_owned(),
                });
            }
        }
        Some(Member {
            found: JsonType::Null,
            ..
        }) => {}
        Some(other) => problems.wrong_type_of(child(pointer, "name"), "a string", other.found),
    }

    for (mcp, snake, kind) in DEFINITION_FIELDS {
        let mcp_member = definition.member(mcp);
        let snake_member = snake.and_then(|snake| definition.member(snake).map(|m| (snake, m)));
        let (written, member) = match (mcp_member, snake_member) {
            (Some(_), Some((snake, _))) => {
                let at = problems.at(child(pointer, snake));
                problems.push(CatalogError::BothSpellings { at, mcp, snake });
                continue;
            }
            (Some(member), None) => (mcp, member),
            (None, Some((snake, member))) => (snake, member),
            (None, None) => {
                if mcp == "inputSchema" {
                    let at = problems.at(child(pointer, mcp));
                    problems.push(CatalogError::MissingMember {
                        at,
                        member: mcp,
                        hint: "MCP requires every tool to declare its input; add \
                               \"inputSchema\": {\"type\": \"object\"} at least",
                    });
                }
                continue;
            }
        };
        let well_typed = match (kind, member.found) {
            (_, JsonType::Null) if mcp != "inputSchema" => continue,
            (Kind::String, JsonType::String) | (Kind::Object, JsonType::Object) => true,
            _ => false,
        };
        match member.canonical {
            Some(_) if well_typed => {}
            _ => {
                let expected = match kind {
                    Kind::String => "a string",
                    Kind::Object => "an object",
                };
                let at = problems.at(child(pointer, written));
                problems.push(CatalogError::WrongType {
                    at,
                    expected,
                    found: member.found.with_article(),
                });
            }
        }
    }

    upstream_name?;
    if problems.errors.len() != errors_before {
        return None;
    }
    definition.digest
}

/// The per-tool digest (label `trace.mcp-tool-definition.v1`) of the normalized definition,
/// from the canonical bytes of its members (in `canonical`, which is left as it was):
/// `{"profile":LABEL,"tool":{…}}` with the members in RFC 8785 order, the digest
/// `jcs_digest::tool_definition_digest` gives for its value.
fn definition_digest(
    members: &[Member<'_>],
    canonical: &mut Vec<u8>,
    upstream_name: &str,
) -> Digest {
    let start = canonical.len();
    // Each written member under its MCP name (of a valid definition, one spelling per member).
    let written = |mcp: &str| {
        let snake = DEFINITION_FIELDS
            .iter()
            .find(|(name, _, _)| *name == mcp)
            .and_then(|(_, snake, _)| *snake);
        members
            .iter()
            .filter(|member| member.name == mcp || Some(&*member.name) == snake)
            .find_map(|member| member.canonical.clone())
            .filter(|range| range.end <= start)
    };
    // Written after the members' bytes, in the same buffer, then cut off.
    let preimage = canonical;
    preimage.extend_from_slice(b"{\"profile\":");
    write_canonical_str(Profile::Trace.label(), preimage);
    preimage.extend_from_slice(b",\"tool\":{");
    let mut first = true;
    for mcp in IN_CANONICAL_ORDER {
        let value = if mcp == "name" {
            None
        } else {
            match written(mcp) {
                Some(range) => Some(range),
                None => continue,
            }
        };
        if !first {
            preimage.push(b',');
        }
        first = false;
        write_canonical_str(mcp, preimage);
        preimage.push(b':');
        match value {
            Some(range) => preimage.extend_from_within(range),
            None => write_canonical_str(upstream_name, preimage),
        }
    }
    preimage.extend_from_slice(b"}}");
    let digest = Digest::of(preimage.get(start..).unwrap_or_default());
    preimage.truncate(start);
    digest
}

/// The normalized definition of a valid `approved_definition` written as `span`: MCP member
/// names, `null` members dropped, `"name"` = `upstream_name` first and the others in the order
/// of [`DEFINITION_FIELDS`] (the order the gateway writes them in when serde_json keeps
/// insertion order).
///
/// The span was read strictly at load, so it parses; were it not to, the value would be an
/// object with `name` alone, which no live definition matches.
pub(crate) fn normalized_value(span: &[u8], upstream_name: &str) -> Map<String, Value> {
    let mut written = match jcs_digest::parse_strict(span) {
        Ok(Value::Object(object)) => object,
        _ => Map::new(),
    };
    let mut normalized = Map::new();
    normalized.insert("name".to_owned(), Value::String(upstream_name.to_owned()));
    for (mcp, snake, _) in DEFINITION_FIELDS {
        let value = written
            .remove(mcp)
            .or_else(|| snake.and_then(|snake| written.remove(snake)));
        if let Some(value) = value.filter(|value| !value.is_null()) {
            normalized.insert(mcp.to_owned(), value);
        }
    }
    normalized
}

/// Whether `bytes` (UTF-8) may hold an invisible character ([`is_invisible`]); `false` means
/// they hold none. Every such character is outside ASCII and its UTF-8 starts with one of four
/// bytes, which a pass the compiler vectorizes finds; only text that has one is decoded.
fn may_hold_invisible(bytes: &[u8]) -> bool {
    if bytes.is_ascii() {
        return false;
    }
    let lead = |byte: u8| matches!(byte, 0xD8 | 0xE2 | 0xEF | 0xF3);
    let any_lead = bytes
        .chunks(64)
        .any(|chunk| chunk.iter().fold(false, |found, &byte| found | lead(byte)));
    any_lead && std::str::from_utf8(bytes).map_or(true, |text| text.chars().any(is_invisible))
}

#[cfg(test)]
mod unit {
    use super::{IN_CANONICAL_ORDER, SCRATCH_KEPT, give_back, may_hold_invisible, take_scratch};

    /// The thread's buffer is reused up to its limit, and dropped beyond it.
    #[test]
    fn a_huge_scratch_buffer_is_not_kept() {
        give_back(Vec::with_capacity(4096));
        assert!(take_scratch().capacity() >= 4096);
        give_back(Vec::with_capacity(SCRATCH_KEPT + 1));
        assert_eq!(take_scratch().capacity(), 0);
    }

    #[test]
    fn the_preimage_order_is_rfc_8785_order_of_the_hashed_members() {
        let mut sorted = jcs_digest::TOOL_DEFINITION_MEMBERS;
        sorted.sort_unstable();
        assert_eq!(sorted, IN_CANONICAL_ORDER);
    }

    /// Every invisible character is found, whatever is around it; text without one is not
    /// flagged, even with the same lead bytes (U+2014 EM DASH starts with 0xE2).
    #[test]
    fn invisible_characters_are_found_in_canonical_bytes() {
        let invisible = [
            '\u{061C}',
            '\u{200B}',
            '\u{200C}',
            '\u{200D}',
            '\u{200E}',
            '\u{200F}',
            '\u{202A}',
            '\u{202E}',
            '\u{2060}',
            '\u{2066}',
            '\u{2069}',
            '\u{FEFF}',
            '\u{E0000}',
            '\u{E0069}',
            '\u{E007F}',
        ];
        for c in invisible {
            for padding in [0, 1, 63, 64, 65, 200] {
                let text = format!("\"{}{c}x\"", "a".repeat(padding));
                assert!(may_hold_invisible(text.as_bytes()), "{c:?} after {padding}");
            }
        }
        for clean in ["\"plain\"", "\"résumé — 日本語 🚀 \u{0600} \u{FEFE}\"", ""] {
            assert!(!may_hold_invisible(clean.as_bytes()), "{clean}");
        }
    }
}
