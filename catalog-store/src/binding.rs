//! The server an entry is bound to, as values: where it is and how to know it is the one
//! (seed 003 §1, docs/design.md §3). Reading them from the file is `server.rs`'s business.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use server_identity::{
    EntrypointDigests, Fingerprint, RotationMode, ServerAnchors, SpiffeId, TlsTrust,
};

use crate::printable::Printable;
use crate::upstream_url::UpstreamUrl;

/// The upstream server an entry is bound to.
///
/// One variant per kind of upstream, each with only the members that kind has, so that code
/// cannot ask a local server for its URL or forget that a server may not have one: the gateway
/// matches, and refuses a kind it does not serve.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerBinding {
    /// Reached over pinned TLS at a URL (`server.url`).
    Network(NetworkServer),
    /// Started as a local process speaking JSON-RPC on stdin and stdout (`server.command`),
    /// identified by the digests of the files it is started from.
    Local(LocalServer),
}

impl ServerBinding {
    /// `display_name`, for people; not part of the binding or the measurement.
    pub fn display_name(&self) -> Option<&str> {
        match self {
            ServerBinding::Network(server) => server.display_name(),
            ServerBinding::Local(server) => server.display_name(),
        }
    }

    /// The network server, or `None` for another kind.
    pub fn network(&self) -> Option<&NetworkServer> {
        match self {
            ServerBinding::Network(server) => Some(server),
            ServerBinding::Local(_) => None,
        }
    }

    /// The local server, or `None` for another kind.
    pub fn local(&self) -> Option<&LocalServer> {
        match self {
            ServerBinding::Local(server) => Some(server),
            ServerBinding::Network(_) => None,
        }
    }

    /// How a person recognises the server in a report: the URL as written, or for a local
    /// server its command (`command [...] (program /usr/bin/node) in /opt/mcp`), with the
    /// program `command[0]` resolved to.
    pub fn location_text(&self) -> String {
        match self {
            ServerBinding::Network(server) => server.url().as_str().to_owned(),
            ServerBinding::Local(server) => server.to_string(),
        }
    }

    /// Everything that identifies the server of an entry of a catalog that loaded, without
    /// the display name: entries with equal keys share one upstream connection (or process).
    ///
    /// A network server's key is its URL as written, not allocated: in a catalog that loaded,
    /// entries whose URLs reach one TLS endpoint carry one identity (`endpoint.rs` refuses it
    /// otherwise), so two entries with one URL have the same anchors. A local server's key
    /// starts with `local`, which no URL (`https://…`) does.
    pub(crate) fn identity_key(&self) -> Cow<'_, str> {
        match self {
            ServerBinding::Network(server) => Cow::Borrowed(server.url().as_str()),
            // Debug escapes every string, so distinct servers cannot collide.
            ServerBinding::Local(server) => Cow::Owned(format!(
                "local\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}",
                server.command,
                server.cwd,
                server.env,
                server.inherit_env,
                server.entrypoint_digests
            )),
        }
    }
}

/// What a collision report says about an entry's server, readable even when the entry is not.
#[derive(Clone)]
pub(crate) struct ServerSketch {
    pub(crate) url: String,
    pub(crate) identity: String,
}

impl ServerSketch {
    /// The sketch of a valid server, from the values it was read into: the texts
    /// [`network`](Self::network) and [`local`](Self::local) write for one that is not
    /// valid. Written only for a collision report, not for every entry.
    pub(crate) fn of_binding(binding: &ServerBinding) -> ServerSketch {
        match binding {
            ServerBinding::Network(server) => ServerSketch::network(
                server.url().as_str(),
                server.tls_fingerprint().map(|f| f as &dyn fmt::Display),
                server.spiffe_id().map(|id| id as &dyn fmt::Display),
            ),
            ServerBinding::Local(server) => ServerSketch::of_local(server),
        }
    }

    /// [`of_binding`](Self::of_binding) of a local server.
    pub(crate) fn of_local(server: &LocalServer) -> ServerSketch {
        ServerSketch::local(
            Some(server.command()),
            Some(server.program()),
            Some(server.entrypoint_digests()),
        )
    }

    /// A network server: its URL as far as it was read, and the first identity anchor it
    /// gives (the fingerprint before the SPIFFE ID).
    pub(crate) fn network(
        url: &str,
        fingerprint: Option<&dyn fmt::Display>,
        spiffe_id: Option<&dyn fmt::Display>,
    ) -> ServerSketch {
        ServerSketch {
            url: url.to_owned(),
            identity: match (fingerprint, spiffe_id) {
                (Some(fingerprint), _) => format!("tls_fingerprint: {fingerprint}"),
                (None, Some(id)) => format!("spiffe_id: {id}"),
                (None, None) => "no identity anchor".to_owned(),
            },
        }
    }

    /// A local server: its command and program, and the digest of the program, as far as
    /// they were read.
    pub(crate) fn local(
        command: Option<&[String]>,
        program: Option<&Path>,
        digests: Option<&EntrypointDigests>,
    ) -> ServerSketch {
        ServerSketch {
            url: match (command, program) {
                (Some(command), Some(program)) => {
                    format!("command {command:?} (program {})", program.display())
                }
                (Some(command), None) => format!("command {command:?}"),
                _ => "command (unreadable)".to_owned(),
            },
            identity: match (program, digests) {
                (Some(program), Some(digests)) => digests
                    .iter()
                    .find(|(path, _)| *path == program)
                    .map_or_else(
                        || "no digest for the program".to_owned(),
                        |(_, digest)| {
                            format!("entrypoint_digests: {digest} for {}", program.display())
                        },
                    ),
                _ => "entrypoint_digests unreadable".to_owned(),
            },
        }
    }

    /// The sketch of an entry without a readable `server` object.
    pub(crate) fn no_server() -> ServerSketch {
        ServerSketch {
            url: String::new(),
            identity: "no server".to_owned(),
        }
    }
}

/// A network upstream: its URL and the identity anchors its TLS handshake must satisfy.
///
/// The anchors are `server-identity`'s [`ServerAnchors`], built (and so checked) by its own
/// builder: exactly what the gateway hands to the handshake verifier. Fingerprints compare in
/// constant time and display in the canonical `SHA256:<64 lowercase hex>` form whatever form
/// the file used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetworkServer {
    pub(crate) display_name: Option<String>,
    pub(crate) url: UpstreamUrl,
    pub(crate) anchors: ServerAnchors,
}

impl NetworkServer {
    /// `display_name`, for people; not part of the binding or the measurement.
    pub fn display_name(&self) -> Option<&str> {
        self.display_name.as_deref()
    }

    /// `url`, parsed: the gateway connects with its parts; `as_str()` is the URL as written.
    pub fn url(&self) -> &UpstreamUrl {
        &self.url
    }

    /// The identity anchors the handshake must satisfy.
    pub fn anchors(&self) -> &ServerAnchors {
        &self.anchors
    }

    /// `tls_fingerprint`: the pin the server's key (or certificate) must match.
    pub fn tls_fingerprint(&self) -> Option<&Fingerprint> {
        self.anchors.fingerprint()
    }

    /// `backup_fingerprints`, in file order: also accepted, for a planned key rotation. Empty
    /// unless there is a `tls_fingerprint`.
    pub fn backup_fingerprints(&self) -> &[Fingerprint] {
        self.anchors.backup_fingerprints()
    }

    /// `spiffe_id`: the SPIFFE ID the server's SVID must carry.
    pub fn spiffe_id(&self) -> Option<&SpiffeId> {
        self.anchors.spiffe_id()
    }

    /// `rotation_mode`; `key-pinned` when absent.
    pub fn rotation_mode(&self) -> RotationMode {
        self.anchors.rotation_mode()
    }

    /// `tls_trust`; `webpki` when absent. `pin` only ever comes with a `tls_fingerprint` and
    /// without a `spiffe_id`.
    pub fn tls_trust(&self) -> TlsTrust {
        self.anchors.tls_trust()
    }

    /// The backups in canonical text order: a set, whatever order the file lists them in.
    pub(crate) fn sorted_backup_fingerprints(&self) -> Vec<String> {
        sorted_backup_fingerprints(&self.anchors)
    }
}

/// A local upstream: the process to start and the digests of the files it is started from
/// (docs/design.md §3, "Local (stdio) upstreams").
///
/// The child gets exactly [`env`](Self::env) plus the gateway's [`inherit_env`](Self::inherit_env)
/// variables and runs in [`cwd`](Self::cwd); before every spawn each file of
/// [`entrypoint_digests`](Self::entrypoint_digests) is hashed, and a mismatch starts nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalServer {
    pub(crate) display_name: Option<String>,
    pub(crate) command: Vec<String>,
    pub(crate) program: PathBuf,
    pub(crate) cwd: PathBuf,
    pub(crate) env: BTreeMap<String, String>,
    pub(crate) inherit_env: Vec<String>,
    pub(crate) entrypoint_digests: EntrypointDigests,
}

impl LocalServer {
    /// `display_name`, for people; not part of the binding or the measurement.
    pub fn display_name(&self) -> Option<&str> {
        self.display_name.as_deref()
    }

    /// `command`, as written: the program and its arguments (never empty).
    pub fn command(&self) -> &[String] {
        &self.command
    }

    /// The program to execute: `command[0]` when absolute, otherwise the file it resolved to
    /// on the gateway's `PATH` at load. Always one of the
    /// [`entrypoint_digests`](Self::entrypoint_digests).
    pub fn program(&self) -> &Path {
        &self.program
    }

    /// `cwd`: the absolute directory the process runs in.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// `env`: the variables set for the process.
    pub fn env(&self) -> &BTreeMap<String, String> {
        &self.env
    }

    /// `inherit_env`: the gateway's variables passed on (when set), in file order.
    pub fn inherit_env(&self) -> &[String] {
        &self.inherit_env
    }

    /// `entrypoint_digests`, every path absolute (relative ones resolved against `cwd`).
    pub fn entrypoint_digests(&self) -> &EntrypointDigests {
        &self.entrypoint_digests
    }

    /// `inherit_env` in sorted order: a set, whatever order the file lists it in.
    pub(crate) fn sorted_inherit_env(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.inherit_env.iter().map(String::as_str).collect();
        names.sort_unstable();
        names
    }
}

impl fmt::Display for LocalServer {
    /// `command ["node", "dist/index.js"] (program /usr/bin/node) in /opt/mcp`, escaped.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "command {:?} (program {}) in {}",
            self.command,
            Printable(&self.program.to_string_lossy()),
            Printable(&self.cwd.to_string_lossy())
        )
    }
}

/// The entrypoint digests in full, `{/usr/bin/node: sha256:…, …}`, in path order.
pub(crate) struct DigestsText<'a>(pub(crate) &'a EntrypointDigests);

impl fmt::Display for DigestsText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (position, (path, digest)) in self.0.iter().enumerate() {
            if position > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}: {digest}", Printable(&path.to_string_lossy()))?;
        }
        f.write_str("}")
    }
}

/// The backups of `anchors` in canonical text order: a set, whatever order the file lists them
/// in (the measurement and the one-identity-per-endpoint rule both compare them this way).
pub(crate) fn sorted_backup_fingerprints(anchors: &ServerAnchors) -> Vec<String> {
    let mut texts: Vec<String> = anchors
        .backup_fingerprints()
        .iter()
        .map(ToString::to_string)
        .collect();
    texts.sort_unstable();
    texts
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
