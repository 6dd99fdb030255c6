//! `ConnectionIdentity::of_connection`: which pin an established connection matched, read from
//! that connection's own presented chain after real loopback handshakes.

use std::sync::Arc;

use rustls::RootCertStore;
use server_identity::{
    CertificateProblem, ConnectionIdentity, IdentityError, PinMatch, PresentedIdentity,
    RotationMode, ServerAnchors, SpiffeId, TrustBundles, client_config,
};

use crate::loopback::peer_certificates;
use crate::pki::{
    Ca, KeyType, SVID_ID, ServerCert, TRUST_DOMAIN, server_cert, spki_sha256, svid_params,
};

// One ClientConfig, two concurrent connections: one to the server still on the primary key,
// one to a server already rotated to the backup. Each connection's own chain tells which pin it
// matched; nothing is shared between them.
#[tokio::test]
async fn each_connection_says_which_pin_it_matched() {
    for version in crate::loopback::VERSIONS {
        let ca = Ca::new("web ca", KeyType::EcdsaP256);
        let (old_key, new_key, spare_key) = (
            KeyType::EcdsaP256.key(),
            KeyType::EcdsaP256.key(),
            KeyType::EcdsaP256.key(),
        );
        let anchors = ServerAnchors::builder()
            .fingerprint(spki_sha256(&old_key))
            .backup_fingerprint(spki_sha256(&spare_key))
            .backup_fingerprint(spki_sha256(&new_key))
            .build()
            .unwrap();
        let config = client_config(&anchors, ca.roots(), &TrustBundles::new()).unwrap();
        let (before, after) = (server_cert(&ca, &old_key, 1), server_cert(&ca, &new_key, 2));
        let (before_chain, after_chain) = tokio::join!(
            peer_certificates(&before, version, config.clone()),
            peer_certificates(&after, version, config.clone()),
        );

        let primary = ConnectionIdentity::of_connection(&anchors, &before_chain).unwrap();
        assert_eq!(primary.pin, PinMatch::Primary);
        assert_eq!(
            primary.presented,
            PresentedIdentity::of_certificate(before.leaf()).unwrap()
        );
        assert_eq!(primary.presented.spki_sha256, spki_sha256(&old_key));

        let backup = ConnectionIdentity::of_connection(&anchors, &after_chain).unwrap();
        assert_eq!(backup.pin, PinMatch::Backup(spki_sha256(&new_key)));
        assert_eq!(backup.presented.spki_sha256, spki_sha256(&new_key));
        assert_eq!(backup.presented.cert_sha256, after.cert_sha256());
    }
}

// Cert-pinned: the backup named is a certificate hash.
#[tokio::test]
async fn a_cert_pinned_backup_is_named_by_its_certificate_hash() {
    let ca = Ca::new("web ca", KeyType::Ed25519);
    let key = KeyType::Ed25519.key();
    let (original, renewed) = (server_cert(&ca, &key, 1), server_cert(&ca, &key, 2));
    let anchors = ServerAnchors::builder()
        .fingerprint(original.cert_sha256())
        .backup_fingerprint(renewed.cert_sha256())
        .rotation_mode(RotationMode::CertPinned)
        .build()
        .unwrap();
    let config = client_config(&anchors, ca.roots(), &TrustBundles::new()).unwrap();
    let chain = peer_certificates(&renewed, &rustls::version::TLS13, config).await;
    assert_eq!(
        ConnectionIdentity::of_connection(&anchors, &chain)
            .unwrap()
            .pin,
        PinMatch::Backup(renewed.cert_sha256())
    );
}

// A SPIFFE ID alone pins no fingerprint; the ID is in `presented`.
#[tokio::test]
async fn spiffe_only_anchors_match_no_pin() {
    let domain_ca = Ca::new("corp.example", KeyType::EcdsaP256);
    let key = KeyType::EcdsaP256.key();
    let svid = ServerCert::new(domain_ca.issue(&svid_params(&[SVID_ID]), &key), &key);
    let anchors = ServerAnchors::builder()
        .spiffe_id(SVID_ID.parse().unwrap())
        .build()
        .unwrap();
    let mut bundles = TrustBundles::new();
    bundles.add_der(TRUST_DOMAIN, &domain_ca.cert).unwrap();
    let config = client_config(&anchors, Arc::new(RootCertStore::empty()), &bundles).unwrap();
    let chain = peer_certificates(&svid, &rustls::version::TLS12, config).await;
    let identity = ConnectionIdentity::of_connection(&anchors, &chain).unwrap();
    assert_eq!(identity.pin, PinMatch::NotPinned);
    assert_eq!(
        identity.presented.spiffe_ids,
        vec![SVID_ID.parse::<SpiffeId>().unwrap()]
    );
}

// A chain that is not the connection's (or anchors that are not its own) is said so, not
// papered over.
#[test]
fn a_chain_the_anchors_never_accepted_is_an_error() {
    let ca = Ca::new("web ca", KeyType::EcdsaP256);
    let (pinned, other) = (KeyType::EcdsaP256.key(), KeyType::EcdsaP256.key());
    let anchors = ServerAnchors::builder()
        .fingerprint(spki_sha256(&pinned))
        .build()
        .unwrap();
    let chain = server_cert(&ca, &other, 1).chain;
    assert_eq!(
        ConnectionIdentity::of_connection(&anchors, &chain).unwrap_err(),
        IdentityError::PinMismatch {
            mode: RotationMode::KeyPinned,
            expected: spki_sha256(&pinned),
            backups: vec![],
            presented: spki_sha256(&other),
        }
    );
    assert_eq!(
        ConnectionIdentity::of_connection(&anchors, &[]).unwrap_err(),
        IdentityError::MalformedLeaf {
            problem: CertificateProblem::Malformed {
                detail: "no certificate".to_owned()
            }
        }
    );
    let garbage = rustls_pki_types::CertificateDer::from(vec![0x30, 0x03, 0x02, 0x01, 0x00]);
    assert!(matches!(
        ConnectionIdentity::of_connection(&anchors, &[garbage]).unwrap_err(),
        IdentityError::MalformedLeaf { .. }
    ));
}
