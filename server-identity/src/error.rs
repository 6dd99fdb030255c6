//! `IdentityError`: why a handshake was refused, precise enough to log and act on
//! (seed 003 §4 "Identity Mismatch Handling", docs/design.md §3 "Failures carry a precise reason").

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;

use crate::entrypoint::FileDigest;
use crate::fingerprint::Fingerprint;
use crate::modes::RotationMode;
use crate::problem::CertificateProblem;
use crate::spiffe::{SpiffeId, SpiffeIdError};

/// The anchor a refusal is about, for logs and audit records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Anchor {
    /// The certificate itself (unreadable), before any anchor could be checked.
    Certificate,
    /// `tls_fingerprint` (with `backup_fingerprints`).
    TlsFingerprint,
    /// `tls_trust: webpki`: the chain to the trust roots and the host name.
    Webpki,
    /// `spiffe_id`: the SVID, its ID and its chain to the trust domain's bundle.
    SpiffeId,
    /// `entrypoint_digests` of a local (stdio) server: the files it is started from.
    Entrypoint,
}

impl fmt::Display for Anchor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Anchor::Certificate => "certificate",
            Anchor::TlsFingerprint => "tls_fingerprint",
            Anchor::Webpki => "tls_trust webpki",
            Anchor::SpiffeId => "spiffe_id",
            Anchor::Entrypoint => "entrypoint",
        })
    }
}

/// An identity failure: the server is not the one the catalog approved (seed 003 §4 step 8,
/// `identity_mismatch`). Every variant names its anchor ([`IdentityError::anchor`]) and, where
/// a value was compared, what was expected and what was presented.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IdentityError {
    /// The leaf certificate could not be read.
    #[error("identity mismatch: the server's certificate is unreadable: {problem}")]
    MalformedLeaf {
        /// Why.
        problem: CertificateProblem,
    },
    /// The presented key (or certificate) matches neither the pin nor a backup.
    #[error(
        "identity mismatch (tls_fingerprint, {mode}): expected {expected}{}, presented \
         {presented}; if the server's {} changed on purpose, update tls_fingerprint in the \
         catalog (`toolgate identity URL` prints it)",
        backups_text(backups),
        match mode { RotationMode::KeyPinned => "key", RotationMode::CertPinned => "certificate" }
    )]
    PinMismatch {
        /// What the fingerprints hash.
        mode: RotationMode,
        /// The primary pin.
        expected: Fingerprint,
        /// The backup pins, also refused.
        backups: Vec<Fingerprint>,
        /// The fingerprint of what the server presented, in the same mode.
        presented: Fingerprint,
    },
    /// `tls_trust: webpki`: the chain does not validate to the trust roots for the host name.
    #[error(
        "identity mismatch (tls_trust webpki): {problem}; if the server is self-signed, pin its \
         key with tls_trust `pin`, or give the gateway its CA"
    )]
    WebpkiRejected {
        /// Why the chain or the name was refused.
        problem: CertificateProblem,
    },
    /// The SVID does not carry exactly one URI SAN (X509-SVID §2).
    #[error(
        "identity mismatch (spiffe_id): expected one URI SAN {expected}, presented {}",
        uris_text(presented)
    )]
    SvidUriSanCount {
        /// The pinned ID.
        expected: SpiffeId,
        /// Every URI SAN of the leaf.
        presented: Vec<String>,
    },
    /// The one URI SAN is not a SPIFFE ID.
    #[error(
        "identity mismatch (spiffe_id): expected {expected}, presented `{presented}`, which is not a SPIFFE ID: {reason}"
    )]
    SvidInvalidId {
        /// The pinned ID.
        expected: SpiffeId,
        /// The URI SAN.
        presented: String,
        /// Why it is not a SPIFFE ID.
        reason: SpiffeIdError,
    },
    /// The SVID names another workload.
    #[error(
        "identity mismatch (spiffe_id): expected {expected}, presented {presented}; if the \
         workload was renamed on purpose, update spiffe_id in the catalog"
    )]
    SpiffeIdMismatch {
        /// The pinned ID.
        expected: SpiffeId,
        /// The SVID's ID.
        presented: SpiffeId,
    },
    /// The SVID leaf is a CA certificate, or may sign certificates or CRLs (X509-SVID §4).
    #[error(
        "identity mismatch (spiffe_id): the leaf for {presented} is a CA or may sign \
         certificates; a leaf SVID must not be"
    )]
    SvidIsCa {
        /// The SVID's ID.
        presented: SpiffeId,
    },
    /// The SVID leaf lacks the `digitalSignature` key usage, or has no keyUsage extension at
    /// all (X509-SVID §4.3: the extension MUST be set and a leaf MUST set digitalSignature).
    #[error(
        "identity mismatch (spiffe_id): the leaf for {presented} has {}; an X509-SVID leaf must \
         carry the keyUsage extension with digitalSignature (X509-SVID §4.3): reissue the SVID \
         with it",
        key_usage_text(key_usage)
    )]
    SvidWithoutDigitalSignature {
        /// The SVID's ID.
        presented: SpiffeId,
        /// The keyUsage bits the leaf sets (RFC 5280 names, in bit order); `None` when it has
        /// no keyUsage extension.
        key_usage: Option<Vec<String>>,
    },
    /// The SVID chain does not validate to the trust domain's bundle (or is out of date).
    #[error(
        "identity mismatch (spiffe_id): the SVID does not validate to the trust bundle of \
         {trust_domain}: {problem}"
    )]
    SvidChainRejected {
        /// The pinned ID's trust domain, whose bundle was used.
        trust_domain: String,
        /// Why.
        problem: CertificateProblem,
    },
    /// A local server's entrypoint file does not have its pinned digest; nothing was started.
    #[error(
        "identity mismatch (entrypoint): {} has digest {observed}, expected {expected}; the \
         server was not started; {REPIN}",
        path.display()
    )]
    EntrypointMismatch {
        /// The pinned path (a symlink as listed, not its target).
        path: PathBuf,
        /// The pinned digest.
        expected: FileDigest,
        /// The digest of the bytes read now.
        observed: FileDigest,
    },
    /// A local server's entrypoint file cannot be read to check it; nothing was started.
    #[error(
        "identity mismatch (entrypoint): cannot read {} to check its digest: {detail}; the \
         server was not started; check the path and its permissions, or {REPIN}",
        path.display()
    )]
    EntrypointUnreadable {
        /// The pinned path (a symlink as listed, not its target).
        path: PathBuf,
        /// Why it could not be read (the I/O error).
        detail: String,
    },
}

/// What to do when an entrypoint changed or moved on purpose.
const REPIN: &str = "if the change was intended (an upgrade), re-pin with `toolgate identity \
     --command -- CMD ARGS…` and update entrypoint_digests in the catalog; otherwise find out \
     who changed it";

fn backups_text(backups: &[Fingerprint]) -> String {
    if backups.is_empty() {
        return String::new();
    }
    let list: Vec<String> = backups.iter().map(ToString::to_string).collect();
    format!(" (or a backup: {})", list.join(", "))
}

fn key_usage_text(key_usage: &Option<Vec<String>>) -> String {
    match key_usage.as_deref() {
        None => "no keyUsage extension".to_owned(),
        Some([]) => "an empty keyUsage".to_owned(),
        Some(bits) => format!("keyUsage {} without digitalSignature", bits.join(", ")),
    }
}

fn uris_text(uris: &[String]) -> String {
    if uris.is_empty() {
        "none".to_owned()
    } else {
        uris.join(", ")
    }
}

impl IdentityError {
    /// The anchor this failure is about.
    pub fn anchor(&self) -> Anchor {
        match self {
            IdentityError::MalformedLeaf { .. } => Anchor::Certificate,
            IdentityError::PinMismatch { .. } => Anchor::TlsFingerprint,
            IdentityError::WebpkiRejected { .. } => Anchor::Webpki,
            IdentityError::SvidUriSanCount { .. }
            | IdentityError::SvidInvalidId { .. }
            | IdentityError::SpiffeIdMismatch { .. }
            | IdentityError::SvidIsCa { .. }
            | IdentityError::SvidWithoutDigitalSignature { .. }
            | IdentityError::SvidChainRejected { .. } => Anchor::SpiffeId,
            IdentityError::EntrypointMismatch { .. }
            | IdentityError::EntrypointUnreadable { .. } => Anchor::Entrypoint,
        }
    }

    /// The identity failure inside a rustls error from a handshake with our verifier.
    ///
    /// The verifier returns `InvalidCertificate(CertificateError::Other(..))` carrying the
    /// `IdentityError`; this reads it back. Each handshake's error carries its own reason, so
    /// concurrent connections sharing one `ClientConfig` never see each other's.
    pub fn from_tls_error(error: &rustls::Error) -> Option<&IdentityError> {
        match error {
            rustls::Error::InvalidCertificate(rustls::CertificateError::Other(other)) => {
                other.0.downcast_ref::<IdentityError>()
            }
            _ => None,
        }
    }

    /// The identity failure inside an I/O error, as tokio-rustls reports a failed handshake.
    pub fn from_io_error(error: &io::Error) -> Option<&IdentityError> {
        error
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<rustls::Error>())
            .and_then(IdentityError::from_tls_error)
    }

    /// The rustls error the verifier returns: `BadCertificate`-class, with this reason inside.
    pub(crate) fn into_tls_error(self) -> rustls::Error {
        rustls::Error::InvalidCertificate(rustls::CertificateError::Other(rustls::OtherError(
            Arc::new(self),
        )))
    }
}

/// Why a verifier or client configuration cannot be made from the given anchors and roots.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The SPIFFE ID's trust domain has no bundle.
    #[error(
        "no trust bundle for trust domain {trust_domain}: load its SPIFFE bundle (PEM or JSON) \
         before pinning {spiffe_id}"
    )]
    MissingBundle {
        /// The trust domain.
        trust_domain: String,
        /// The pinned ID.
        spiffe_id: SpiffeId,
    },
    /// `tls_trust: webpki` with an empty root store: every handshake would fail.
    #[error(
        "tls_trust `webpki` needs trust roots, and the root store is empty: give the CA \
         certificates, or use tls_trust `pin` for a self-signed server"
    )]
    NoRoots,
    /// rustls refused the configuration.
    #[error("TLS configuration refused: {detail}")]
    Tls {
        /// What rustls said.
        detail: String,
    },
}
