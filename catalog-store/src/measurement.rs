//! The catalog measurement: one digest over every binding (docs/design.md §4).
//!
//! Per entry, the SHA-256 of the RFC 8785 form of
//!
//! ```text
//! {"profile": "trace.mcp-catalog-entry.v1",
//!  "entry": {"tool_name", "upstream_name", "url", "tls_fingerprint", "backup_fingerprints",
//!            "spiffe_id", "rotation_mode", "tls_trust", "definition_hash"}}
//! ```
//!
//! (for a local server `command`, `cwd`, `env`, `inherit_env` and `entrypoint_digests` in
//! place of the network members), folded as seed 000 §5 under `ToolKey::from_name(tool_name)` with the same label.

use catalog_fold::fold;
use catalog_key::ToolKey;
use jcs_digest::Digest;

use crate::binding::{LocalServer, NetworkServer, ServerBinding};
use crate::definition::with_scratch;
use crate::entry::CatalogEntry;

/// The profile label of the per-entry preimage, and of the fold's duplicate and overflow texts.
pub const CATALOG_ENTRY_LABEL: &str = "trace.mcp-catalog-entry.v1";

/// The measurement of a catalog: what the gateway's first audit entry carries as `prev`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogMeasurement {
    entry_digests: Vec<Digest>,
    fold: catalog_fold::Fold,
}

impl CatalogMeasurement {
    /// The catalog measurement: `sha256:` over the [`fold_text`](Self::fold_text).
    pub fn digest(&self) -> Digest {
        self.fold.digest()
    }

    /// The per-entry digests, in file order (parallel to
    /// [`Catalog::entries`](crate::Catalog::entries)).
    pub fn entry_digests(&self) -> &[Digest] {
        &self.entry_digests
    }

    /// The per-key digests the fold sorted (one per entry, since tool names are unique).
    pub fn per_key(&self) -> &std::collections::BTreeMap<ToolKey, Digest> {
        self.fold.per_key()
    }

    /// The exact text that was hashed: sorted `key=digest` lines joined by `\n` (with a
    /// `tools:overflow` line beyond 500 entries, seed 000 §5).
    pub fn fold_text(&self) -> &str {
        self.fold.lines()
    }
}

/// [`write_preimage`] into a new buffer (the unit tests check it).
#[cfg(test)]
pub(crate) fn entry_preimage(entry: &CatalogEntry) -> Vec<u8> {
    let mut out = Vec::with_capacity(512);
    write_preimage(entry, &mut out);
    out
}

/// Appends the bytes of one entry's digest to `out`: the RFC 8785 form of its preimage.
///
/// Every member is always present, so every preimage has one shape: an absent
/// `tls_fingerprint` or `spiffe_id` is `null`, absent backups are `[]`, and absent
/// `rotation_mode`, `tls_trust` and `upstream_name` are written as their effective values
/// (`key-pinned`, `webpki`, `tool_name`): spelling out a default is not a different binding.
/// Fingerprints are canonical (`SHA256:<64 lowercase hex>`) and backups sorted, since they are
/// a set; the URL is as written.
///
/// The preimage holds only strings, `null` and one array of strings, so its canonical form is
/// written directly (members in RFC 8785 order, which for these ASCII names is byte order);
/// this cannot fail, and a unit test checks it against `jcs_digest::canonicalize`.
fn write_preimage(entry: &CatalogEntry, out: &mut Vec<u8>) {
    match entry.server() {
        ServerBinding::Network(server) => network_preimage(entry, server, out),
        ServerBinding::Local(server) => out.extend_from_slice(&local_preimage(entry, server)),
    }
}

/// A local server's preimage (docs/design.md §4): `command`, `cwd`, `env`, `inherit_env` and
/// `entrypoint_digests` in place of the network members. `command` is as written (the
/// program it resolves to depends on the machine; its digest is measured), `inherit_env`
/// sorted (a set), `entrypoint_digests` under their resolved absolute paths. Object members
/// are written in RFC 8785 order (UTF-16 code units), since env names and paths need not be
/// ASCII.
fn local_preimage(entry: &CatalogEntry, server: &LocalServer) -> Vec<u8> {
    let mut out = Vec::with_capacity(512);
    out.extend_from_slice(b"{\"entry\":{\"command\":");
    write_array(&mut out, server.command());
    out.extend_from_slice(b",\"cwd\":");
    write_string(&mut out, &server.cwd().to_string_lossy());
    out.extend_from_slice(b",\"definition_hash\":");
    write_string(&mut out, &entry.definition_hash().to_string());
    out.extend_from_slice(b",\"entrypoint_digests\":");
    write_object(
        &mut out,
        server
            .entrypoint_digests()
            .iter()
            .map(|(path, digest)| (path.to_string_lossy().into_owned(), digest.to_string())),
    );
    out.extend_from_slice(b",\"env\":");
    write_object(
        &mut out,
        server
            .env()
            .iter()
            .map(|(name, value)| (name.clone(), value.clone())),
    );
    out.extend_from_slice(b",\"inherit_env\":");
    write_array(&mut out, &server.sorted_inherit_env());
    out.extend_from_slice(b",\"tool_name\":");
    write_string(&mut out, entry.tool_name());
    out.extend_from_slice(b",\"upstream_name\":");
    write_string(&mut out, entry.upstream_name());
    out.extend_from_slice(b"},\"profile\":");
    write_string(&mut out, CATALOG_ENTRY_LABEL);
    out.push(b'}');
    out
}

/// An array of strings, in the order given.
fn write_array(out: &mut Vec<u8>, elements: &[impl AsRef<str>]) {
    out.push(b'[');
    for (position, element) in elements.iter().enumerate() {
        if position > 0 {
            out.push(b',');
        }
        write_string(out, element.as_ref());
    }
    out.push(b']');
}

/// An object of string members, sorted as RFC 8785 §3.2.3 sorts them (by UTF-16 code units).
fn write_object(out: &mut Vec<u8>, members: impl Iterator<Item = (String, String)>) {
    let mut members: Vec<(String, String)> = members.collect();
    members.sort_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
    out.push(b'{');
    for (position, (name, value)) in members.iter().enumerate() {
        if position > 0 {
            out.push(b',');
        }
        write_string(out, name);
        out.push(b':');
        write_string(out, value);
    }
    out.push(b'}');
}

fn network_preimage(entry: &CatalogEntry, server: &NetworkServer, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"entry\":{\"backup_fingerprints\":");
    write_array(out, &server.sorted_backup_fingerprints());
    out.extend_from_slice(b",\"definition_hash\":");
    write_displayed(out, entry.definition_hash());
    out.extend_from_slice(b",\"rotation_mode\":");
    write_string(out, server.rotation_mode().as_str());
    out.extend_from_slice(b",\"spiffe_id\":");
    write_optional(out, server.spiffe_id().map(|id| id.as_str()));
    out.extend_from_slice(b",\"tls_fingerprint\":");
    match server.tls_fingerprint() {
        Some(fingerprint) => write_displayed(out, fingerprint),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"tls_trust\":");
    write_string(out, server.tls_trust().as_str());
    out.extend_from_slice(b",\"tool_name\":");
    write_string(out, entry.tool_name());
    out.extend_from_slice(b",\"upstream_name\":");
    write_string(out, entry.upstream_name());
    out.extend_from_slice(b",\"url\":");
    write_string(out, server.url().as_str());
    out.extend_from_slice(b"},\"profile\":");
    write_string(out, CATALOG_ENTRY_LABEL);
    out.push(b'}');
}

/// A digest or a fingerprint as a JSON string, written straight into `out`: their text
/// (`sha256:` or `SHA256:` and hex) holds nothing RFC 8785 escapes, so it is written as is.
fn write_displayed(out: &mut Vec<u8>, text: impl std::fmt::Display) {
    use std::io::Write as _;
    out.push(b'"');
    // Writing to a `Vec` cannot fail.
    let _ = write!(out, "{text}");
    out.push(b'"');
}

fn write_optional(out: &mut Vec<u8>, text: Option<&str>) {
    match text {
        Some(text) => write_string(out, text),
        None => out.extend_from_slice(b"null"),
    }
}

/// A JSON string as RFC 8785 §3.2.2.2 writes it: `"` and `\` escaped, U+0000–U+001F as
/// `\b \t \n \f \r` or `\u00xx` (lowercase hex), everything else literal; jcs-digest's
/// writer, which copies the runs between escapes whole.
fn write_string(out: &mut Vec<u8>, text: &str) {
    jcs_digest::write_canonical_str(text, out);
}

/// The digest of one entry's preimage.
pub(crate) fn entry_digest(entry: &CatalogEntry) -> Digest {
    // In the thread's buffer, kept between entries.
    with_scratch(|out| {
        write_preimage(entry, out);
        Digest::of(out)
    })
}

/// Measures validated entries, given the [`entry_digest`] of each, in order.
pub(crate) fn measure(entries: &[CatalogEntry], entry_digests: Vec<Digest>) -> CatalogMeasurement {
    let keyed = entries
        .iter()
        .zip(&entry_digests)
        .map(|(entry, digest)| (entry.key().clone(), *digest));
    CatalogMeasurement {
        fold: fold(keyed, CATALOG_ENTRY_LABEL),
        entry_digests,
    }
}

#[cfg(test)]
mod unit {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use proptest::prelude::*;
    use serde_json::json;

    use super::entry_preimage;
    use crate::Catalog;

    /// A one-entry catalog whose `tool_name` is `name`; `upstream_name` is fixed, so the
    /// definition hash is too (python3 + hashlib of `{"name":"u","inputSchema":{}}`).
    fn catalog_named(name: &str, backups: serde_json::Value) -> Catalog {
        let document = json!([{
            "tool_name": name,
            "upstream_name": "u",
            "server": {
                "url": "https://a.example/mcp",
                "tls_fingerprint": format!("SHA256:{}", "ab".repeat(32)),
                "backup_fingerprints": backups,
            },
            "approved_definition": {"inputSchema": {}},
            "definition_hash": "sha256:87e4098a5d809793ca25a7e47d5aa4e74113225bb5af18eba92285fba625b367",
            "added_at": "2026-06-01T00:00:00Z",
            "approved_by": "me"
        }]);
        Catalog::from_slice(document.to_string().as_bytes()).unwrap()
    }

    /// The preimage as a value, canonicalized by `jcs-digest`: what the direct writer must equal.
    fn canonical_preimage(catalog: &Catalog) -> Vec<u8> {
        let entry = &catalog.entries()[0];
        let server = entry.server().network().unwrap();
        let value = json!({
            "profile": super::CATALOG_ENTRY_LABEL,
            "entry": {
                "tool_name": entry.tool_name(),
                "upstream_name": entry.upstream_name(),
                "url": server.url().as_str(),
                "tls_fingerprint": server.tls_fingerprint().map(ToString::to_string),
                "backup_fingerprints": server.sorted_backup_fingerprints(),
                "spiffe_id": server.spiffe_id().map(|id| id.as_str()),
                "rotation_mode": server.rotation_mode().as_str(),
                "tls_trust": server.tls_trust().as_str(),
                "definition_hash": entry.definition_hash().to_string(),
            }
        });
        jcs_digest::canonicalize(&value).unwrap()
    }

    #[test]
    fn the_direct_writer_escapes_as_rfc_8785_does() {
        // Names with control characters no longer load, but the writer must stay exact.
        let text = "q\"\\\u{0}\u{8}\t\n\u{c}\r\u{1f}\u{7f}é🚀";
        let mut written = Vec::new();
        super::write_string(&mut written, text);
        assert_eq!(written, jcs_digest::canonicalize(&json!(text)).unwrap());
        let backups = json!([
            format!("SHA256:{}", "cd".repeat(32)),
            format!("SHA256:{}", "01".repeat(32))
        ]);
        let catalog = catalog_named("q\"\\é🚀", backups);
        assert_eq!(
            entry_preimage(&catalog.entries()[0]),
            canonical_preimage(&catalog)
        );
    }

    proptest! {
        #[test]
        fn the_direct_writer_agrees_with_canonicalize(name in "\\PC{1,40}|[\\x20-\\x7e]{1,40}") {
            let catalog = catalog_named(&name, json!([]));
            prop_assert_eq!(entry_preimage(&catalog.entries()[0]), canonical_preimage(&catalog));
        }

        #[test]
        fn strings_are_written_as_canonicalize_writes_them(text in "\\PC{0,40}|[\\x00-\\x7f]{1,40}") {
            let mut written = Vec::new();
            super::write_string(&mut written, &text);
            prop_assert_eq!(written, jcs_digest::canonicalize(&json!(text)).unwrap());
        }
    }
}
