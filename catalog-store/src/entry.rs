//! One catalog entry: a tool name bound to one server and one approved definition (seed 003 §2).

use std::ffi::OsStr;
use std::fmt;
use std::sync::{Arc, OnceLock};

use catalog_key::ToolKey;
use jcs_digest::Digest;
use serde_json::Value;
use server_identity::UtcTimestamp;

use crate::added_at::check_rfc3339;
use crate::binding::{ServerBinding, ServerSketch};
use crate::code_points::CodePoints;
use crate::definition::{DefinitionRead, check_definition, entry_upstream_name, normalized_value};
use crate::document::ElementRead;
use crate::error::CatalogError;
use crate::location::{child, element};
use crate::members::{EntryAt, Field, Problems, json_type};
use crate::server::ServersRead;
use crate::small::{SmallObject, SmallValue};

/// The members an entry may carry.
pub(crate) const ENTRY_MEMBERS: &[&str] = &[
    "tool_name",
    "upstream_name",
    "server",
    "approved_definition",
    "definition_hash",
    "added_at",
    "approved_by",
];

const WHY_ENTRY: &str = "A typo in a security file must not load quietly: fix or remove it";

/// One validated catalog entry.
///
/// Equal entries have equal members, the normalized definition compared as a value.
#[derive(Clone)]
pub struct CatalogEntry {
    tool_name: String,
    upstream_name: String,
    key: ToolKey,
    /// Shared with the other entries that write their server alike (`ServersRead`).
    server: Arc<ServerBinding>,
    approved_definition: LazyDefinition,
    definition_hash: Digest,
    added_at: String,
    added_at_utc: UtcTimestamp,
    approved_by: String,
}

impl CatalogEntry {
    /// `tool_name`: the name clients call the tool by, unique in the catalog.
    pub fn tool_name(&self) -> &str {
        &self.tool_name
    }

    /// `upstream_name`: the name the upstream serves the tool under (`tool_name` when absent).
    /// Calls are forwarded under this name.
    pub fn upstream_name(&self) -> &str {
        &self.upstream_name
    }

    /// The catalog key of `tool_name` (seed 000 §4), under which the entry is measured.
    pub fn key(&self) -> &ToolKey {
        &self.key
    }

    /// The server the tool is bound to.
    pub fn server(&self) -> &ServerBinding {
        &self.server
    }

    /// The approved definition, normalized: MCP member names only (`inputSchema`, not
    /// `input_schema`), `null` members dropped, and `"name"` = [`upstream_name`](Self::upstream_name).
    ///
    /// This is what a live `tools/list` entry must hash to, and what the gateway serves to
    /// clients after setting `"name"` to [`tool_name`](Self::tool_name).
    ///
    /// Built from the definition's bytes on the first call (a load checks and digests them
    /// without building it), then kept.
    pub fn approved_definition(&self) -> &Value {
        let LazyDefinition { written, value } = &self.approved_definition;
        value.get_or_init(|| Value::Object(normalized_value(written, &self.upstream_name)))
    }

    /// `definition_hash`, checked at load to be the digest of
    /// [`approved_definition`](Self::approved_definition) (label `trace.mcp-tool-definition.v1`).
    pub fn definition_hash(&self) -> Digest {
        self.definition_hash
    }

    /// `added_at`, an RFC 3339 date-time, as written.
    pub fn added_at(&self) -> &str {
        &self.added_at
    }

    /// `added_at`, parsed: the instant in UTC, to compare or print canonically.
    pub fn added_at_utc(&self) -> UtcTimestamp {
        self.added_at_utc
    }

    /// `approved_by`, as written.
    pub fn approved_by(&self) -> &str {
        &self.approved_by
    }
}

impl PartialEq for CatalogEntry {
    fn eq(&self, other: &CatalogEntry) -> bool {
        self.tool_name == other.tool_name
            && self.upstream_name == other.upstream_name
            && self.key == other.key
            && self.server == other.server
            && self.definition_hash == other.definition_hash
            && self.added_at == other.added_at
            && self.added_at_utc == other.added_at_utc
            && self.approved_by == other.approved_by
            && self.approved_definition() == other.approved_definition()
    }
}

impl Eq for CatalogEntry {}

impl fmt::Debug for CatalogEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CatalogEntry")
            .field("tool_name", &self.tool_name)
            .field("upstream_name", &self.upstream_name)
            .field("key", &self.key)
            .field("server", &self.server)
            .field("approved_definition", self.approved_definition())
            .field("definition_hash", &self.definition_hash)
            .field("added_at", &self.added_at)
            .field("added_at_utc", &self.added_at_utc)
            .field("approved_by", &self.approved_by)
            .finish()
    }
}

/// An approved definition as it was written (checked strictly, valid), and its normalized
/// value once built.
///
/// Kept as bytes because a load needs no `Value` of it (the checks, the digest and the search
/// for invisible characters run on what the streaming reader read), and a tree per schema,
/// allocated and freed, was about half of the time a load took.
#[derive(Clone)]
struct LazyDefinition {
    written: Box<[u8]>,
    value: OnceLock<Value>,
}

/// A valid entry, and whether its approved definition may hold invisible characters (when
/// not, it is not searched).
pub(crate) struct ReadEntry {
    pub(crate) entry: CatalogEntry,
    pub(crate) may_hold_invisible: bool,
}

/// What the collision and server identity checks need from an invalid entry whose
/// `tool_name` is readable. A valid entry needs none: they read it from the entry itself
/// ([`Sketch::Valid`]), so that its name and server are not copied for them.
pub(crate) struct EntrySketch {
    pub(crate) index: usize,
    pub(crate) tool_name: String,
    pub(crate) server: SketchedServer,
}

/// The `server` of an invalid entry.
pub(crate) enum SketchedServer {
    /// The `server` object is valid (the rest of the entry is not).
    Bound(Arc<ServerBinding>),
    /// The `server` object is missing or invalid: what a collision report says of it.
    Unbound(ServerSketch),
}

/// Each entry as the checks between entries see it, in file order.
pub(crate) enum Sketch {
    /// A valid entry, at `position` in the catalog's entries.
    Valid {
        index: usize,
        position: usize,
    },
    Invalid(EntrySketch),
}

/// An entry as the checks between entries read it, from its [`Sketch`].
pub(crate) struct SketchView<'a> {
    pub(crate) index: usize,
    pub(crate) tool_name: &'a str,
    /// The server binding, when the `server` object is valid (the rest of the entry may not be).
    pub(crate) binding: Option<&'a ServerBinding>,
    unbound: Option<&'a ServerSketch>,
}

impl Sketch {
    /// `entries` are the catalog's valid entries, in file order.
    pub(crate) fn view<'a>(&'a self, entries: &'a [CatalogEntry]) -> Option<SketchView<'a>> {
        match self {
            Sketch::Valid { index, position } => {
                let entry = entries.get(*position)?;
                Some(SketchView {
                    index: *index,
                    tool_name: entry.tool_name(),
                    binding: Some(entry.server()),
                    unbound: None,
                })
            }
            Sketch::Invalid(sketch) => {
                let (binding, unbound) = match &sketch.server {
                    SketchedServer::Bound(binding) => (Some(&**binding), None),
                    SketchedServer::Unbound(unbound) => (None, Some(unbound)),
                };
                Some(SketchView {
                    index: sketch.index,
                    tool_name: &sketch.tool_name,
                    binding,
                    unbound,
                })
            }
        }
    }
}

impl SketchView<'_> {
    /// What a collision report says of the entry's server: its URL (or command) and identity.
    pub(crate) fn server_sketch(&self) -> ServerSketch {
        match (self.binding, self.unbound) {
            (Some(binding), _) => ServerSketch::of_binding(binding),
            (None, Some(unbound)) => unbound.clone(),
            (None, None) => ServerSketch::no_server(),
        }
    }
}

/// Reads entry `index` of the array at `entries_pointer`; records every problem in `errors`.
/// `path_var` is the gateway's `PATH` (local servers' bare programs are looked up on it).
pub(crate) fn read_entry<'a>(
    index: usize,
    read: &ElementRead<'a>,
    entries_pointer: &str,
    errors: &mut Vec<CatalogError>,
    servers: &ServersRead<'a>,
    path_var: Option<&OsStr>,
) -> (Option<ReadEntry>, Option<EntrySketch>) {
    let pointer = element(entries_pointer, index);
    let (entry, definition, server_written) = match read {
        ElementRead::Entry {
            members,
            definition,
            server_written,
        } => (members, definition, *server_written),
        ElementRead::NotAnObject(found) => {
            let mut problems = Problems {
                entry: Some(EntryAt {
                    index,
                    tool_name: None,
                }),
                errors,
            };
            problems.wrong_type_of(pointer, "an object (a catalog entry)", *found);
            return (None, None);
        }
    };
    let named = entry.get("tool_name").and_then(SmallValue::as_str);
    let mut problems = Problems {
        entry: Some(EntryAt {
            index,
            tool_name: named,
        }),
        errors,
    };
    let errors_before = problems.errors.len();
    problems.refuse_unknown_members(entry, &pointer, ENTRY_MEMBERS, WHY_ENTRY);

    // Names stay borrowed from what was read until the entry proves valid: copied once then.
    let tool_name = problems.required_string(
        entry,
        &pointer,
        "tool_name",
        "give the name clients call the tool by, e.g. \"salesforce.query\"",
    );
    if let Field::Valid(name) = tool_name {
        refuse_control_characters(&mut problems, name, &pointer, "tool_name");
    }
    let upstream_name = match problems.optional_string(
        entry,
        &pointer,
        "upstream_name",
        "give the name the upstream serves the tool under, or remove the member to use tool_name",
    ) {
        Field::Absent => tool_name,
        other => other,
    };

    if let (Field::Valid(name), Some(SmallValue::String(_))) =
        (upstream_name, entry.get("upstream_name"))
    {
        refuse_control_characters(&mut problems, name, &pointer, "upstream_name");
    }

    let server = server_object(&mut problems, entry, &pointer).map(|server| {
        let server_pointer = || child(&pointer, "server");
        servers.read(
            &mut problems,
            server,
            server_written,
            server_pointer,
            path_var,
        )
    });

    let definition_pointer = child(&pointer, "approved_definition");
    let upstream = upstream_name.valid();
    // The definition was digested with this name as its entry was read.
    debug_assert_eq!(upstream, entry_upstream_name(entry));
    let recomputed = match definition {
        Some(DefinitionRead::Object(definition)) => {
            check_definition(&mut problems, definition, &definition_pointer, upstream)
                .map(|digest| (definition, digest))
        }
        Some(DefinitionRead::Other(found)) => {
            problems.wrong_type_of(definition_pointer, "an object", *found);
            None
        }
        None => {
            let at = problems.at(definition_pointer);
            problems.push(CatalogError::MissingMember {
                at,
                member: "approved_definition",
                hint: "add the tool definition you approved (description, inputSchema, ...)",
            });
            None
        }
    };
    let definition_hash = check_definition_hash(
        &mut problems,
        entry,
        &pointer,
        recomputed.as_ref().map(|(_, digest)| *digest),
        upstream.unwrap_or_default(),
    );

    let added_at = problems.required_string(
        entry,
        &pointer,
        "added_at",
        "give the approval time in RFC 3339, e.g. \"2026-06-01T00:00:00Z\"",
    );
    let added_at_utc = match added_at {
        Field::Valid(text) => match check_rfc3339(text) {
            Ok(time) => Some(time),
            Err(reason) => {
                let at = problems.at(child(&pointer, "added_at"));
                problems.push(CatalogError::BadAddedAt {
                    at,
                    value: text.to_owned(),
                    reason,
                });
                None
            }
        },
        Field::Absent | Field::Invalid => None,
    };
    let approved_by = problems.required_string(
        entry,
        &pointer,
        "approved_by",
        "name who approved this binding, e.g. \"security@example.com\"",
    );

    let valid = problems.errors.len() == errors_before;
    let server = match (
        valid,
        (tool_name, upstream_name, recomputed, definition_hash),
        (added_at, added_at_utc, approved_by),
        server,
    ) {
        (
            true,
            (
                Field::Valid(tool_name),
                Field::Valid(upstream_name),
                Some((definition, _)),
                Some(hash),
            ),
            (Field::Valid(added_at), Some(added_at_utc), Field::Valid(approved_by)),
            Some(Ok(server)),
        ) => {
            let read = ReadEntry {
                may_hold_invisible: definition.may_hold_invisible(upstream_name),
                entry: CatalogEntry {
                    key: ToolKey::from_name(tool_name),
                    tool_name: tool_name.to_owned(),
                    upstream_name: upstream_name.to_owned(),
                    server,
                    approved_definition: LazyDefinition {
                        written: definition.span().into(),
                        value: OnceLock::new(),
                    },
                    definition_hash: hash,
                    added_at: added_at.to_owned(),
                    added_at_utc,
                    approved_by: approved_by.to_owned(),
                },
            };
            return (Some(read), None);
        }
        (.., server) => server,
    };
    let sketch = tool_name.valid().map(|tool_name| EntrySketch {
        index,
        tool_name: tool_name.to_owned(),
        server: match server {
            Some(Ok(binding)) => SketchedServer::Bound(binding),
            Some(Err(sketch)) => SketchedServer::Unbound(sketch),
            None => SketchedServer::Unbound(ServerSketch::no_server()),
        },
    });
    (None, sketch)
}

/// The `server` member, which must be an object.
fn server_object<'v, 's>(
    problems: &mut Problems<'_>,
    entry: &'v SmallObject<'s>,
    pointer: &str,
) -> Option<&'v SmallObject<'s>> {
    match entry.get("server") {
        Some(SmallValue::Object(object)) => Some(object),
        Some(other) => {
            problems.wrong_type(child(pointer, "server"), "an object", other);
            None
        }
        None => {
            let at = problems.at(child(pointer, "server"));
            problems.push(CatalogError::MissingMember {
                at,
                member: "server",
                hint: "add {\"url\": \"https://...\", \"tls_fingerprint\": \"SHA256:...\"}",
            });
            None
        }
    }
}

/// `definition_hash` is required, and must be the digest of the normalized definition.
///
/// Required rather than computed when absent: approving a definition is a decision, and the
/// hash written next to it records which definition was decided on. When it is missing or
/// wrong, the error shows the value to paste.
fn check_definition_hash(
    problems: &mut Problems<'_>,
    entry: &SmallObject<'_>,
    pointer: &str,
    recomputed: Option<Digest>,
    upstream_name: &str,
) -> Option<Digest> {
    // Built only for a problem: most entries have none.
    let at = |problems: &Problems<'_>| problems.at(child(pointer, "definition_hash"));
    let text = match entry.get("definition_hash") {
        None => {
            let at = at(problems);
            if let Some(recomputed) = recomputed {
                problems.push(CatalogError::MissingDefinitionHash { at, recomputed });
            } else {
                problems.push(CatalogError::MissingMember {
                    at,
                    member: "definition_hash",
                    hint: "fix approved_definition first; the error will then show the value to add",
                });
            }
            return None;
        }
        Some(SmallValue::String(text)) => text,
        Some(other) => {
            let found = json_type(other);
            problems.push(CatalogError::WrongType {
                at: at(problems),
                expected: "a string",
                found,
            });
            return None;
        }
    };
    let stored = match text.parse::<Digest>() {
        Ok(stored) => stored,
        Err(source) => {
            problems.push(CatalogError::BadDefinitionHash {
                at: at(problems),
                value: text.to_string(),
                source,
                recomputed,
            });
            return None;
        }
    };
    match recomputed {
        Some(recomputed) if recomputed != stored => {
            problems.push(CatalogError::DefinitionHashMismatch {
                at: at(problems),
                stored,
                recomputed,
                upstream_name: upstream_name.to_owned(),
            });
            None
        }
        _ => Some(stored),
    }
}

/// A name with control characters (C0, DEL, C1: `char::is_control`) is refused: it is shown
/// to people and models and written to logs, where such characters hide or forge text.
fn refuse_control_characters(
    problems: &mut Problems<'_>,
    name: &str,
    pointer: &str,
    member: &'static str,
) {
    // Printable ASCII (most names) holds none: not decoded.
    if name.bytes().all(|byte| matches!(byte, b' '..=b'~')) {
        return;
    }
    let code_points = CodePoints::of(name, char::is_control);
    if !code_points.is_empty() {
        let at = problems.at(child(pointer, member));
        problems.push(CatalogError::ControlCharacters {
            at,
            member,
            code_points,
        });
    }
}
