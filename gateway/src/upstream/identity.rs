//! What the upstream presented on one connection: the fingerprints of the leaf certificate the
//! verifier accepted and which pin it matched, for the audit entry of each request that
//! connection carries (docs/design.md §3, "the identity recorded for a decision").

use crate::audit::ObservedIdentity as AuditIdentity;
use server_identity::{
    ConnectionIdentity, Fingerprint, PinMatch, PresentedIdentity, ServerAnchors, SpiffeId,
};

/// What the upstream presented on a connection the pinning verifier accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObservedIdentity {
    /// SHA-256 of the leaf's SubjectPublicKeyInfo (the `key-pinned` fingerprint), when the
    /// certificate could be read.
    pub spki_sha256: Option<Fingerprint>,
    /// SHA-256 of the whole leaf certificate (the `cert-pinned` fingerprint).
    pub cert_sha256: Fingerprint,
    /// The SPIFFE IDs among the leaf's URI SANs (an SVID carries exactly one).
    pub spiffe_ids: Vec<SpiffeId>,
    /// Which pin the leaf matched (the primary `tls_fingerprint`, a backup, or none pinned);
    /// `None` when the client was made without its anchors ([`super::UpstreamClient::new`]).
    pub pin: Option<PinMatch>,
}

impl ObservedIdentity {
    /// What the connection whose presented chain is `chain` (leaf first) showed. With the
    /// anchors its verifier enforced, which pin matched is read by
    /// `server_identity::ConnectionIdentity::of_connection`, the verifier's own pin check.
    pub(super) fn of_connection(
        anchors: Option<&ServerAnchors>,
        chain: &[rustls_pki_types::CertificateDer<'_>],
    ) -> Option<ObservedIdentity> {
        let leaf = chain.first()?;
        if let Some(anchors) = anchors {
            if let Ok(connection) = ConnectionIdentity::of_connection(anchors, chain) {
                let ConnectionIdentity { presented, pin, .. } = connection;
                return Some(ObservedIdentity::of_presented(presented, Some(pin)));
            }
        }
        Some(ObservedIdentity::of_leaf(leaf))
    }

    fn of_presented(presented: PresentedIdentity, pin: Option<PinMatch>) -> ObservedIdentity {
        ObservedIdentity {
            spki_sha256: Some(presented.spki_sha256),
            cert_sha256: presented.cert_sha256,
            spiffe_ids: presented.spiffe_ids,
            pin,
        }
    }

    pub(super) fn of_leaf(leaf_der: &[u8]) -> ObservedIdentity {
        // The verifier already accepted this certificate; reading it again cannot fail in
        // practice, and if it did the certificate's own hash is still worth recording.
        match PresentedIdentity::of_certificate(leaf_der) {
            Ok(presented) => ObservedIdentity::of_presented(presented, None),
            Err(_) => ObservedIdentity {
                spki_sha256: None,
                cert_sha256: Fingerprint::of_certificate(leaf_der),
                spiffe_ids: Vec::new(),
                pin: None,
            },
        }
    }

    /// The audit's record of it (key, then certificate; the pin matched). Made once per
    /// connection ([`super::CallPath::audit_identity`]) and shared by the entries of every
    /// call the connection carries.
    pub(crate) fn audit_record(&self) -> AuditIdentity {
        let mut fingerprints = Vec::with_capacity(2);
        fingerprints.extend(self.spki_sha256.iter().map(fingerprint_text));
        fingerprints.push(fingerprint_text(&self.cert_sha256));
        let (pin, pinned_backup) = match self.pin {
            Some(PinMatch::Primary) => (Some("primary"), None),
            Some(PinMatch::Backup(backup)) => (Some("backup"), Some(fingerprint_text(&backup))),
            Some(PinMatch::NotPinned) | None => (None, None),
        };
        AuditIdentity {
            fingerprints,
            spiffe_id: self.spiffe_ids.first().map(ToString::to_string),
            pin,
            pinned_backup,
        }
    }
}

/// `SHA256:<hex>`, written into a string of its exact length (`to_string` would grow it piece
/// by piece).
fn fingerprint_text(fingerprint: &Fingerprint) -> String {
    use std::fmt::Write;
    let mut text = String::with_capacity(7 + 64);
    let _ = write!(text, "{fingerprint}");
    text
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_spki_found_in_the_certificate_is_the_one_rcgen_signed() {
        let key = rcgen::KeyPair::generate().unwrap();
        let params = rcgen::CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
        let certificate = params.self_signed(&key).unwrap();
        let observed = ObservedIdentity::of_leaf(certificate.der());
        let spki = Fingerprint::of_spki(&rcgen::PublicKeyData::subject_public_key_info(&key));
        assert_eq!(observed.spki_sha256, Some(spki));
        assert_eq!(
            observed.cert_sha256,
            Fingerprint::of_certificate(certificate.der())
        );
        assert_eq!(observed.spiffe_ids, Vec::<SpiffeId>::new());
        assert_eq!(observed.pin, None);
        let garbage = ObservedIdentity::of_leaf(b"\x30\x03\x02\x01");
        assert_eq!(garbage.spki_sha256, None);
        assert_eq!(
            garbage.cert_sha256,
            Fingerprint::of_certificate(b"\x30\x03\x02\x01")
        );
    }

    #[test]
    fn with_anchors_the_matched_pin_is_named() {
        let key = rcgen::KeyPair::generate().unwrap();
        let params = rcgen::CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
        let certificate = params.self_signed(&key).unwrap();
        let spki = Fingerprint::of_spki(&rcgen::PublicKeyData::subject_public_key_info(&key));
        let chain = [certificate.der().clone()];
        let primary = {
            let mut builder = ServerAnchors::builder();
            builder.fingerprint(spki);
            builder.build().unwrap()
        };
        let backup = {
            let mut builder = ServerAnchors::builder();
            builder
                .fingerprint(Fingerprint::of_spki(b"another key"))
                .backup_fingerprint(spki);
            builder.build().unwrap()
        };
        assert_eq!(
            ObservedIdentity::of_connection(Some(&primary), &chain)
                .unwrap()
                .pin,
            Some(PinMatch::Primary)
        );
        assert_eq!(
            ObservedIdentity::of_connection(Some(&backup), &chain)
                .unwrap()
                .pin,
            Some(PinMatch::Backup(spki))
        );
        assert_eq!(ObservedIdentity::of_connection(Some(&backup), &[]), None);
    }
}
