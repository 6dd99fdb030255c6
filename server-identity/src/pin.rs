//! Which pin a presented leaf matched, and the per-connection record of it (docs/design.md §3: "the
//! identity recorded for a decision is the one presented on the connection that carried that
//! request, and says which pin matched").

use rustls_pki_types::CertificateDer;
use subtle::{Choice, ConstantTimeEq};

use crate::anchors::ServerAnchors;
use crate::error::IdentityError;
use crate::fingerprint::Fingerprint;
use crate::leaf::{Leaf, PresentedIdentity};
use crate::modes::RotationMode;
use crate::problem::CertificateProblem;

/// Which `tls_fingerprint` a connection's leaf matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PinMatch {
    /// The primary `tls_fingerprint`.
    Primary,
    /// One of the `backup_fingerprints` (this one): a planned rotation has happened, and the
    /// catalog's primary should be updated. Worth a log line and an audit field.
    Backup(Fingerprint),
    /// The anchors pin no fingerprint (a SPIFFE ID alone).
    NotPinned,
}

/// The pin check of the verifier (seed 003 §4 step 6): the leaf's key (or certificate) hash
/// against the primary and every backup, all compared in constant time whichever matches.
pub(crate) fn match_pin(anchors: &ServerAnchors, leaf: &Leaf) -> Result<PinMatch, IdentityError> {
    let Some(expected) = anchors.fingerprint() else {
        return Ok(PinMatch::NotPinned);
    };
    let presented = match anchors.rotation_mode() {
        RotationMode::KeyPinned => leaf.spki,
        RotationMode::CertPinned => leaf.certificate,
    };
    let primary: Choice = presented.as_bytes().ct_eq(expected.as_bytes());
    let backup = anchors
        .backup_fingerprints()
        .iter()
        .fold(Choice::from(0), |any, b| {
            any | presented.as_bytes().ct_eq(b.as_bytes())
        });
    if bool::from(primary) {
        Ok(PinMatch::Primary)
    } else if bool::from(backup) {
        // Equal to the backup it matched, so the presented value names that backup.
        Ok(PinMatch::Backup(presented))
    } else {
        Err(IdentityError::PinMismatch {
            mode: anchors.rotation_mode(),
            expected: *expected,
            backups: anchors.backup_fingerprints().to_vec(),
            presented,
        })
    }
}

/// What was verified on one connection: what its leaf presents and which pin it matched. For
/// the audit record of each request, read from that request's own connection.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConnectionIdentity {
    /// The fingerprints and SPIFFE IDs of the connection's leaf.
    pub presented: PresentedIdentity,
    /// Which pin the leaf matched.
    pub pin: PinMatch,
}

impl ConnectionIdentity {
    /// Re-derives, for an established connection, what its verifier saw: `peer_certificates`
    /// is the connection's presented chain, leaf first (rustls'
    /// `ConnectionCommon::peer_certificates()`, e.g. `tls.get_ref().1.peer_certificates()` on a
    /// tokio-rustls client stream), `anchors` the anchors its `client_config` was made from.
    ///
    /// Nothing is re-decided: the chain, the SPIFFE rules and the dates were checked in the
    /// handshake (so no clock and no roots are taken here); this reads the leaf and finds which
    /// pin it equals. The verifier keeps nothing in shared state (one `ClientConfig` serves
    /// concurrent connections), so this is how a caller learns it per connection.
    ///
    /// # Errors
    ///
    /// [`IdentityError::MalformedLeaf`] when the chain is empty or the leaf does not parse;
    /// [`IdentityError::PinMismatch`] when no pin matches. Neither happens for a connection
    /// that a verifier with these `anchors` accepted: either means the chain or the anchors are
    /// not that connection's.
    pub fn of_connection(
        anchors: &ServerAnchors,
        peer_certificates: &[CertificateDer<'_>],
    ) -> Result<ConnectionIdentity, IdentityError> {
        let Some(leaf_der) = peer_certificates.first() else {
            return Err(IdentityError::MalformedLeaf {
                problem: CertificateProblem::Malformed {
                    detail: "no certificate".to_owned(),
                },
            });
        };
        let leaf =
            Leaf::parse(leaf_der).map_err(|problem| IdentityError::MalformedLeaf { problem })?;
        let pin = match_pin(anchors, &leaf)?;
        Ok(ConnectionIdentity {
            presented: PresentedIdentity::of_leaf(&leaf),
            pin,
        })
    }
}
