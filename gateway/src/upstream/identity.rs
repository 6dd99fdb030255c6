//! What the upstream presented: the fingerprints of the leaf certificate the verifier accepted,
//! for the audit log (DESIGN.md §5 "recording … observed identity").

use server_identity::{Fingerprint, PresentedIdentity, SpiffeId};

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
}

impl ObservedIdentity {
    pub(super) fn of_leaf(leaf_der: &[u8]) -> ObservedIdentity {
        // The verifier already accepted this certificate; reading it again cannot fail in
        // practice, and if it did the certificate's own hash is still worth recording.
        match PresentedIdentity::of_certificate(leaf_der) {
            Ok(presented) => ObservedIdentity {
                spki_sha256: Some(presented.spki_sha256),
                cert_sha256: presented.cert_sha256,
                spiffe_ids: presented.spiffe_ids,
            },
            Err(_) => ObservedIdentity {
                spki_sha256: None,
                cert_sha256: Fingerprint::of_certificate(leaf_der),
                spiffe_ids: Vec::new(),
            },
        }
    }
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
        assert_eq!(
            observed.spki_sha256,
            Some(Fingerprint::of_spki(
                &rcgen::PublicKeyData::subject_public_key_info(&key)
            ))
        );
        assert_eq!(
            observed.cert_sha256,
            Fingerprint::of_certificate(certificate.der())
        );
        assert_eq!(observed.spiffe_ids, Vec::<SpiffeId>::new());
        let garbage = ObservedIdentity::of_leaf(b"\x30\x03\x02\x01");
        assert_eq!(garbage.spki_sha256, None);
        assert_eq!(
            garbage.cert_sha256,
            Fingerprint::of_certificate(b"\x30\x03\x02\x01")
        );
    }
}
