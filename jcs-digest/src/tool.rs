//! The per-tool definition digest (seed 000 §3, docs/design.md §2).
//!
//! The preimage `{"profile":LABEL,"tool":{…}}` is written directly in canonical form: the
//! wrapper's two names and the six member names are fixed ASCII, so their order is known and
//! the tool is never cloned into a wrapper value.

use std::fmt;
use std::str::FromStr;

use serde_json::Value;

use crate::canonical::{self, CanonicalizeError};
use crate::digest::Digest;

/// The members of a tool definition that are hashed, in the seed's order (§3, step 1).
pub const TOOL_DEFINITION_MEMBERS: [&str; 6] = [
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
];

/// The same members in RFC 8785 order (all ASCII, so byte order), each with its JSON Pointer.
const MEMBERS_IN_CANONICAL_ORDER: [(&str, &str); 6] = [
    ("annotations", "/annotations"),
    ("description", "/description"),
    ("inputSchema", "/inputSchema"),
    ("name", "/name"),
    ("outputSchema", "/outputSchema"),
    ("title", "/title"),
];

/// The label a tool definition digest is computed under; part of the preimage.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Profile {
    /// `trace.mcp-tool-definition.v1`, the seed's own label and the default.
    #[default]
    Trace,
    /// `agentavow.mcp-tool-definition.v1`: the same derivation under AgentAvow's label.
    AgentAvow,
}

impl Profile {
    /// Every profile, default first.
    pub const ALL: [Profile; 2] = [Profile::Trace, Profile::AgentAvow];

    /// The label carried literally in the preimage.
    pub const fn label(self) -> &'static str {
        match self {
            Profile::Trace => "trace.mcp-tool-definition.v1",
            Profile::AgentAvow => "agentavow.mcp-tool-definition.v1",
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

impl FromStr for Profile {
    type Err = UnknownProfile;

    /// Accepts exactly one of the labels (no trimming, no case folding).
    fn from_str(label: &str) -> Result<Self, Self::Err> {
        Profile::ALL
            .into_iter()
            .find(|profile| profile.label() == label)
            .ok_or_else(|| UnknownProfile {
                input: label.to_owned(),
            })
    }
}

/// A text that is not the label of any [`Profile`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown tool definition profile {input:?}; use \"trace.mcp-tool-definition.v1\" \
     (the default) or \"agentavow.mcp-tool-definition.v1\""
)]
pub struct UnknownProfile {
    input: String,
}

impl UnknownProfile {
    /// The text that was given.
    pub fn input(&self) -> &str {
        &self.input
    }
}

/// Why a tool definition has no digest.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ToolDigestError {
    /// The tool definition is not a JSON object.
    #[error(
        "a tool definition must be a JSON object, found {found}; pass one element of the \
         `tools` array of a tools/list result"
    )]
    NotAnObject {
        /// `"array"`, `"string"`, `"number"`, `"boolean"` or `"null"`.
        found: &'static str,
    },
    /// A hashed member cannot be canonicalized; its pointer is relative to the tool.
    #[error("the tool definition has no digest: {0}")]
    Canonicalize(#[from] CanonicalizeError),
}

/// The per-tool definition digest: SHA-256 of [`tool_definition_preimage`], as
/// `sha256:<hex>` when displayed.
///
/// # Errors
///
/// As [`tool_definition_preimage`].
pub fn tool_definition_digest(tool: &Value, profile: Profile) -> Result<Digest, ToolDigestError> {
    tool_definition_preimage(tool, profile).map(|preimage| Digest::of(&preimage))
}

/// The bytes that are hashed: the RFC 8785 form of
/// `{"profile": LABEL, "tool": <tool restricted to TOOL_DEFINITION_MEMBERS>}`.
///
/// A member that is absent or `null` is omitted; every other value is kept, `""`, `{}` and
/// `false` included. `_meta` and members outside the six are never hashed.
///
/// # Errors
///
/// [`ToolDigestError::NotAnObject`] when `tool` is not an object;
/// [`ToolDigestError::Canonicalize`] when a kept member holds an integer outside ±(2^53−1)
/// (the pointer in it is relative to `tool`, e.g. `/inputSchema/maximum`).
pub fn tool_definition_preimage(
    tool: &Value,
    profile: Profile,
) -> Result<Vec<u8>, ToolDigestError> {
    let members = tool.as_object().ok_or(ToolDigestError::NotAnObject {
        found: json_type(tool),
    })?;
    let mut out = Vec::with_capacity(512);
    out.extend_from_slice(b"{\"profile\":");
    canonical::write_string(profile.label(), &mut out);
    out.extend_from_slice(b",\"tool\":{");
    let mut first = true;
    for (name, pointer) in MEMBERS_IN_CANONICAL_ORDER {
        let Some(member) = members.get(name).filter(|member| !member.is_null()) else {
            continue;
        };
        if !first {
            out.push(b',');
        }
        first = false;
        canonical::write_string(name, &mut out);
        out.push(b':');
        canonical::write_value(member, &mut out, pointer)?;
    }
    out.extend_from_slice(b"}}");
    Ok(out)
}

/// The JSON type of `value`, as error messages name it.
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}
