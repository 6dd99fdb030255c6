//! Pieces shared by the commands that digest catalogs.

use std::path::Path;

use catalog_fold::{CatalogDigest, read_tools_document};
use jcs_digest::Profile;

use crate::input::{display_name, read_input};
use crate::outcome::Failure;

/// The profile named by `--label`, or the default (`trace.mcp-tool-definition.v1`).
pub(crate) fn profile_from_label(label: Option<&str>) -> Result<Profile, Failure> {
    match label {
        None => Ok(Profile::default()),
        Some(label) => label
            .parse()
            .map_err(|e| Failure::Usage(format!("--label: {e}"))),
    }
}

/// Reads a tools/list document and digests it. An unreadable file is a usage failure (exit 2);
/// a document that is not a catalog, or a tool that has no digest, is an invalid input (exit 1).
pub(crate) fn digest_file(path: &Path, profile: Profile) -> Result<CatalogDigest, Failure> {
    let bytes = read_input(path)?;
    let name = display_name(path);
    let tools =
        read_tools_document(&bytes).map_err(|e| Failure::Invalid(format!("{name}: {e}")))?;
    CatalogDigest::compute(&tools, profile).map_err(|e| Failure::Invalid(format!("{name}: {e}")))
}

/// A JSON string literal (serde_json's escaping) for hand-assembled JSON output whose member
/// order we want to keep as documented.
pub(crate) fn json_string(text: &str) -> String {
    serde_json::Value::String(text.to_owned()).to_string()
}
