//! `Catalog`: load, validate, refuse collisions, index, measure (seed 003 §2–3, docs/design.md §4).

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use jcs_digest::{Digest, JsonType};

use crate::binding::ServerBinding;
use crate::document::{DocumentRead, ElementRead};
use crate::endpoint::conflicting_identities;
use crate::entry::{CatalogEntry, ReadEntry, Sketch, SketchView, read_entry};
use crate::error::{CatalogError, CatalogLoadError, CollidingEntry};
use crate::halves::{Threads, in_two_halves};
use crate::invisible::{InvisibleText, invisible_text};
use crate::location::child;
use crate::measurement::{CatalogMeasurement, entry_digest, measure};
use crate::members::Problems;
use crate::server::ServersRead;
use crate::small::SmallObject;
use crate::warning::{CatalogWarning, find_warnings};

#[cfg(test)]
mod two_threads;

/// The members of the object form of a catalog file.
pub(crate) const CATALOG_MEMBERS: &[&str] = &["catalog_version", "entries"];

const WHY_CATALOG: &str = "A typo in a security file must not load quietly: fix or remove it";

/// A loaded, validated catalog: each tool name bound to one server and one approved definition.
///
/// There is no way to build one except by loading bytes that pass every check: a `Catalog`
/// in hand has no collisions, no entry without an identity anchor, no server bound to two
/// different identities, and no `definition_hash` that does not recompute.
#[derive(Clone, Debug)]
pub struct Catalog {
    catalog_version: Option<String>,
    entries: Vec<CatalogEntry>,
    by_tool_name: HashMap<String, usize>,
    servers: Vec<UpstreamServer>,
    warnings: Vec<CatalogWarning>,
    measurement: CatalogMeasurement,
}

/// One distinct upstream server and the tools bound to it, for the gateway's connection pool.
///
/// Entries share a server when their bindings are equal in everything but `display_name`
/// (URL, fingerprints, SPIFFE ID, rotation mode, trust; for a local server command, cwd, env,
/// inherit_env and entrypoint digests).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpstreamServer {
    binding: ServerBinding,
    tool_names: Vec<String>,
}

impl UpstreamServer {
    /// The server binding (of the first entry that names it, for the `display_name`).
    pub fn binding(&self) -> &ServerBinding {
        &self.binding
    }

    /// The catalog `tool_name`s bound to this server, in file order.
    pub fn tool_names(&self) -> &[String] {
        &self.tool_names
    }
}

impl Catalog {
    /// Reads and validates the catalog file at `path`.
    ///
    /// # Errors
    ///
    /// [`CatalogLoadError::Read`] when the file cannot be read; [`CatalogLoadError::Invalid`]
    /// with every problem found otherwise (see [`from_slice`](Self::from_slice)).
    pub fn load(path: &Path) -> Result<Catalog, CatalogLoadError> {
        let bytes = std::fs::read(path).map_err(|source| CatalogLoadError::Read {
            path: path.to_owned(),
            source,
        })?;
        Catalog::from_bytes(&bytes, Some(path))
    }

    /// Validates a catalog held in memory.
    ///
    /// # Errors
    ///
    /// [`CatalogLoadError::Invalid`] with every problem found: JSON the strict reader refuses,
    /// a file that is not an array of entries or an `{"entries": …}` object, unknown or
    /// missing members, invalid fields, one server (`https` host and port) bound to two
    /// different identities, and duplicate tool names.
    ///
    /// A local server's bare `command[0]` is looked up on this process's `PATH` (its absolute
    /// directories), read once per load.
    ///
    /// On a machine with more than one CPU, a large catalog is loaded on two threads (scoped:
    /// both have ended when this returns): the entry array of a file of a megabyte or more is
    /// read in two halves at once, and the entries of a catalog of 64 or more are validated in
    /// two halves at once. The result is the one a single thread gives, errors and their
    /// order included.
    pub fn from_slice(bytes: &[u8]) -> Result<Catalog, CatalogLoadError> {
        Catalog::from_bytes(bytes, None)
    }

    fn from_bytes(bytes: &[u8], path: Option<&Path>) -> Result<Catalog, CatalogLoadError> {
        Catalog::from_bytes_with(bytes, path, Threads::UpToTwo)
    }

    /// The load, on one thread or two: the same catalog or the same errors either way (the
    /// unit tests compare them).
    pub(crate) fn from_bytes_with(
        bytes: &[u8],
        path: Option<&Path>,
        threads: Threads,
    ) -> Result<Catalog, CatalogLoadError> {
        let invalid = |errors: Vec<CatalogError>| CatalogLoadError::Invalid {
            path: path.map(PathBuf::from),
            errors,
        };
        let document = match threads {
            #[cfg(any(test, feature = "reference-loader"))]
            Threads::One => jcs_digest::parse_strict(bytes).map(DocumentRead::from_value),
            _ => DocumentRead::read(bytes),
        }
        .map_err(|source| invalid(vec![CatalogError::Json { source }]))?;

        let mut errors = Vec::new();
        let (catalog_version, mut elements, entries_pointer) = read_shape(document, &mut errors);
        // Read once: every local server's bare command[0] is resolved on the same PATH.
        let path_var = std::env::var_os("PATH");
        let servers_read = ServersRead::default();
        // Each entry is checked on its own (its problems, its definition digest, and once it
        // is valid its measurement digest and invisible characters), so the two halves of the
        // array can be checked at once; their results are put back in file order.
        let read = in_two_halves(&mut elements, threads, |index, element| {
            let mut entry_errors = Vec::new();
            let (entry, sketch) = read_entry(
                index,
                element,
                &entries_pointer,
                &mut entry_errors,
                &servers_read,
                path_var.as_deref(),
            );
            // What was read of the entry is freed here, on this entry's thread.
            drop(std::mem::replace(
                element,
                ElementRead::NotAnObject(JsonType::Null),
            ));
            let entry = entry.map(|read| {
                let checked = EntryChecks::of(&read);
                (read.entry, checked)
            });
            (entry, sketch, entry_errors)
        });
        drop(elements);
        let mut entries = Vec::with_capacity(read.len());
        let mut checks = Vec::with_capacity(read.len());
        let mut sketches = Vec::with_capacity(read.len());
        for (index, (entry, sketch, entry_errors)) in read.into_iter().enumerate() {
            if let Some((entry, checked)) = entry {
                sketches.push(Sketch::Valid {
                    index,
                    position: entries.len(),
                });
                entries.push(entry);
                checks.push(checked);
            }
            sketches.extend(sketch.map(Sketch::Invalid));
            errors.extend(entry_errors);
        }
        let views: Vec<SketchView<'_>> = sketches
            .iter()
            .filter_map(|sketch| sketch.view(&entries))
            .collect();
        errors.extend(conflicting_identities(&views, &entries_pointer));
        errors.extend(collisions(&views));
        drop(views);
        if !errors.is_empty() {
            return Err(invalid(errors));
        }

        let server_keys: Vec<Cow<'_, str>> = entries
            .iter()
            .map(|entry| entry.server().identity_key())
            .collect();
        let by_tool_name = entries
            .iter()
            .enumerate()
            .map(|(index, entry)| (entry.tool_name().to_owned(), index))
            .collect();
        let (entry_digests, invisible): (Vec<_>, Vec<_>) = checks
            .into_iter()
            .map(|checked| (checked.digest, checked.invisible))
            .unzip();
        Ok(Catalog {
            catalog_version,
            servers: group_servers(&entries, &server_keys),
            warnings: find_warnings(&entries, &server_keys, invisible),
            measurement: measure(&entries, entry_digests),
            by_tool_name,
            entries,
        })
    }

    /// The entry for `tool_name` (exact, case-sensitive match), or `None`: the gateway denies
    /// the call as `tool_not_in_catalog` (seed 003 §4 step 2).
    pub fn lookup(&self, tool_name: &str) -> Option<&CatalogEntry> {
        self.by_tool_name
            .get(tool_name)
            .and_then(|index| self.entries.get(*index))
    }

    /// Every entry, in file order.
    pub fn entries(&self) -> &[CatalogEntry] {
        &self.entries
    }

    /// The catalog measurement (docs/design.md §4).
    pub fn measurement(&self) -> &CatalogMeasurement {
        &self.measurement
    }

    /// Warnings that did not refuse the catalog, by entry index.
    pub fn warnings(&self) -> &[CatalogWarning] {
        &self.warnings
    }

    /// The distinct upstream servers, in order of first appearance, each with its tools.
    pub fn servers(&self) -> &[UpstreamServer] {
        &self.servers
    }

    /// `catalog_version` of the object form; `None` for the array form or when absent.
    pub fn catalog_version(&self) -> Option<&str> {
        self.catalog_version.as_deref()
    }
}

/// What is computed from one valid entry alone, on the thread that read it.
struct EntryChecks {
    /// The entry's measurement digest.
    digest: Digest,
    /// The texts of its approved definition with invisible characters.
    invisible: Vec<InvisibleText>,
}

impl EntryChecks {
    fn of(read: &ReadEntry) -> EntryChecks {
        let entry = &read.entry;
        EntryChecks {
            digest: entry_digest(entry),
            // Most definitions hold no such character, and are not built into a value to be
            // searched; one that may is searched as a value, as a live definition is.
            invisible: if read.may_hold_invisible {
                invisible_text(entry.approved_definition())
            } else {
                Vec::new()
            },
        }
    }
}

/// The two file shapes: a bare array of entries, or `{"catalog_version": …, "entries": […]}`.
/// Returns the version, the entries and the JSON Pointer of the entry array.
fn read_shape<'a>(
    document: DocumentRead<'a>,
    errors: &mut Vec<CatalogError>,
) -> (Option<String>, Vec<ElementRead<'a>>, String) {
    match document {
        DocumentRead::Entries(elements) => (None, elements, String::new()),
        DocumentRead::Object { members, entries } => read_catalog_object(&members, entries, errors),
        DocumentRead::Other(found) => {
            errors.push(CatalogError::NotACatalog {
                found: found.name(),
            });
            (None, Vec::new(), String::new())
        }
    }
}

/// The object form: `members` (without `entries` when it is an array: then `entries`).
fn read_catalog_object<'a>(
    object: &SmallObject<'_>,
    entries: Option<Vec<ElementRead<'a>>>,
    errors: &mut Vec<CatalogError>,
) -> (Option<String>, Vec<ElementRead<'a>>, String) {
    let mut problems = Problems {
        entry: None,
        errors,
    };
    problems.refuse_unknown_members(object, "", CATALOG_MEMBERS, WHY_CATALOG);
    let version = problems
        .optional_string(
            object,
            "",
            "catalog_version",
            "give a version label, e.g. \"2026-06-01.1\", or remove the member",
        )
        .map(str::to_owned)
        .valid();
    let entries_pointer = child("", "entries");
    let elements = match (entries, object.get("entries")) {
        (Some(elements), _) => elements,
        (None, Some(other)) => {
            problems.wrong_type(entries_pointer.clone(), "an array of entries", other);
            Vec::new()
        }
        (None, None) => {
            let at = problems.at(entries_pointer.clone());
            problems.push(CatalogError::MissingMember {
                at,
                member: "entries",
                hint: "add \"entries\": [...] with one object per tool",
            });
            Vec::new()
        }
    };
    (version, elements, entries_pointer)
}

/// Seed 003 §3: every `tool_name` held by two or more entries refuses the catalog. Entries
/// are compared by exact name, whether or not they are otherwise valid, and whether or not
/// they name the same server. One error per name, in order of first appearance.
fn collisions(sketches: &[SketchView<'_>]) -> Vec<CatalogError> {
    // The first holder of each name, and the later ones of the (few) names held twice.
    let mut first_by_name: HashMap<&str, usize> = HashMap::with_capacity(sketches.len());
    let mut later: HashMap<usize, Vec<&SketchView<'_>>> = HashMap::new();
    for (position, sketch) in sketches.iter().enumerate() {
        let first = *first_by_name.entry(sketch.tool_name).or_insert(position);
        if first != position {
            later.entry(first).or_default().push(sketch);
        }
    }
    // In order of first appearance.
    let mut firsts: Vec<usize> = later.keys().copied().collect();
    firsts.sort_unstable();
    let colliding = |sketch: &SketchView<'_>| {
        let server = sketch.server_sketch();
        CollidingEntry {
            index: sketch.index,
            url: server.url,
            identity: server.identity,
        }
    };
    firsts
        .into_iter()
        .filter_map(|first| {
            let holder = sketches.get(first)?;
            let later = later.get(&first)?;
            Some(CatalogError::DuplicateToolName {
                tool_name: holder.tool_name.to_owned(),
                entries: std::iter::once(holder)
                    .chain(later.iter().copied())
                    .map(colliding)
                    .collect(),
            })
        })
        .collect()
}

fn group_servers(entries: &[CatalogEntry], server_keys: &[Cow<'_, str>]) -> Vec<UpstreamServer> {
    let mut servers: Vec<UpstreamServer> = Vec::new();
    let mut by_key: HashMap<&str, usize> = HashMap::new();
    for (entry, key) in entries.iter().zip(server_keys) {
        let position = *by_key.entry(key).or_insert_with(|| {
            servers.push(UpstreamServer {
                binding: entry.server().clone(),
                tool_names: Vec::new(),
            });
            servers.len() - 1
        });
        if let Some(server) = servers.get_mut(position) {
            server.tool_names.push(entry.tool_name().to_owned());
        }
    }
    servers
}
