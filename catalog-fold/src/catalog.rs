//! The catalog digest of one `tools/list`: per-tool digests (seed 000 §3), keys (§4), fold (§5).

use std::collections::BTreeMap;
use std::fmt;

use catalog_key::ToolKey;
use jcs_digest::{CanonicalizeError, Digest, Profile, StreamedTool, ToolDigestError, ToolName};
use serde_json::Value;

use crate::document::{DocumentError, json_type};
use crate::fold::{Fold, fold};

/// The result of digesting one catalog: the per-tool digests, the fold text and the catalog
/// digest, all under one [`Profile`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogDigest {
    profile: Profile,
    fold: Fold,
}

impl CatalogDigest {
    /// Digests every tool definition in `tools` and folds them into the catalog digest.
    ///
    /// Each element must be a JSON object. Its key comes from `name`: absent, `null` or `""`
    /// gives `tool:unnamed`; a `name` that is present but not a string is an error for that
    /// tool (docs/design.md §2). Its digest is [`jcs_digest::tool_definition_digest`] under
    /// `profile`. The fold's duplicate and overflow texts use the same profile's label
    /// (`<label>.duplicates`, `<label>.overflow`; docs/design.md §2).
    ///
    /// Nothing is skipped: if any tool has no key or no digest, the catalog has no digest,
    /// and the [`CatalogError`] lists every such tool.
    pub fn compute(tools: &[Value], profile: Profile) -> Result<CatalogDigest, CatalogError> {
        Self::from_entries(tools.iter().map(|tool| digest_tool(tool, profile)), profile)
    }

    /// Reads a `tools/list` document and digests it tool by tool from the bytes, with no
    /// `Value` tree ([`stream_tools_document`](crate::stream_tools_document)).
    ///
    /// The result is the one [`read_tools_document`](crate::read_tools_document) followed by
    /// [`compute`](Self::compute) gives for the same bytes, errors included.
    ///
    /// # Errors
    ///
    /// [`ReadCatalogError::Document`] when the bytes are not a strict `tools/list` document,
    /// [`ReadCatalogError::Catalog`] when a tool has no key or no digest.
    pub fn from_document(
        bytes: &[u8],
        profile: Profile,
    ) -> Result<CatalogDigest, ReadCatalogError> {
        let tools = crate::stream_tools_document(bytes, profile)?;
        Ok(Self::from_streamed(&tools, profile)?)
    }

    /// Folds tools digested by [`stream_tools_document`](crate::stream_tools_document) (or
    /// [`jcs_digest::StreamReader::tool_definition`]) under `profile`, with the keys and
    /// refusals of [`compute`](Self::compute).
    ///
    /// # Errors
    ///
    /// [`CatalogError`] listing every tool without a key.
    pub fn from_streamed(
        tools: &[StreamedTool],
        profile: Profile,
    ) -> Result<CatalogDigest, CatalogError> {
        Self::from_entries(tools.iter().map(streamed_entry), profile)
    }

    fn from_entries(
        tools: impl ExactSizeIterator<
            Item = Result<(ToolKey, Digest), (Option<ToolKey>, ToolErrorReason)>,
        >,
        profile: Profile,
    ) -> Result<CatalogDigest, CatalogError> {
        let mut entries = Vec::with_capacity(tools.len());
        let mut errors = Vec::new();
        for (index, tool) in tools.enumerate() {
            match tool {
                Ok(entry) => entries.push(entry),
                Err((key, reason)) => errors.push(ToolError { index, key, reason }),
            }
        }
        if !errors.is_empty() {
            return Err(CatalogError { tools: errors });
        }
        Ok(Self::from_keyed(entries, profile))
    }

    /// Folds tools already keyed ([`streamed_entry`]), in any order (entries already sorted
    /// are found so in one pass).
    pub(crate) fn from_keyed(entries: Vec<(ToolKey, Digest)>, profile: Profile) -> CatalogDigest {
        CatalogDigest {
            profile,
            fold: fold(entries, profile.label()),
        }
    }

    /// The profile whose label the digests were computed under.
    pub fn profile(&self) -> Profile {
        self.profile
    }

    /// One digest per key, after the duplicate rule and before the overflow rule: every tool
    /// of the catalog is here, even beyond 500 keys.
    pub fn tools(&self) -> &BTreeMap<ToolKey, Digest> {
        self.fold.per_key()
    }

    /// The keys that two or more definitions shared (folded by the duplicate rule), in key
    /// order.
    pub fn duplicate_keys(&self) -> impl Iterator<Item = &ToolKey> {
        self.fold.duplicate_keys().iter()
    }

    /// The catalog digest (seed 000 §5, both edge rules applied).
    pub fn catalog(&self) -> Digest {
        self.fold.digest()
    }

    /// The exact text that was hashed into [`catalog`](Self::catalog): sorted `key=digest`
    /// lines joined by `\n`, without a trailing newline.
    pub fn fold_lines(&self) -> String {
        self.fold.lines().to_owned()
    }

    /// The whole fold, including the `tools:overflow` digest if the overflow rule applied.
    pub fn fold(&self) -> &Fold {
        &self.fold
    }
}

/// The key and digest of one definition, or the key (if it has one) and why it has no digest.
fn digest_tool(
    tool: &Value,
    profile: Profile,
) -> Result<(ToolKey, Digest), (Option<ToolKey>, ToolErrorReason)> {
    let Value::Object(members) = tool else {
        return Err((
            None,
            ToolErrorReason::NotAnObject {
                found: json_type(tool),
            },
        ));
    };
    let key = match members.get("name") {
        None | Some(Value::Null) => ToolKey::unnamed(),
        Some(Value::String(name)) => ToolKey::from_name(name),
        Some(other) => {
            return Err((
                None,
                ToolErrorReason::NameNotAString {
                    found: json_type(other),
                },
            ));
        }
    };
    match jcs_digest::tool_definition_digest(tool, profile) {
        Ok(digest) => Ok((key, digest)),
        Err(ToolDigestError::Canonicalize(error)) => {
            Err((Some(key), ToolErrorReason::Canonicalize(error)))
        }
        Err(error) => Err((Some(key), ToolErrorReason::Digest(error))),
    }
}

/// The key and digest of one streamed definition, refused as [`digest_tool`] refuses.
pub(crate) fn streamed_entry(
    tool: &StreamedTool,
) -> Result<(ToolKey, Digest), (Option<ToolKey>, ToolErrorReason)> {
    match tool {
        StreamedTool::Definition { name, digest } => {
            let key = match name {
                ToolName::Text(name) => ToolKey::from_name(name),
                ToolName::NotAString { found } => {
                    return Err((
                        None,
                        ToolErrorReason::NameNotAString {
                            found: found.with_article(),
                        },
                    ));
                }
                ToolName::Absent => ToolKey::unnamed(),
            };
            Ok((key, *digest))
        }
        StreamedTool::NotAnObject { found } => Err((
            None,
            ToolErrorReason::NotAnObject {
                found: found.with_article(),
            },
        )),
    }
}

/// Why a `tools/list` document read by [`CatalogDigest::from_document`] has no catalog digest.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ReadCatalogError {
    /// The bytes are not a strict `tools/list` document.
    #[error(transparent)]
    Document(#[from] DocumentError),
    /// A tool has no key or no digest.
    #[error(transparent)]
    Catalog(#[from] CatalogError),
}

/// How many tools [`CatalogError`]'s message names before it says how many more there are.
const LISTED_TOOLS: usize = 20;

/// A catalog with at least one tool that has no digest, so the catalog has none either.
///
/// `Display` names each such tool, one per line (the first 20, then how many more), e.g.
/// `tool #2 (tool:ask_wiki_question) has no digest: …`; [`tools`](Self::tools) holds them all.
#[derive(Clone, Debug, PartialEq)]
pub struct CatalogError {
    tools: Vec<ToolError>,
}

impl CatalogError {
    /// Every tool without a digest, in array order (never empty).
    pub fn tools(&self) -> &[ToolError] {
        &self.tools
    }
}

impl fmt::Display for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.tools.len();
        let noun = if count == 1 { "tool has" } else { "tools have" };
        write!(
            f,
            "the catalog has no digest because {count} {noun} none; fix or remove them and digest again:"
        )?;
        // A hostile catalog can hold millions of bad tools; the message names the first ones
        // and `tools()` keeps them all.
        for tool in self.tools.iter().take(LISTED_TOOLS) {
            write!(f, "\n  {tool}")?;
        }
        if count > LISTED_TOOLS {
            write!(f, "\n  … and {} more", count - LISTED_TOOLS)?;
        }
        Ok(())
    }
}

impl std::error::Error for CatalogError {}

/// One tool of a catalog that has no digest.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolError {
    /// The position of the tool in the `tools` array (0-based).
    pub index: usize,
    /// The tool's key, or `None` when it has none (not an object, or a non-string `name`).
    pub key: Option<ToolKey>,
    /// Why the tool has no digest.
    pub reason: ToolErrorReason,
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.key {
            Some(key) => write!(
                f,
                "tool #{} ({key}) has no digest: {}",
                self.index, self.reason
            ),
            None => write!(
                f,
                "tool #{} (no key) has no digest: {}",
                self.index, self.reason
            ),
        }
    }
}

/// Why one tool has no digest.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolErrorReason {
    /// The element of the `tools` array is not a JSON object.
    #[error(
        "it is {found}, not an object; every element of \"tools\" must be a tool definition object"
    )]
    NotAnObject {
        /// The JSON type found, e.g. `a string`.
        found: &'static str,
    },
    /// The `name` member is present but not a string, so the tool has no key (docs/design.md §2).
    #[error(
        "its \"name\" is {found}, not a string; a tool name must be a string (absent, null or \"\" is keyed tool:unnamed)"
    )]
    NameNotAString {
        /// The JSON type found, e.g. `a number`.
        found: &'static str,
    },
    /// A hashed member cannot be canonicalized (seed 000 §2); the pointer in the error is
    /// relative to the tool.
    #[error("{0}")]
    Canonicalize(#[source] CanonicalizeError),
    /// Any other reason [`jcs_digest::tool_definition_digest`] gives.
    #[error("{0}")]
    Digest(#[source] ToolDigestError),
}
