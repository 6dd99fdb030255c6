//! One upstream `tools/list`, its tools by name with their digests (computed as the bytes were
//! read, or as checks need them for definitions given as values), and the check of one tool
//! against it.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use jcs_digest::{
    Digest, Profile, StreamedTool, ToolDigestError, ToolName, tool_definition_digest,
};
use serde_json::Value;

use super::listed::{ListedTool, ListedTools};
use crate::audit::DenialReason;

/// A live definition that matched its approved digest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VerifiedDefinition {
    digest: Digest,
    listing_started: Instant,
}

impl VerifiedDefinition {
    /// The digest of the live definition (equal to the approved `definition_hash`).
    pub fn digest(&self) -> Digest {
        self.digest
    }

    /// When the `tools/list` request it was read from was started.
    pub fn listing_started(&self) -> Instant {
        self.listing_started
    }
}

/// Why a live definition is refused. Every variant but [`DefinitionCheckError::Fetch`],
/// [`DefinitionCheckError::WaitTimeout`] and [`DefinitionCheckError::Interrupted`] is a
/// `definition_mismatch` (docs/design.md §5: also when the tool is absent).
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum DefinitionCheckError<E> {
    /// The live definition hashes to another digest: the tool changed after it was approved.
    #[error(
        "the live definition of {tool:?} does not match the approved one: expected {expected}, \
         observed {observed}; the upstream changed the tool after it was approved. Compare the \
         definitions (`toolgate diff`) and approve the new one in the catalog if the change is \
         intended"
    )]
    Mismatch {
        /// The upstream's name for the tool.
        tool: String,
        /// The approved `definition_hash`.
        expected: Digest,
        /// The digest of the live definition.
        observed: Digest,
    },
    /// The upstream's listing has no tool by that name.
    #[error(
        "the upstream does not serve {tool:?}: its tools/list holds {listed} tools and none has \
         that name (expected a definition with digest {expected}); the tool was removed or \
         renamed upstream, so the catalog entry no longer describes it"
    )]
    Absent {
        /// The upstream's name for the tool.
        tool: String,
        /// The approved `definition_hash`.
        expected: Digest,
        /// How many tools the listing holds.
        listed: usize,
    },
    /// The upstream serves several tools under the name, so it does not say which one a call
    /// would reach.
    #[error(
        "the upstream serves {count} tools named {tool:?} (digests: {}); a name must identify \
         one definition, so none of them is accepted (expected one with digest {expected})",
        digest_list(observed)
    )]
    Duplicate {
        /// The upstream's name for the tool.
        tool: String,
        /// The approved `definition_hash`.
        expected: Digest,
        /// How many tools have that name.
        count: usize,
        /// The digests of those that have one, in listing order.
        observed: Vec<Digest>,
    },
    /// The live definition cannot be digested (docs/design.md §2: a tool that cannot be
    /// canonicalized has no digest).
    #[error(
        "the live definition of {tool:?} has no digest, so it cannot match the approved \
         {expected}: {source}"
    )]
    Undigestible {
        /// The upstream's name for the tool.
        tool: String,
        /// The approved `definition_hash`.
        expected: Digest,
        /// Why it has none.
        source: ToolDigestError,
    },
    /// The listing could not be fetched: the fetch's own error, shared by every call that
    /// waited for that listing.
    #[error("cannot list the upstream's tools: {0}")]
    Fetch(Arc<E>),
    /// The listing this check needed did not finish within the check's wait limit
    /// ([`super::LiveDefinitions::with_wait_limit`]); the call was not checked.
    #[error(
        "the upstream's tools/list did not finish within the {} ms a check waits for it; the \
         call was not checked (the upstream is listing slowly, or many calls share its listing)",
        limit.as_millis()
    )]
    WaitTimeout {
        /// The wait limit.
        limit: Duration,
    },
    /// The listing was abandoned before it finished (its task stopped: the runtime is shutting
    /// down, or the fetch panicked).
    #[error(
        "the upstream's tools/list was abandoned before it finished; the call was not checked, try again"
    )]
    Interrupted,
}

impl<E> DefinitionCheckError<E> {
    /// The audit and `error.data.reason` of the refusal: `definition_mismatch` for a
    /// definition that does not match (or is absent, doubled, undigestible),
    /// `upstream_unavailable` for [`DefinitionCheckError::Interrupted`], `upstream_error` for a
    /// listing that broke its bound ([`DefinitionCheckError::WaitTimeout`]), and `None` for
    /// [`DefinitionCheckError::Fetch`], whose error the caller classifies.
    pub fn denial_reason(&self) -> Option<DenialReason> {
        match self {
            DefinitionCheckError::Mismatch { .. }
            | DefinitionCheckError::Absent { .. }
            | DefinitionCheckError::Duplicate { .. }
            | DefinitionCheckError::Undigestible { .. } => Some(DenialReason::DefinitionMismatch),
            DefinitionCheckError::Interrupted => Some(DenialReason::UpstreamUnavailable),
            DefinitionCheckError::WaitTimeout { .. } => Some(DenialReason::UpstreamError),
            DefinitionCheckError::Fetch(_) => None,
        }
    }

    /// The digest of the live definition, when there is exactly one and it has one (for the
    /// audit entry's `observed_definition`).
    pub fn observed(&self) -> Option<Digest> {
        match self {
            DefinitionCheckError::Mismatch { observed, .. } => Some(*observed),
            _ => None,
        }
    }
}

fn digest_list(digests: &[Digest]) -> String {
    if digests.is_empty() {
        return "none has one".to_owned();
    }
    digests
        .iter()
        .map(Digest::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// One live definition of a listing. A definition read as a value is digested when a check
/// first needs it (a call digests the tool it calls, and every later check of the same listing
/// reuses the digest); one read from the bytes was digested as it was read.
#[derive(Debug)]
enum LiveDefinition {
    Value {
        definition: Value,
        digest: OnceLock<Result<Digest, ToolDigestError>>,
    },
    Streamed(Digest),
}

impl LiveDefinition {
    fn digest(&self) -> Result<Digest, &ToolDigestError> {
        match self {
            // The default profile: the one `definition_hash` is computed under (docs/design.md §4).
            LiveDefinition::Value { definition, digest } => digest
                .get_or_init(|| tool_definition_digest(definition, Profile::Trace))
                .as_ref()
                .copied(),
            LiveDefinition::Streamed(digest) => Ok(*digest),
        }
    }
}

/// One listing: the live definitions by upstream name, shared by every check that uses the
/// listing (so a drifted tool does not stop the upstream's other tools).
#[derive(Debug)]
pub(crate) struct Listing {
    pub(crate) started_at: Instant,
    pub(crate) generation: u64,
    /// By upstream name, in listing order; more than one element is a duplicate.
    tools: HashMap<String, Vec<LiveDefinition>>,
    listed: usize,
}

impl Listing {
    /// Indexes `tools` by name. A tool whose `name` is not a string cannot be looked up by any
    /// catalog entry and is only counted.
    pub(crate) fn new(tools: ListedTools, started_at: Instant, generation: u64) -> Listing {
        let listed = tools.len();
        let mut by_name: HashMap<String, Vec<LiveDefinition>> = HashMap::new();
        for tool in tools.into_tools() {
            let (name, live) = match tool {
                ListedTool::Value(definition) => {
                    let Some(name) = definition.get("name").and_then(Value::as_str) else {
                        continue;
                    };
                    let name = name.to_owned();
                    let digest = OnceLock::new();
                    (name, LiveDefinition::Value { definition, digest })
                }
                ListedTool::Streamed(StreamedTool::Definition {
                    name: ToolName::Text(name),
                    digest,
                }) => (name, LiveDefinition::Streamed(digest)),
                ListedTool::Streamed(_) => continue,
            };
            by_name.entry(name).or_default().push(live);
        }
        Listing {
            started_at,
            generation,
            tools: by_name,
            listed,
        }
    }

    /// Checks the tool the upstream serves as `upstream_name` against `expected`.
    pub(crate) fn check<E>(
        &self,
        upstream_name: &str,
        expected: &Digest,
    ) -> Result<VerifiedDefinition, DefinitionCheckError<E>> {
        let tool = || upstream_name.to_owned();
        match self.tools.get(upstream_name).map(Vec::as_slice) {
            None | Some([]) => Err(DefinitionCheckError::Absent {
                tool: tool(),
                expected: *expected,
                listed: self.listed,
            }),
            Some([live]) => match live.digest() {
                Ok(observed) if observed == *expected => Ok(VerifiedDefinition {
                    digest: observed,
                    listing_started: self.started_at,
                }),
                Ok(observed) => Err(DefinitionCheckError::Mismatch {
                    tool: tool(),
                    expected: *expected,
                    observed,
                }),
                Err(error) => Err(DefinitionCheckError::Undigestible {
                    tool: tool(),
                    expected: *expected,
                    source: error.clone(),
                }),
            },
            Some(several) => Err(DefinitionCheckError::Duplicate {
                tool: tool(),
                expected: *expected,
                count: several.len(),
                observed: several
                    .iter()
                    .filter_map(|live| live.digest().ok())
                    .collect(),
            }),
        }
    }
}
