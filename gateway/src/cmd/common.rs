//! Pieces shared by the commands that digest catalogs.

use std::path::Path;

use catalog_fold::{CatalogDigest, read_tools_document};
use jcs_digest::Profile;
use serde_json::Value;

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

/// Reads the tool definitions of a tools/list document (exit 2 when unreadable, 1 when it is
/// not a tools/list document).
pub(crate) fn read_tools_file(path: &Path) -> Result<Vec<Value>, Failure> {
    let bytes = read_input(path)?;
    read_tools_document(&bytes)
        .map_err(|e| Failure::Invalid(format!("{}: {e}", display_name(path))))
}

/// Digests the definitions read from `path` (a tool without a digest is exit 1).
pub(crate) fn digest_tools(
    path: &Path,
    tools: &[Value],
    profile: Profile,
) -> Result<CatalogDigest, Failure> {
    CatalogDigest::compute(tools, profile)
        .map_err(|e| Failure::Invalid(format!("{}: {e}", display_name(path))))
}

/// A JSON string literal (serde_json's escaping) for hand-assembled JSON output whose member
/// order we want to keep as documented.
pub(crate) fn json_string(text: &str) -> String {
    jcs_digest::order::to_string(&serde_json::Value::String(text.to_owned()))
}

/// Writes `text` to standard output and flushes it (a closed pipe exits quietly).
pub(crate) fn write_stdout(text: impl AsRef<[u8]>) -> Result<(), Failure> {
    write_stdout_with(|out| std::io::Write::write_all(out, text.as_ref()))
}

/// Lets `write` write to standard output through a buffer of 64 KiB, then flushes it (a closed
/// pipe exits quietly): for output of a megabyte and more, which need not be held whole.
pub(crate) fn write_stdout_with(
    write: impl FnOnce(&mut std::io::BufWriter<std::io::StdoutLock<'static>>) -> std::io::Result<()>,
) -> Result<(), Failure> {
    use std::io::Write;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    write(&mut out).map_err(crate::outcome::stdout_error)?;
    out.flush().map_err(crate::outcome::stdout_error)
}
