//! `--policy` in a build without Cedar (cargo feature `cedar` off): every policy file is
//! refused at start, so no gateway ever runs believing it enforces a policy it does not.

use std::convert::Infallible;
use std::path::Path;

use catalog_store::CatalogEntry;

use super::Principal;
pub use super::policy_types::{PolicyDecision, PolicyError};

/// A Cedar policy set; none can exist in this build.
#[derive(Debug)]
pub struct ToolPolicy {
    never: Infallible,
}

impl ToolPolicy {
    /// Always [`PolicyError::Unavailable`].
    ///
    /// # Errors
    ///
    /// Always: this build has no Cedar.
    pub fn from_file(path: &Path) -> Result<ToolPolicy, PolicyError> {
        Err(PolicyError::Unavailable {
            path: path.display().to_string(),
        })
    }

    /// Always [`PolicyError::Unavailable`] (the schema is not read).
    ///
    /// # Errors
    ///
    /// Always: this build has no Cedar.
    pub fn from_files(path: &Path, _schema: Option<&Path>) -> Result<ToolPolicy, PolicyError> {
        Self::from_file(path)
    }

    /// Always [`PolicyError::Unavailable`].
    ///
    /// # Errors
    ///
    /// Always: this build has no Cedar.
    pub fn with_schema(
        _text: &str,
        origin: &str,
        _schema: &str,
        _schema_origin: &str,
    ) -> Result<ToolPolicy, PolicyError> {
        Err(PolicyError::Unavailable {
            path: origin.to_owned(),
        })
    }

    /// Always [`PolicyError::Unavailable`].
    ///
    /// # Errors
    ///
    /// Always: this build has no Cedar.
    pub fn from_text(_text: &str, origin: &str) -> Result<ToolPolicy, PolicyError> {
        Err(PolicyError::Unavailable {
            path: origin.to_owned(),
        })
    }

    /// Never called: no `ToolPolicy` exists in this build.
    pub fn decide(&self, _: &Principal, _: &CatalogEntry, _: &str) -> PolicyDecision {
        match self.never {}
    }
}
