//! One TLS endpoint, one identity: entries whose URLs reach the same `https` host and port must
//! carry the same anchors (seed 003 §3's fail-closed rule applied to server identity); entries
//! that start the same local command (argv, cwd, env) must carry the same entrypoint digests.
//!
//! A server presents one certificate whichever tool is called. Two anchor sets for it mean
//! that one entry fails its identity check on every call (or will, at the next renewal), or
//! that two keys were approved for one server without anyone noticing; a planned rotation
//! already has its place, `backup_fingerprints`. So the catalog is refused, like a duplicate
//! tool name, rather than loaded with a warning.

use std::collections::{HashMap, HashSet};

use crate::binding::{LocalServer, NetworkServer, ServerBinding, anchor_differences};
use crate::entry::SketchView;
use crate::error::CatalogError;
use crate::location::{EntryRef, Location, child, element};

/// Every entry whose anchors differ from those of the earliest entry for the same TLS
/// endpoint, one error each, in file order. Entries are compared whether or not they are
/// otherwise valid, as long as their `server` object is. Linear in the entries.
pub(crate) fn conflicting_identities(
    sketches: &[SketchView<'_>],
    entries_pointer: &str,
) -> Vec<CatalogError> {
    let mut first_by_endpoint: HashMap<String, (&SketchView<'_>, &NetworkServer)> = HashMap::new();
    let mut first_by_command: HashMap<String, (&SketchView<'_>, &LocalServer)> = HashMap::new();
    // Entries that share one binding (`ServersRead`) compare alike: once one has been found to
    // agree with the earliest entry for its endpoint, the others need no comparison.
    let mut agreeing: HashSet<*const NetworkServer> = HashSet::new();
    let mut errors = Vec::new();
    for sketch in sketches {
        let server = match sketch.binding {
            Some(ServerBinding::Network(server)) => server,
            Some(ServerBinding::Local(local)) => {
                // Debug escapes each part, so two different commands cannot share a key.
                let key = format!(
                    "{:?}\n{:?}\n{:?}",
                    local.command(),
                    local.cwd(),
                    local.env()
                );
                let (first, first_local) = *first_by_command.entry(key).or_insert((sketch, local));
                if local.entrypoint_digests() != first_local.entrypoint_digests() {
                    errors.push(CatalogError::ConflictingLocalIdentity {
                        at: server_location(sketch, entries_pointer),
                        binding: Box::new(local.clone()),
                        other: server_location(first, entries_pointer),
                        other_binding: Box::new(first_local.clone()),
                    });
                }
                continue;
            }
            None => continue,
        };
        if agreeing.contains(&std::ptr::from_ref(server)) {
            continue;
        }
        let (first, first_server) = *first_by_endpoint
            .entry(server.url().tls_endpoint())
            .or_insert((sketch, server));
        let differences = anchor_differences(server.anchors(), first_server.anchors());
        if differences.is_empty() {
            agreeing.insert(std::ptr::from_ref(server));
            continue;
        }
        let endpoint = server.url().tls_endpoint();
        errors.push(CatalogError::ConflictingServerIdentity {
            at: server_location(sketch, entries_pointer),
            binding: Box::new(server.clone()),
            other: server_location(first, entries_pointer),
            other_binding: Box::new(first_server.clone()),
            endpoint,
            differences,
        });
    }
    errors
}

fn server_location(sketch: &SketchView<'_>, entries_pointer: &str) -> Location {
    Location {
        entry: Some(EntryRef {
            index: sketch.index,
            tool_name: Some(sketch.tool_name.to_owned()),
        }),
        pointer: child(&element(entries_pointer, sketch.index), "server"),
    }
}
