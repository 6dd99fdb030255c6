//! Why a catalog does not load: every problem found, each naming the entry, the field and the fix.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use jcs_digest::{Digest, DigestParseError, StrictJsonError};
use server_identity::{
    AnchorsError, EntrypointError, FileDigestError, Fingerprint, FingerprintError, ModeError,
    SpiffeId, SpiffeIdError,
};

use crate::binding::{AnchorsText, DigestsText, LocalServer, NetworkServer};
use crate::code_points::CodePoints;
use crate::location::Location;
use crate::printable::Printable;
use crate::upstream_url::UrlProblem;

/// A catalog that could not be loaded.
///
/// [`Read`](Self::Read) is an I/O problem (the program exits 2); [`Invalid`](Self::Invalid)
/// holds every problem found in the bytes (the program exits 1).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogLoadError {
    /// The file could not be read.
    #[error("cannot read the catalog {}: {source}; check the path and its permissions", path.display())]
    Read {
        /// The path given to [`Catalog::load`](crate::Catalog::load).
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// The bytes were read but are not a valid catalog. Nothing of it is usable: a catalog is
    /// all or nothing (seed 003 §3, "fails closed").
    #[error("{}", InvalidReport { path: path.as_deref(), errors })]
    Invalid {
        /// The file, when the catalog was loaded from one.
        path: Option<PathBuf>,
        /// Every problem found: each entry's own problems in file order, then server identities
        /// that conflict, then duplicate tool names. Never empty.
        errors: Vec<CatalogError>,
    },
}

impl CatalogLoadError {
    /// The problems found in an invalid catalog; empty for [`Read`](Self::Read).
    pub fn errors(&self) -> &[CatalogError] {
        match self {
            CatalogLoadError::Invalid { errors, .. } => errors,
            CatalogLoadError::Read { .. } => &[],
        }
    }
}

/// The `Display` of [`CatalogLoadError::Invalid`]: a header line, then each problem.
struct InvalidReport<'a> {
    path: Option<&'a Path>,
    errors: &'a [CatalogError],
}

impl fmt::Display for InvalidReport<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.errors.len();
        let plural = if count == 1 { "" } else { "s" };
        match self.path {
            Some(path) => write!(
                f,
                "the catalog {} is invalid ({count} error{plural}):",
                path.display()
            )?,
            None => write!(f, "the catalog is invalid ({count} error{plural}):")?,
        }
        for error in self.errors {
            write!(f, "\n{error}")?;
        }
        Ok(())
    }
}

/// One problem in a catalog.
///
/// Each variant but [`Json`](Self::Json), [`NotACatalog`](Self::NotACatalog) and
/// [`DuplicateToolName`](Self::DuplicateToolName) carries a [`Location`]: the entry (index and
/// `tool_name`) and the JSON Pointer of the field. `Display` says what is wrong, where, and
/// what to write instead.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogError {
    /// The bytes are not JSON, or JSON the strict reader refuses (docs/design.md §2, "Strict JSON").
    #[error("the catalog is not strict JSON: {source}")]
    Json {
        /// The reader's error, with line, column and JSON Pointer.
        source: StrictJsonError,
    },
    /// The document is neither an array of entries nor an object with `entries`.
    #[error(
        "the catalog is a JSON {found}; write a JSON array of entries, or an object \
         {{\"catalog_version\": \"...\", \"entries\": [...]}}"
    )]
    NotACatalog {
        /// The JSON type found at the document root.
        found: &'static str,
    },
    /// A member the schema does not know: most likely a typo, which must not load quietly.
    #[error(
        "{at}: unknown member {member:?}{}; the members allowed here are {}. {why}",
        Suggestion(*suggestion),
        allowed.join(", ")
    )]
    UnknownMember {
        /// Where: the pointer of the unknown member.
        at: Location,
        /// The member name as written.
        member: String,
        /// A known member name that differs from it only slightly.
        suggestion: Option<&'static str>,
        /// The member names allowed in this object.
        allowed: &'static [&'static str],
        /// Why unknown members are refused here.
        why: &'static str,
    },
    /// A required member is absent.
    #[error("{at}: required member {member:?} is missing; {hint}")]
    MissingMember {
        /// Where: the pointer the member would have.
        at: Location,
        /// The missing member.
        member: &'static str,
        /// What to add.
        hint: &'static str,
    },
    /// A member holds the wrong JSON type.
    #[error("{at}: expected {expected}, found {found}; write {expected} here")]
    WrongType {
        /// Where: the pointer of the value.
        at: Location,
        /// The JSON type the schema wants, e.g. `a string`.
        expected: &'static str,
        /// The JSON type found, e.g. `a number`.
        found: &'static str,
    },
    /// A string member that must not be empty is empty.
    #[error("{at}: {member} is empty; {hint}")]
    EmptyValue {
        /// Where: the pointer of the value.
        at: Location,
        /// The member.
        member: &'static str,
        /// What to write.
        hint: &'static str,
    },
    /// `server.url` is not an absolute `https` URL with a host, without user info or fragment.
    #[error("{at}: the URL {url:?} is refused: {problem}")]
    BadUrl {
        /// Where: the pointer of the URL.
        at: Location,
        /// The URL as written.
        url: String,
        /// What is wrong with it.
        problem: UrlProblem,
    },
    /// A `tls_fingerprint` or `backup_fingerprints` element does not parse.
    #[error("{at}: {source}")]
    BadFingerprint {
        /// Where: the pointer of the fingerprint text.
        at: Location,
        /// The parse error, which lists the accepted forms.
        source: FingerprintError,
    },
    /// The same fingerprint is listed twice among `tls_fingerprint` and `backup_fingerprints`.
    #[error(
        "{at}: fingerprint {fingerprint} is already listed at {first}; list each fingerprint once"
    )]
    DuplicateFingerprint {
        /// Where: the pointer of the repeated fingerprint.
        at: Location,
        /// The fingerprint, canonical.
        fingerprint: Fingerprint,
        /// The JSON Pointer of its first occurrence.
        first: String,
    },
    /// The anchors do not form a usable set (`server-identity`'s rules, seed 003 §1 and
    /// docs/design.md §3): no anchor at all, `tls_trust` `pin` without a fingerprint or with a SPIFFE
    /// ID, or backups without a primary fingerprint.
    #[error("{at}: {source}")]
    Anchors {
        /// Where: the `server` object, or the member to change (`tls_trust`,
        /// `backup_fingerprints`).
        at: Location,
        /// The rule that is broken, with its fix.
        source: AnchorsError,
    },
    /// `spiffe_id` together with an explicit `tls_trust: "webpki"` (docs/design.md §3): an
    /// X509-SVID carries no host name for the web PKI check, the SPIFFE ID and its trust
    /// domain's bundle replace that check, so writing both is a misunderstanding.
    #[error(
        "{at}: tls_trust \"webpki\" is written together with spiffe_id {spiffe_id}, but the SVID \
         replaces the web PKI check (an X509-SVID carries no host name; its chain is checked \
         against the trust bundle of its trust domain): remove tls_trust, or remove spiffe_id \
         to trust the web PKI"
    )]
    SpiffeIdWithWebpkiTrust {
        /// Where: the pointer of `tls_trust`.
        at: Location,
        /// The SPIFFE ID written next to it.
        spiffe_id: SpiffeId,
    },
    /// A `tool_name` or `upstream_name` holds control characters (C0, DEL, C1): a name is
    /// shown to people and models and written to logs, and a control character in it can
    /// hide, reorder or forge what they read.
    #[error(
        "{at}: {member} contains control characters ({code_points}); a tool name is shown to \
         people and models and written to logs, where control characters can hide or forge \
         text: remove them"
    )]
    ControlCharacters {
        /// Where: the pointer of the name.
        at: Location,
        /// `tool_name` or `upstream_name`.
        member: &'static str,
        /// The control characters, in order of appearance.
        code_points: CodePoints,
    },
    /// `spiffe_id` is not a SPIFFE ID.
    #[error("{at}: {source}")]
    BadSpiffeId {
        /// Where: the pointer of `spiffe_id`.
        at: Location,
        /// The parse error.
        source: SpiffeIdError,
    },
    /// `rotation_mode` or `tls_trust` is not one of its known values.
    #[error("{at}: {source}")]
    UnknownMode {
        /// Where: the pointer of the value.
        at: Location,
        /// The parse error, which lists the known values.
        source: ModeError,
    },
    /// `added_at` is not an RFC 3339 date-time.
    #[error(
        "{at}: added_at {value:?} is not an RFC 3339 date-time ({reason}); write it as, for \
         example, \"2026-06-01T00:00:00Z\""
    )]
    BadAddedAt {
        /// Where: the pointer of `added_at`.
        at: Location,
        /// The value as written.
        value: String,
        /// The first rule it breaks.
        reason: &'static str,
    },
    /// `definition_hash` is not a `sha256:<64 lowercase hex>` text.
    #[error("{at}: definition_hash {value:?} is not a digest: {source}{}", Recomputed(*recomputed))]
    BadDefinitionHash {
        /// Where: the pointer of `definition_hash`.
        at: Location,
        /// The value as written.
        value: String,
        /// The parse error.
        source: DigestParseError,
        /// What the approved definition hashes to, when it could be hashed.
        recomputed: Option<Digest>,
    },
    /// `definition_hash` is absent; the catalog requires it so that approval is explicit.
    #[error(
        "{at}: required member \"definition_hash\" is missing; the approved definition hashes \
         to {recomputed}: if it is the definition you approved, add \"definition_hash\": \
         \"{recomputed}\""
    )]
    MissingDefinitionHash {
        /// Where: the pointer `definition_hash` would have.
        at: Location,
        /// What the approved definition hashes to.
        recomputed: Digest,
    },
    /// `definition_hash` is not the digest of the approved definition.
    #[error(
        "{at}: definition_hash does not recompute: the file says {stored}, the \
         approved_definition (with name {upstream_name:?}) hashes to {recomputed}; if \
         approved_definition is what you approved, set definition_hash to {recomputed}, \
         otherwise restore the approved definition"
    )]
    DefinitionHashMismatch {
        /// Where: the pointer of `definition_hash`.
        at: Location,
        /// The value in the file.
        stored: Digest,
        /// The digest of the normalized approved definition.
        recomputed: Digest,
        /// The `name` the definition was hashed with.
        upstream_name: String,
    },
    /// The approved definition carries a member in both spellings (`inputSchema` and
    /// `input_schema`): which one is approved would be ambiguous.
    #[error(
        "{at}: the definition carries both {mcp:?} and {snake:?}; keep one of them ({mcp:?} is the MCP spelling)"
    )]
    BothSpellings {
        /// Where: the pointer of the snake_case member.
        at: Location,
        /// The MCP spelling.
        mcp: &'static str,
        /// The snake_case spelling.
        snake: &'static str,
    },
    /// The approved definition has a `name` other than the upstream name it is hashed with.
    #[error(
        "{at}: approved_definition.name {name:?} is not the upstream name {upstream_name:?}; a \
         live definition must carry the upstream name (upstream_name, default tool_name), so \
         remove \"name\" or set upstream_name to {name:?}"
    )]
    DefinitionNameMismatch {
        /// Where: the pointer of `approved_definition/name`.
        at: Location,
        /// The name in the definition.
        name: String,
        /// The entry's upstream name.
        upstream_name: String,
    },
    /// Two entries bind one TLS endpoint (the same `https` host and port, whatever the path)
    /// to different identities: `tls_fingerprint`, `backup_fingerprints` (as a set),
    /// `spiffe_id`, `rotation_mode` or `tls_trust` differ. The endpoint presents one
    /// certificate whichever tool is called, so one of the two entries fails its identity
    /// check, now or at the next renewal, or two identities were approved for one server
    /// without anyone noticing. The whole catalog is refused; a planned key rotation is
    /// written as `backup_fingerprints` on every entry for the endpoint.
    ///
    /// Each entry that differs from the earliest entry for its endpoint is reported once,
    /// against that entry.
    #[error("{}", IdentityConflictMessage { at, binding, other, other_binding, endpoint, differences })]
    ConflictingServerIdentity {
        /// The later entry's `server` object.
        at: Location,
        /// The later entry's server: its URL and its anchors.
        binding: Box<NetworkServer>,
        /// The earlier entry's `server` object.
        other: Location,
        /// The earlier entry's server: its URL and its anchors.
        other_binding: Box<NetworkServer>,
        /// The endpoint both URLs reach, `host:port` (host lowercase, port 443 when absent).
        endpoint: String,
        /// The members that differ, in schema order (`tls_fingerprint`, …, `tls_trust`).
        differences: Vec<&'static str>,
    },
    /// A network server's member (`url`, `tls_fingerprint`, `backup_fingerprints`,
    /// `spiffe_id`, `rotation_mode`, `tls_trust`) on a server that has a `command`.
    #[error(
        "{at}: {member} is a network server's member, but this server has a command (a local \
         server, identified by its entrypoint_digests); a server has either url or command, \
         never both: remove {member}"
    )]
    NotForLocalServer {
        /// Where: the pointer of the member.
        at: Location,
        /// The member.
        member: &'static str,
    },
    /// A local server's member (`cwd`, `env`, `inherit_env`, `entrypoint_digests`) on a
    /// server without a `command`.
    #[error(
        "{at}: {member} is a local server's member, but this server has no command (it is a \
         network server, reached at its url): remove {member}, or replace url with command"
    )]
    NotForNetworkServer {
        /// Where: the pointer of the member.
        at: Location,
        /// The member.
        member: &'static str,
    },
    /// A process argument, path or environment text holds a NUL, which none can carry.
    #[error(
        "{at}: the text holds a NUL character (U+0000), which no process argument, path or \
         environment variable can carry: remove it"
    )]
    NulCharacter {
        /// Where: the pointer of the text.
        at: Location,
    },
    /// A path that must be absolute is not (`cwd`, `command[0]` with a `/`), or an
    /// `entrypoint_digests` key names no file.
    #[error("{at}: {path:?} is not usable here; {hint}")]
    RelativePath {
        /// Where: the pointer of the path.
        at: Location,
        /// The path as written.
        path: String,
        /// What to write instead.
        hint: &'static str,
    },
    /// A bare `command[0]` is not an executable file in any absolute directory of the
    /// gateway's `PATH`.
    #[error(
        "{at}: the program {program:?} is not an executable file in any absolute directory of \
         the gateway's PATH ({}); write its absolute path, or install it",
        PathList(searched)
    )]
    ProgramNotFound {
        /// Where: the pointer of `command[0]`.
        at: Location,
        /// The name as written.
        program: String,
        /// The directories searched, in order.
        searched: Vec<PathBuf>,
    },
    /// The program `command[0]` resolves to is not one of the `entrypoint_digests`.
    #[error(
        "{at}: the program {} (command[0]) is not listed ({}); its digest is what identifies \
         this server before every spawn: add \"{}\": \"sha256:...\"",
        Printable(&program.to_string_lossy()),
        ListedPaths(listed),
        Printable(&program.to_string_lossy())
    )]
    ProgramNotDigested {
        /// Where: the pointer of `entrypoint_digests`.
        at: Location,
        /// The resolved program.
        program: PathBuf,
        /// The paths listed, resolved, in path order.
        listed: Vec<PathBuf>,
    },
    /// An `env` member name or an `inherit_env` element is not a variable name.
    #[error(
        "{at}: {name:?} is not an environment variable name (empty, or holding '=' or NUL); \
         fix the name"
    )]
    BadVariableName {
        /// Where: the pointer of the name.
        at: Location,
        /// The name as written.
        name: String,
    },
    /// A variable is listed twice in `inherit_env`.
    #[error("{at}: {name:?} is already listed at {first}; list each variable once")]
    DuplicateVariable {
        /// Where: the pointer of the repetition.
        at: Location,
        /// The variable.
        name: String,
        /// The JSON Pointer of its first occurrence.
        first: String,
    },
    /// A variable is both set in `env` and inherited.
    #[error(
        "{at}: {name:?} is both set in env and inherited (inherit_env), so which value the \
         server gets would be ambiguous: keep one"
    )]
    VariableSetAndInherited {
        /// Where: the pointer of the `inherit_env` element.
        at: Location,
        /// The variable.
        name: String,
    },
    /// An `entrypoint_digests` value is not a `sha256:<64 hex>` text.
    #[error("{at}: {source}")]
    BadEntrypointDigest {
        /// Where: the pointer of the digest.
        at: Location,
        /// The parse error (`server-identity`'s, which says what to write).
        source: FileDigestError,
    },
    /// An `entrypoint_digests` path cannot join the set (two keys resolve to one file).
    #[error("{at}: {source}")]
    Entrypoint {
        /// Where: the pointer of the path.
        at: Location,
        /// Why.
        source: EntrypointError,
    },
    /// Two entries start the same local command (argv, cwd, env) with different
    /// `entrypoint_digests`: the same files run whichever tool is called, so one of the two
    /// fails its entrypoint check before every spawn, or two versions were approved for one
    /// server unnoticed. The whole catalog is refused, like
    /// [`ConflictingServerIdentity`](Self::ConflictingServerIdentity).
    #[error(
        "{at}: the local server {binding} is bound here to entrypoint_digests {}, but {other} \
         binds the same command, cwd and env to {}; the same command runs the same files \
         whichever tool is called, so one of the two entries fails its entrypoint check before \
         every spawn, or two versions were approved for one server unnoticed: give every entry \
         for this command the same entrypoint_digests",
        DigestsText(binding.entrypoint_digests()),
        DigestsText(other_binding.entrypoint_digests())
    )]
    ConflictingLocalIdentity {
        /// The later entry's `server` object.
        at: Location,
        /// The later entry's server.
        binding: Box<LocalServer>,
        /// The earlier entry's `server` object.
        other: Location,
        /// The earlier entry's server.
        other_binding: Box<LocalServer>,
    },
    /// Two or more entries share one `tool_name` (seed 003 §3): the whole catalog is refused.
    ///
    /// `Display` is the seed's message word for word, one line per entry in file order. With
    /// three or more entries the count word changes (`three different servers`); an entry
    /// repeated for the same server shows two identical lines, and is refused all the same.
    #[error("{}", CollisionMessage { tool_name, entries })]
    DuplicateToolName {
        /// The shared name.
        tool_name: String,
        /// The entries that carry it, in file order.
        entries: Vec<CollidingEntry>,
    },
}

impl CatalogError {
    /// Where the problem is, for problems that belong to one field of one entry (or of the
    /// catalog object); `None` for [`Json`](Self::Json), [`NotACatalog`](Self::NotACatalog) and
    /// [`DuplicateToolName`](Self::DuplicateToolName).
    pub fn location(&self) -> Option<&Location> {
        match self {
            CatalogError::Json { .. }
            | CatalogError::NotACatalog { .. }
            | CatalogError::DuplicateToolName { .. } => None,
            CatalogError::UnknownMember { at, .. }
            | CatalogError::MissingMember { at, .. }
            | CatalogError::WrongType { at, .. }
            | CatalogError::EmptyValue { at, .. }
            | CatalogError::Anchors { at, .. }
            | CatalogError::BadUrl { at, .. }
            | CatalogError::BadFingerprint { at, .. }
            | CatalogError::DuplicateFingerprint { at, .. }
            | CatalogError::BadSpiffeId { at, .. }
            | CatalogError::SpiffeIdWithWebpkiTrust { at, .. }
            | CatalogError::ControlCharacters { at, .. }
            | CatalogError::UnknownMode { at, .. }
            | CatalogError::BadAddedAt { at, .. }
            | CatalogError::BadDefinitionHash { at, .. }
            | CatalogError::MissingDefinitionHash { at, .. }
            | CatalogError::DefinitionHashMismatch { at, .. }
            | CatalogError::BothSpellings { at, .. }
            | CatalogError::DefinitionNameMismatch { at, .. }
            | CatalogError::ConflictingServerIdentity { at, .. }
            | CatalogError::NotForLocalServer { at, .. }
            | CatalogError::NotForNetworkServer { at, .. }
            | CatalogError::NulCharacter { at }
            | CatalogError::RelativePath { at, .. }
            | CatalogError::ProgramNotFound { at, .. }
            | CatalogError::ProgramNotDigested { at, .. }
            | CatalogError::BadVariableName { at, .. }
            | CatalogError::DuplicateVariable { at, .. }
            | CatalogError::VariableSetAndInherited { at, .. }
            | CatalogError::BadEntrypointDigest { at, .. }
            | CatalogError::Entrypoint { at, .. }
            | CatalogError::ConflictingLocalIdentity { at, .. } => Some(at),
        }
    }
}

/// One entry of a [`CatalogError::DuplicateToolName`]: the server it names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CollidingEntry {
    pub(crate) index: usize,
    pub(crate) url: String,
    pub(crate) identity: String,
}

impl CollidingEntry {
    /// The 0-based index of the entry.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The entry's `server.url` as written.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// `tls_fingerprint: SHA256:<hex>`, or `spiffe_id: <id>` when the entry has no
    /// fingerprint, or `no identity anchor`.
    pub fn identity(&self) -> &str {
        &self.identity
    }
}

/// Seed 003 §3's message. The example values are replaced; the text and layout are kept.
struct CollisionMessage<'a> {
    tool_name: &'a str,
    entries: &'a [CollidingEntry],
}

impl fmt::Display for CollisionMessage<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Duplicate tool name in catalog: {:?} is registered by {} different servers:",
            self.tool_name,
            CountWord(self.entries.len())
        )?;
        for entry in self.entries {
            write!(
                f,
                "\n  - {} ({})",
                Printable(&entry.url),
                Printable(&entry.identity)
            )?;
        }
        f.write_str("\nEach tool name must map to exactly one upstream server.")
    }
}

/// The message of [`CatalogError::ConflictingServerIdentity`]: both entries, both URLs, both
/// identities, what differs, and the fix.
struct IdentityConflictMessage<'a> {
    at: &'a Location,
    binding: &'a NetworkServer,
    other: &'a Location,
    other_binding: &'a NetworkServer,
    endpoint: &'a str,
    differences: &'a [&'static str],
}

impl fmt::Display for IdentityConflictMessage<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (url, other_url) = (
            self.binding.url().as_str(),
            self.other_binding.url().as_str(),
        );
        write!(
            f,
            "{}: the server {} is bound here to {}, but {} binds ",
            self.at,
            Printable(url),
            AnchorsText(self.binding.anchors()),
            self.other,
        )?;
        if url == other_url {
            f.write_str("the same URL")?;
        } else {
            write!(
                f,
                "{}, the same TLS endpoint {},",
                Printable(other_url),
                self.endpoint
            )?;
        }
        write!(
            f,
            " to {} (they differ in {}); the endpoint presents one certificate whichever tool is \
             called, so one of the two entries fails its identity check, now or at the next \
             renewal, or two identities were approved for one server unnoticed: give every entry \
             for {} the same tls_fingerprint, backup_fingerprints, spiffe_id, rotation_mode and \
             tls_trust (for a planned key rotation, list the new key in backup_fingerprints of \
             each)",
            AnchorsText(self.other_binding.anchors()),
            self.differences.join(", "),
            self.endpoint,
        )
    }
}

/// A count in words, as the seed writes "two": `two` to `twelve`, then digits.
struct CountWord(usize);

impl fmt::Display for CountWord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const WORDS: [&str; 11] = [
            "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
            "twelve",
        ];
        match self.0.checked_sub(2).and_then(|i| WORDS.get(i)) {
            Some(word) => f.write_str(word),
            None => write!(f, "{}", self.0),
        }
    }
}

/// ` (did you mean "x"?)`, or nothing.
struct Suggestion(Option<&'static str>);

impl fmt::Display for Suggestion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(name) => write!(f, " (did you mean {name:?}?)"),
            None => Ok(()),
        }
    }
}

/// `; the approved definition hashes to X`, or nothing.
struct Recomputed(Option<Digest>);

impl fmt::Display for Recomputed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(digest) => write!(
                f,
                "; the approved definition hashes to {digest}: if it is the definition you approved, write that"
            ),
            None => Ok(()),
        }
    }
}

/// Directories, `:`-separated as `PATH` writes them, or `PATH is empty or unset`.
struct PathList<'a>(&'a [PathBuf]);

impl fmt::Display for PathList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("it has none");
        }
        for (position, path) in self.0.iter().enumerate() {
            if position > 0 {
                f.write_str(":")?;
            }
            write!(f, "{}", Printable(&path.to_string_lossy()))?;
        }
        Ok(())
    }
}

/// `listed: a, b`.
struct ListedPaths<'a>(&'a [PathBuf]);

impl fmt::Display for ListedPaths<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("listed: ")?;
        for (position, path) in self.0.iter().enumerate() {
            if position > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}", Printable(&path.to_string_lossy()))?;
        }
        Ok(())
    }
}
