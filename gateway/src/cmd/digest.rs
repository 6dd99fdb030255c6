//! `toolgate digest`: per-tool digests and the catalog digest of one tools/list document.

use std::io::Write;
use std::path::Path;

use catalog_fold::{CatalogDigest, Chunked, DEFAULT_CHUNK, digest_in_chunks};
use jcs_digest::{Profile, write_canonical_str};

use crate::cli::DigestArgs;
use crate::cmd::common::{profile_from_label, write_stdout, write_stdout_with};
use crate::input::{display_name, read_failure, read_input};
use crate::outcome::{Failure, Verdict};

pub(crate) fn run(args: &DigestArgs) -> Result<Verdict, Failure> {
    let profile = profile_from_label(args.label.as_deref())?;
    let catalog = digest_streamed(&args.file, profile)?;
    if args.json {
        write_stdout_with(|out| write_json(&catalog, out))?;
    } else {
        write_stdout(render_text(&catalog))?;
    }
    Ok(Verdict::Pass)
}

/// Reads a tools/list document and digests it tool by tool from the bytes, with no `Value`
/// tree: the digests and messages of the tree path that `toolgate diff` uses, at a fraction of
/// the cost. A file is read a window at a time (`digest_in_chunks`: no buffer of its size, no
/// megabytes of fresh memory to fault in); a document that path does not vouch for, an error
/// included, and standard input are read whole (`CatalogDigest::from_document`), which gives
/// the error with its place. An unreadable file is a usage failure (exit 2); a document that is
/// not a catalog, or a tool that has no digest, is an invalid input (exit 1).
fn digest_streamed(path: &Path, profile: Profile) -> Result<CatalogDigest, Failure> {
    if path.as_os_str() != "-" {
        if let Some(digest) = digest_file_in_chunks(path, profile)? {
            return Ok(digest);
        }
    }
    let bytes = read_input(path)?;
    CatalogDigest::from_document(&bytes, profile)
        .map_err(|e| Failure::Invalid(format!("{}: {e}", display_name(path))))
}

/// The digests of the file at `path` read in chunks, or `None` when it must be read whole.
fn digest_file_in_chunks(path: &Path, profile: Profile) -> Result<Option<CatalogDigest>, Failure> {
    let file = std::fs::File::open(path).map_err(|e| read_failure(path, e))?;
    let len = file.metadata().map_err(|e| read_failure(path, e))?.len();
    match digest_in_chunks(&file, len, profile, DEFAULT_CHUNK).map_err(|e| read_failure(path, e))? {
        Chunked::Digest(digest) => Ok(Some(digest)),
        Chunked::WholeDocument => Ok(None),
    }
}

/// `{"label": LABEL, "tools": {KEY: DIGEST, …}, "catalog": DIGEST}` on one line, written as
/// it is made: 10,000 tools make a megabyte of output, which is not held whole. Strings are
/// escaped as RFC 8785 does, which for these texts (printable ASCII keys, a profile label) is
/// also serde_json's.
fn write_json(catalog: &CatalogDigest, out: &mut impl Write) -> std::io::Result<()> {
    let mut text = Vec::with_capacity(256);
    text.extend_from_slice(b"{\"label\":");
    write_canonical_str(catalog.profile().label(), &mut text);
    text.extend_from_slice(b",\"tools\":{");
    for (index, (key, digest)) in catalog.tools().iter().enumerate() {
        if index > 0 {
            text.push(b',');
        }
        write_canonical_str(key.as_str(), &mut text);
        text.extend_from_slice(b":\"");
        text.extend_from_slice(digest.text().as_bytes());
        text.push(b'"');
        out.write_all(&text)?;
        text.clear();
    }
    text.extend_from_slice(b"},\"catalog\":\"");
    text.extend_from_slice(catalog.catalog().text().as_bytes());
    text.extend_from_slice(b"\"}\n");
    out.write_all(&text)
}

/// `DIGEST  KEY` lines, a note on folded keys, and the catalog line.
fn render_text(catalog: &CatalogDigest) -> Vec<u8> {
    let mut out = Vec::new();
    // Writing to a Vec cannot fail.
    for (key, digest) in catalog.tools() {
        let _ = writeln!(out, "{digest}  {key}");
    }
    let duplicates: Vec<String> = catalog.duplicate_keys().map(|k| k.to_string()).collect();
    if !duplicates.is_empty() {
        let _ = writeln!(
            out,
            "note: several definitions share a key and were folded together: {}",
            duplicates.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "{}  catalog ({} keys, label {})",
        catalog.catalog(),
        catalog.tools().len(),
        catalog.profile().label()
    );
    out
}
