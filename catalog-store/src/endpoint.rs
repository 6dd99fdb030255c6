//! One TLS endpoint, one identity: entries whose URLs reach the same `https` host and port must
//! carry the same anchors (seed 003 §3's fail-closed rule applied to server identity).
//!
//! A server presents one certificate whichever tool is called. Two anchor sets for it mean
//! that one entry fails its identity check on every call (or will, at the next renewal), or
//! that two keys were approved for one server without anyone noticing; a planned rotation
//! already has its place, `backup_fingerprints`. So the catalog is refused, like a duplicate
//! tool name, rather than loaded with a warning.

use std::collections::HashMap;
use std::fmt;

use server_identity::ServerAnchors;

use crate::entry::EntrySketch;
use crate::error::CatalogError;
use crate::location::{EntryRef, Location, child, element};
use crate::server::sorted_backup_fingerprints;
use crate::upstream_url::tls_endpoint;

/// Every entry whose anchors differ from those of the earliest entry for the same TLS
/// endpoint, one error each, in file order. Entries are compared whether or not they are
/// otherwise valid, as long as their `server` object is. Linear in the entries.
pub(crate) fn conflicting_identities(
    sketches: &[EntrySketch],
    entries_pointer: &str,
) -> Vec<CatalogError> {
    let mut first_by_endpoint: HashMap<String, &EntrySketch> = HashMap::new();
    let mut errors = Vec::new();
    for sketch in sketches {
        let Some(binding) = &sketch.binding else {
            continue;
        };
        let Some(endpoint) = tls_endpoint(binding.url()) else {
            continue;
        };
        let first = *first_by_endpoint.entry(endpoint.clone()).or_insert(sketch);
        let Some(first_binding) = first.binding.as_ref() else {
            continue;
        };
        if anchor_differences(binding.anchors(), first_binding.anchors()).is_empty() {
            continue;
        }
        errors.push(CatalogError::ConflictingServerIdentity {
            at: server_location(sketch, entries_pointer),
            binding: Box::new(binding.clone()),
            other: server_location(first, entries_pointer),
            other_binding: Box::new(first_binding.clone()),
            endpoint,
        });
    }
    errors
}

fn server_location(sketch: &EntrySketch, entries_pointer: &str) -> Location {
    Location {
        entry: Some(EntryRef {
            index: sketch.index,
            tool_name: Some(sketch.tool_name.clone()),
        }),
        pointer: child(&element(entries_pointer, sketch.index), "server"),
    }
}

/// The members in which two anchor sets differ, in schema order; empty when they are the same
/// identity. Backups are compared as a set (their order in the file is not a difference).
pub(crate) fn anchor_differences(a: &ServerAnchors, b: &ServerAnchors) -> Vec<&'static str> {
    let mut differences = Vec::new();
    if a.fingerprint() != b.fingerprint() {
        differences.push("tls_fingerprint");
    }
    if sorted_backup_fingerprints(a) != sorted_backup_fingerprints(b) {
        differences.push("backup_fingerprints");
    }
    if a.spiffe_id() != b.spiffe_id() {
        differences.push("spiffe_id");
    }
    if a.rotation_mode() != b.rotation_mode() {
        differences.push("rotation_mode");
    }
    if a.tls_trust() != b.tls_trust() {
        differences.push("tls_trust");
    }
    differences
}

/// An identity in full, defaults written out, backups sorted:
/// `{tls_fingerprint: SHA256:…, backup_fingerprints: [], spiffe_id: none, rotation_mode:
/// key-pinned, tls_trust: webpki}`.
pub(crate) struct AnchorsText<'a>(pub(crate) &'a ServerAnchors);

impl fmt::Display for AnchorsText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let anchors = self.0;
        f.write_str("{tls_fingerprint: ")?;
        match anchors.fingerprint() {
            Some(fingerprint) => write!(f, "{fingerprint}")?,
            None => f.write_str("none")?,
        }
        write!(
            f,
            ", backup_fingerprints: [{}], spiffe_id: ",
            sorted_backup_fingerprints(anchors).join(", ")
        )?;
        match anchors.spiffe_id() {
            Some(id) => write!(f, "{id}")?,
            None => f.write_str("none")?,
        }
        write!(
            f,
            ", rotation_mode: {}, tls_trust: {}}}",
            anchors.rotation_mode(),
            anchors.tls_trust()
        )
    }
}
