//! `server`: the upstream a tool is bound to, and its identity anchors (seed 003 §1, docs/design.md §3).

use std::collections::HashMap;
use std::ffi::OsStr;
use std::fmt;
use std::sync::{Arc, Mutex};

use server_identity::{AnchorsError, Fingerprint, RotationMode, ServerAnchors, SpiffeId, TlsTrust};

use crate::binding::{NetworkServer, ServerBinding, ServerSketch};

use crate::error::CatalogError;
use crate::local::{is_present, read_local};
use crate::location::{child, element};
use crate::members::{Field, Problems};
use crate::schema::{LOCAL_ONLY_MEMBERS, SERVER_MEMBERS};
use crate::small::{SmallObject, SmallValue};
use crate::upstream_url::UpstreamUrl;

const WHY_SERVER: &str = "A typo in a security file must not load quietly: fix or remove it";

/// The network servers one load has read, by their `server` object as written: an entry
/// whose `server` is written byte for byte as an earlier valid one's shares that binding
/// instead of being read again (a catalog names a few servers in many entries, and reading
/// each entry's was about a twentieth of a load, its copies as much again to free).
///
/// Only valid network servers are kept: one records no problem wherever it is written, so
/// reading it again would record nothing either. A local server is read every time, as
/// before: its program is looked up on `PATH` for each entry.
#[derive(Default)]
pub(crate) struct ServersRead<'a> {
    by_text: Mutex<HashMap<&'a [u8], Arc<ServerBinding>>>,
}

impl<'a> ServersRead<'a> {
    /// [`read_server`] of `server`, whose value is written as `written` when that is known;
    /// `pointer` (the object's) is built only when it is read.
    pub(crate) fn read(
        &self,
        problems: &mut Problems<'_>,
        server: &SmallObject<'_>,
        written: Option<&'a [u8]>,
        pointer: impl FnOnce() -> String,
        path_var: Option<&OsStr>,
    ) -> Result<Arc<ServerBinding>, ServerSketch> {
        let known = |written| {
            let by_text = self.by_text.lock().ok()?;
            by_text.get(written).cloned()
        };
        if let Some(known) = written.and_then(known) {
            return Ok(known);
        }
        let binding = Arc::new(read_server(problems, server, &pointer(), path_var)?);
        if let (Some(written), ServerBinding::Network(_)) = (written, &*binding) {
            if let Ok(mut by_text) = self.by_text.lock() {
                by_text.insert(written, Arc::clone(&binding));
            }
        }
        Ok(binding)
    }
}

/// Reads a `server` object, network (`url`) or local (`command`); records every problem.
/// `path_var` is the gateway's `PATH`, on which a local server's bare `command[0]` is looked up.
/// When it is invalid: what a collision report says of it.
pub(crate) fn read_server(
    problems: &mut Problems<'_>,
    server: &SmallObject<'_>,
    pointer: &str,
    path_var: Option<&OsStr>,
) -> Result<ServerBinding, ServerSketch> {
    let errors_before = problems.errors.len();
    problems.refuse_unknown_members(server, pointer, SERVER_MEMBERS, WHY_SERVER);

    let display_name = problems.optional_string(
        server,
        pointer,
        "display_name",
        "give a name for people, or remove the member",
    );
    if is_present(server, "command") {
        let local = read_local(problems, server, pointer, display_name.valid(), path_var)?;
        // An unknown member or a bad display_name makes the server object invalid too.
        if problems.errors.len() != errors_before {
            return Err(ServerSketch::of_local(&local));
        }
        return Ok(ServerBinding::Local(local));
    }
    for member in LOCAL_ONLY_MEMBERS {
        if is_present(server, member) {
            let at = problems.at(child(pointer, member));
            problems.push(CatalogError::NotForNetworkServer { at, member });
        }
    }
    let url = problems.required_string(
        server,
        pointer,
        "url",
        "give the upstream's MCP endpoint, e.g. \"https://mcp.example.com/mcp\", or a \
         command to start a local server",
    );
    let parsed_url = match url {
        Field::Valid(text) => match text.parse::<UpstreamUrl>() {
            Ok(parsed) => Some(parsed),
            Err(problem) => {
                let at = problems.at(child(pointer, "url"));
                problems.push(CatalogError::BadUrl {
                    at,
                    url: text.to_owned(),
                    problem,
                });
                None
            }
        },
        Field::Absent | Field::Invalid => None,
    };

    let fingerprint_hint =
        "give the SHA256:<hex> fingerprint of the server's key, or remove the member";
    let fingerprint_text =
        problems.optional_string(server, pointer, "tls_fingerprint", fingerprint_hint);
    let tls_fingerprint = parse_fingerprint(problems, fingerprint_text, || {
        child(pointer, "tls_fingerprint")
    });
    let backup_fingerprints = read_backups(problems, server, pointer, tls_fingerprint);

    let spiffe_text = problems.optional_string(
        server,
        pointer,
        "spiffe_id",
        "give the SPIFFE ID, e.g. \"spiffe://corp.example/crm/mcp-server\", or remove the member",
    );
    let spiffe_id = match spiffe_text {
        Field::Valid(text) => match text.parse::<SpiffeId>() {
            Ok(id) => Field::Valid(id),
            Err(source) => {
                let at = problems.at(child(pointer, "spiffe_id"));
                problems.push(CatalogError::BadSpiffeId { at, source });
                Field::Invalid
            }
        },
        Field::Absent => Field::Absent,
        Field::Invalid => Field::Invalid,
    };

    let rotation_mode = read_mode::<RotationMode>(problems, server, pointer, "rotation_mode");
    let mut tls_trust = read_mode::<TlsTrust>(problems, server, pointer, "tls_trust");
    // Only an explicit `webpki` is refused: the default is what a SPIFFE-only server means.
    if let (Field::Valid(id), Field::Valid(TlsTrust::Webpki)) = (&spiffe_id, tls_trust) {
        let at = problems.at(child(pointer, "tls_trust"));
        problems.push(CatalogError::SpiffeIdWithWebpkiTrust {
            at,
            spiffe_id: id.clone(),
        });
        tls_trust = Field::Invalid;
    }

    // The combination rules are server-identity's (its builder refuses what its verifier
    // could not enforce); they are checked when every anchor field could be read, so that a
    // field that is itself wrong is reported once, as itself.
    let anchors_readable = tls_fingerprint != Field::Invalid
        && backup_fingerprints.is_some()
        && spiffe_id != Field::Invalid
        && tls_trust != Field::Invalid;
    let anchors = if anchors_readable {
        let mut builder = ServerAnchors::builder();
        if let Field::Valid(fingerprint) = tls_fingerprint {
            builder.fingerprint(fingerprint);
        }
        for backup in backup_fingerprints.iter().flatten() {
            builder.backup_fingerprint(*backup);
        }
        if let Field::Valid(id) = spiffe_id.clone() {
            builder.spiffe_id(id);
        }
        builder.rotation_mode(rotation_mode.valid().unwrap_or_default());
        builder.tls_trust(tls_trust.valid().unwrap_or_default());
        match builder.build() {
            Ok(anchors) => Some(anchors),
            Err(source) => {
                let at = problems.at(anchors_error_pointer(pointer, &source));
                problems.push(CatalogError::Anchors { at, source });
                None
            }
        }
    } else {
        None
    };

    // Written only for an invalid server: a valid one is described from its binding
    // (`ServerSketch::of_binding`, the same texts).
    let sketch = || {
        let fingerprint: Option<&dyn fmt::Display> = match (&tls_fingerprint, &fingerprint_text) {
            (Field::Valid(fingerprint), _) => Some(fingerprint),
            (_, Field::Valid(text)) => Some(text),
            _ => None,
        };
        let spiffe_id = spiffe_text.valid();
        ServerSketch::network(
            url.valid().unwrap_or_default(),
            fingerprint,
            spiffe_id.as_ref().map(|id| id as &dyn fmt::Display),
        )
    };

    if problems.errors.len() != errors_before {
        return Err(sketch());
    }
    match parsed_url.zip(anchors) {
        Some((url, anchors)) => Ok(ServerBinding::Network(NetworkServer {
            display_name: display_name.valid().map(str::to_owned),
            url,
            anchors,
        })),
        None => Err(sketch()),
    }
}

/// The member an operator changes to fix `error`: `tls_trust` and `backup_fingerprints` for
/// the rules about them, the `server` object itself when an anchor is missing.
fn anchors_error_pointer(server_pointer: &str, error: &AnchorsError) -> String {
    match error {
        AnchorsError::PinTrustWithoutFingerprint | AnchorsError::PinTrustWithSpiffeId => {
            child(server_pointer, "tls_trust")
        }
        AnchorsError::BackupsWithoutFingerprint => child(server_pointer, "backup_fingerprints"),
        _ => server_pointer.to_owned(),
    }
}

/// `pointer` is built only for a problem (most fingerprints have none).
fn parse_fingerprint(
    problems: &mut Problems<'_>,
    text: Field<&str>,
    pointer: impl FnOnce() -> String,
) -> Field<Fingerprint> {
    match text {
        Field::Valid(text) => match text.parse::<Fingerprint>() {
            Ok(fingerprint) => Field::Valid(fingerprint),
            Err(source) => {
                let at = problems.at(pointer());
                problems.push(CatalogError::BadFingerprint { at, source });
                Field::Invalid
            }
        },
        Field::Absent => Field::Absent,
        Field::Invalid => Field::Invalid,
    }
}

/// `backup_fingerprints`: an array of fingerprint texts, none repeating another or the
/// primary. `None` when a problem was recorded.
fn read_backups(
    problems: &mut Problems<'_>,
    server: &SmallObject<'_>,
    pointer: &str,
    primary: Field<Fingerprint>,
) -> Option<Vec<Fingerprint>> {
    let elements = problems.optional_array(
        server,
        pointer,
        "backup_fingerprints",
        "an array of fingerprint strings",
    )?;
    // Pointers are built only for a problem (most entries have none).
    let element_pointer = |index: usize| element(&child(pointer, "backup_fingerprints"), index);
    // Each fingerprint seen, and where: the backup's index, or `None` for the primary.
    let mut seen: Vec<(Fingerprint, Option<usize>)> = Vec::with_capacity(elements.len() + 1);
    if let Field::Valid(primary) = primary {
        seen.push((primary, None));
    }
    let mut backups = Vec::with_capacity(elements.len());
    let mut all_valid = true;
    for (index, element_value) in elements.iter().enumerate() {
        let text = match element_value {
            SmallValue::String(text) => Field::Valid(&**text),
            other => {
                problems.wrong_type(element_pointer(index), "a fingerprint string", other);
                all_valid = false;
                continue;
            }
        };
        let Field::Valid(fingerprint) =
            parse_fingerprint(problems, text, || element_pointer(index))
        else {
            all_valid = false;
            continue;
        };
        if let Some((_, first)) = seen.iter().find(|(known, _)| *known == fingerprint) {
            let at = problems.at(element_pointer(index));
            let first = match first {
                Some(first) => element_pointer(*first),
                None => child(pointer, "tls_fingerprint"),
            };
            problems.push(CatalogError::DuplicateFingerprint {
                at,
                fingerprint,
                first,
            });
            all_valid = false;
            continue;
        }
        seen.push((fingerprint, Some(index)));
        backups.push(fingerprint);
    }
    all_valid.then_some(backups)
}

/// `rotation_mode` or `tls_trust`.
fn read_mode<M>(
    problems: &mut Problems<'_>,
    server: &SmallObject<'_>,
    pointer: &str,
    member: &'static str,
) -> Field<M>
where
    M: std::str::FromStr<Err = server_identity::ModeError>,
{
    let hint = "remove the member to use the default";
    match problems.optional_string(server, pointer, member, hint) {
        Field::Valid(text) => match text.parse::<M>() {
            Ok(mode) => Field::Valid(mode),
            Err(source) => {
                let at = problems.at(child(pointer, member));
                problems.push(CatalogError::UnknownMode { at, source });
                Field::Invalid
            }
        },
        Field::Absent => Field::Absent,
        Field::Invalid => Field::Invalid,
    }
}
