//! `ServerAnchors`: the identity anchors the catalog pins for one upstream server
//! (seed 003 §1 "Phase 1 Requirement", §4 steps 5–8).

use crate::fingerprint::Fingerprint;
use crate::modes::{RotationMode, TlsTrust};
use crate::spiffe::SpiffeId;

/// The anchors of one server: an optional key or certificate pin, an optional SPIFFE ID, and
/// how the chain is trusted. Built with [`ServerAnchors::builder`]; a set with no anchor cannot
/// be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerAnchors {
    fingerprint: Option<Fingerprint>,
    backups: Vec<Fingerprint>,
    rotation_mode: RotationMode,
    spiffe_id: Option<SpiffeId>,
    tls_trust: TlsTrust,
}

impl ServerAnchors {
    /// A builder with no anchor, `key-pinned` and `webpki`.
    pub fn builder() -> ServerAnchorsBuilder {
        ServerAnchorsBuilder::new()
    }

    /// The pinned fingerprint (`tls_fingerprint`).
    pub fn fingerprint(&self) -> Option<&Fingerprint> {
        self.fingerprint.as_ref()
    }

    /// The backup fingerprints, read in the same rotation mode as the primary.
    pub fn backup_fingerprints(&self) -> &[Fingerprint] {
        &self.backups
    }

    /// What the fingerprints hash.
    pub fn rotation_mode(&self) -> RotationMode {
        self.rotation_mode
    }

    /// The pinned SPIFFE ID.
    pub fn spiffe_id(&self) -> Option<&SpiffeId> {
        self.spiffe_id.as_ref()
    }

    /// How the chain is trusted when the pin is the only anchor.
    pub fn tls_trust(&self) -> TlsTrust {
        self.tls_trust
    }
}

/// Builds a [`ServerAnchors`]; [`build`](Self::build) checks the set is usable.
#[derive(Debug, Clone, Default)]
pub struct ServerAnchorsBuilder {
    fingerprint: Option<Fingerprint>,
    backups: Vec<Fingerprint>,
    rotation_mode: RotationMode,
    spiffe_id: Option<SpiffeId>,
    tls_trust: TlsTrust,
}

impl ServerAnchorsBuilder {
    /// No anchor, `key-pinned`, `webpki`.
    pub fn new() -> ServerAnchorsBuilder {
        ServerAnchorsBuilder::default()
    }

    /// Pins the server's key (or certificate, in `cert-pinned` mode): `tls_fingerprint`.
    pub fn fingerprint(&mut self, fingerprint: Fingerprint) -> &mut ServerAnchorsBuilder {
        self.fingerprint = Some(fingerprint);
        self
    }

    /// Adds a backup fingerprint (`backup_fingerprints`), accepted like the primary during a
    /// planned rotation.
    pub fn backup_fingerprint(&mut self, fingerprint: Fingerprint) -> &mut ServerAnchorsBuilder {
        self.backups.push(fingerprint);
        self
    }

    /// Sets what the fingerprints hash (default `key-pinned`).
    pub fn rotation_mode(&mut self, mode: RotationMode) -> &mut ServerAnchorsBuilder {
        self.rotation_mode = mode;
        self
    }

    /// Pins the server's SPIFFE ID (`spiffe_id`).
    pub fn spiffe_id(&mut self, id: SpiffeId) -> &mut ServerAnchorsBuilder {
        self.spiffe_id = Some(id);
        self
    }

    /// Sets how the chain is trusted (default `webpki`).
    pub fn tls_trust(&mut self, trust: TlsTrust) -> &mut ServerAnchorsBuilder {
        self.tls_trust = trust;
        self
    }

    /// The anchor set, or why it cannot be used.
    pub fn build(&self) -> Result<ServerAnchors, AnchorsError> {
        // Seed 003 §1 "Phase 1 Requirement": at least one identity anchor.
        if self.fingerprint.is_none() && self.spiffe_id.is_none() {
            return Err(if self.backups.is_empty() {
                AnchorsError::NoAnchor
            } else {
                AnchorsError::BackupsWithoutFingerprint
            });
        }
        if self.fingerprint.is_none() && !self.backups.is_empty() {
            return Err(AnchorsError::BackupsWithoutFingerprint);
        }
        if self.tls_trust == TlsTrust::Pin {
            if self.fingerprint.is_none() {
                return Err(AnchorsError::PinTrustWithoutFingerprint);
            }
            // `pin` means "no chain check"; a SPIFFE ID requires its bundle chain (docs/design.md §3).
            if self.spiffe_id.is_some() {
                return Err(AnchorsError::PinTrustWithSpiffeId);
            }
        }
        Ok(ServerAnchors {
            fingerprint: self.fingerprint,
            backups: self.backups.clone(),
            rotation_mode: self.rotation_mode,
            spiffe_id: self.spiffe_id.clone(),
            tls_trust: self.tls_trust,
        })
    }
}

/// Why an anchor set cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AnchorsError {
    /// Neither a fingerprint nor a SPIFFE ID.
    #[error(
        "no identity anchor: set tls_fingerprint, spiffe_id or both (seed 003 §1, Phase 1 \
         requirement)"
    )]
    NoAnchor,
    /// `tls_trust: pin` without a fingerprint to trust.
    #[error(
        "tls_trust `pin` makes the fingerprint the trust anchor, but no tls_fingerprint is set"
    )]
    PinTrustWithoutFingerprint,
    /// `tls_trust: pin` together with a SPIFFE ID.
    #[error(
        "tls_trust `pin` skips chain validation, but a spiffe_id requires the chain to validate \
         to its trust bundle: remove tls_trust `pin` (the SPIFFE bundle is the chain anchor)"
    )]
    PinTrustWithSpiffeId,
    /// Backup fingerprints without a primary.
    #[error("backup_fingerprints are set without a tls_fingerprint: set the primary fingerprint")]
    BackupsWithoutFingerprint,
}
