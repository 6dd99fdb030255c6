//! `toolgate digest`: per-tool digests and the catalog digest of one tools/list document.

use std::io::Write;
use std::path::Path;

use catalog_fold::CatalogDigest;
use jcs_digest::Profile;

use crate::cli::DigestArgs;
use crate::cmd::common::{json_string, profile_from_label};
use crate::input::{display_name, read_input};
use crate::outcome::{Failure, Verdict, stdout_error};

pub(crate) fn run(args: &DigestArgs) -> Result<Verdict, Failure> {
    let profile = profile_from_label(args.label.as_deref())?;
    let catalog = digest_streamed(&args.file, profile)?;
    let text = if args.json {
        render_json(&catalog)
    } else {
        render_text(&catalog)
    };
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes()).map_err(stdout_error)?;
    stdout.flush().map_err(stdout_error)?;
    Ok(Verdict::Pass)
}

/// Reads a tools/list document and digests it tool by tool from the bytes, with no `Value`
/// tree (`CatalogDigest::from_document`): the digests and messages of the tree path that
/// `toolgate diff` uses, at a fraction of the cost. An unreadable file is a usage failure
/// (exit 2); a document that is not a catalog, or a tool that has no digest, is an invalid input
/// (exit 1).
fn digest_streamed(path: &Path, profile: Profile) -> Result<CatalogDigest, Failure> {
    let bytes = read_input(path)?;
    CatalogDigest::from_document(&bytes, profile)
        .map_err(|e| Failure::Invalid(format!("{}: {e}", display_name(path))))
}

/// `{"label": LABEL, "tools": {KEY: DIGEST, …}, "catalog": DIGEST}` on one line. Keys are printable
/// ASCII without `"` or `\`-sensitive content beyond what `json_string` escapes.
fn render_json(catalog: &CatalogDigest) -> String {
    let tools: Vec<String> = catalog
        .tools()
        .iter()
        .map(|(key, digest)| format!("{}:\"{digest}\"", json_string(key.as_str())))
        .collect();
    format!(
        "{{\"label\":{},\"tools\":{{{}}},\"catalog\":\"{}\"}}\n",
        json_string(catalog.profile().label()),
        tools.join(","),
        catalog.catalog()
    )
}

fn render_text(catalog: &CatalogDigest) -> String {
    let mut out = String::new();
    for (key, digest) in catalog.tools() {
        out.push_str(&format!("{digest}  {key}\n"));
    }
    let duplicates: Vec<String> = catalog.duplicate_keys().map(|k| k.to_string()).collect();
    if !duplicates.is_empty() {
        out.push_str(&format!(
            "note: several definitions share a key and were folded together: {}\n",
            duplicates.join(", ")
        ));
    }
    out.push_str(&format!(
        "{}  catalog ({} keys, label {})\n",
        catalog.catalog(),
        catalog.tools().len(),
        catalog.profile().label()
    ));
    out
}
