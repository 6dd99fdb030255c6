//! `PresentedIdentity`: what a leaf shows, read for the record (the gateway's audit log).

use server_identity::{CertificateProblem, Fingerprint, PresentedIdentity, SpiffeId};

use crate::pki::{Ca, KeyType, SVID_ID, spki_sha256, svid_params};

#[test]
fn an_svid_presents_its_key_its_certificate_and_its_spiffe_id() {
    let ca = Ca::new("corp.example", KeyType::EcdsaP256);
    let key = KeyType::EcdsaP256.key();
    // A non-SPIFFE URI SAN beside the ID is not reported as an ID.
    let leaf = ca.issue(
        &svid_params(&[SVID_ID, "https://not-a-spiffe-id.example/"]),
        &key,
    );
    let presented = PresentedIdentity::of_certificate(&leaf).unwrap();
    assert_eq!(presented.spki_sha256, spki_sha256(&key));
    assert_eq!(presented.cert_sha256, Fingerprint::of_certificate(&leaf));
    assert_eq!(
        presented.spiffe_ids,
        vec![SVID_ID.parse::<SpiffeId>().unwrap()]
    );
}

#[test]
fn bytes_that_are_not_a_certificate_are_a_malformed_certificate() {
    let error = PresentedIdentity::of_certificate(b"\x30\x03\x02\x01\x00").unwrap_err();
    assert_eq!(
        error,
        CertificateProblem::Malformed {
            detail: "BER error: Unexpected Tag (expected: Some(Tag(16)), actual: Tag(2))".into()
        }
    );
}
