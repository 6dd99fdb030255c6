//! The difference between two catalogs, tool by tool (seed 000 §8, "drift changes one line").

use catalog_key::ToolKey;
use jcs_digest::Digest;

use crate::catalog::CatalogDigest;

/// A tool present in both catalogs whose digest changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangedTool {
    /// The tool's key.
    pub key: ToolKey,
    /// Its digest in the old catalog.
    pub old: Digest,
    /// Its digest in the new catalog.
    pub new: Digest,
}

/// The tools added, removed and changed between two catalogs, each list sorted by key.
///
/// The diff compares the per-tool maps ([`CatalogDigest::tools`]), so it names tools beyond
/// the 500 kept by the overflow rule too. Both catalogs should be digested under the same
/// profile: across profiles every common tool shows as changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CatalogDiff {
    added: Vec<(ToolKey, Digest)>,
    removed: Vec<(ToolKey, Digest)>,
    changed: Vec<ChangedTool>,
}

impl CatalogDiff {
    /// What changed from `old` to `new`.
    pub fn between(old: &CatalogDigest, new: &CatalogDigest) -> CatalogDiff {
        let (old, new) = (old.tools(), new.tools());
        let mut diff = CatalogDiff::default();
        for (key, &old_digest) in old {
            match new.get(key) {
                None => diff.removed.push((key.clone(), old_digest)),
                Some(&new_digest) if new_digest != old_digest => diff.changed.push(ChangedTool {
                    key: key.clone(),
                    old: old_digest,
                    new: new_digest,
                }),
                Some(_) => {}
            }
        }
        diff.added = new
            .iter()
            .filter(|(key, _)| !old.contains_key(*key))
            .map(|(key, digest)| (key.clone(), *digest))
            .collect();
        diff
    }

    /// Tools in the new catalog only, with their digests.
    pub fn added(&self) -> &[(ToolKey, Digest)] {
        &self.added
    }

    /// Tools in the old catalog only, with their digests.
    pub fn removed(&self) -> &[(ToolKey, Digest)] {
        &self.removed
    }

    /// Tools in both catalogs whose digests differ.
    pub fn changed(&self) -> &[ChangedTool] {
        &self.changed
    }

    /// Whether the two catalogs have the same tools with the same digests.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}
