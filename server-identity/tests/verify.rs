//! `ServerIdentityVerifier::verify_identity` at a fixed time, the proof it returns, and the
//! configuration errors of `client_config`.

use std::sync::Arc;
use std::time::Duration;

use rustls::RootCertStore;
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};
use server_identity::{
    CertificateProblem, ConfigError, IdentityError, PinMatch, ServerAnchors,
    ServerIdentityVerifier, SpiffeIdError, TlsTrust, TrustBundles, client_config,
};

use crate::pki::{Ca, HOST, KeyType, SVID_ID, TRUST_DOMAIN, server_cert, spki_sha256, svid_params};

/// 2026-06-01T00:00:00Z.
fn june_2026() -> UnixTime {
    UnixTime::since_unix_epoch(Duration::from_secs(1_780_272_000))
}

fn host() -> ServerName<'static> {
    ServerName::try_from(HOST).unwrap()
}

fn svid_verifier(domain_ca: &Ca) -> ServerIdentityVerifier {
    let mut bundles = TrustBundles::new();
    bundles.add_der(TRUST_DOMAIN, &domain_ca.cert).unwrap();
    let anchors = ServerAnchors::builder()
        .spiffe_id(SVID_ID.parse().unwrap())
        .build()
        .unwrap();
    ServerIdentityVerifier::new(&anchors, Arc::new(RootCertStore::empty()), &bundles).unwrap()
}

fn check(
    verifier: &ServerIdentityVerifier,
    chain: &[CertificateDer<'static>],
) -> Result<server_identity::IdentityVerified, IdentityError> {
    verifier.verify_identity(&chain[0], &chain[1..], &host(), june_2026())
}

#[test]
fn proof_reports_fingerprints_and_backup_use() {
    let ca = Ca::new("web ca", KeyType::EcdsaP256);
    let mut roots = RootCertStore::empty();
    roots.add(ca.cert.clone()).unwrap();
    let (old_key, new_key) = (KeyType::EcdsaP256.key(), KeyType::EcdsaP256.key());
    let anchors = ServerAnchors::builder()
        .fingerprint(spki_sha256(&old_key))
        .backup_fingerprint(spki_sha256(&new_key))
        .build()
        .unwrap();
    let verifier =
        ServerIdentityVerifier::new(&anchors, Arc::new(roots), &TrustBundles::new()).unwrap();
    assert_eq!(verifier.anchors(), &anchors);

    let old = server_cert(&ca, &old_key, 1);
    let proof = check(&verifier, &old.chain).unwrap();
    assert_eq!(proof.spki_sha256(), spki_sha256(&old_key));
    assert_eq!(proof.cert_sha256(), old.cert_sha256());
    assert!(!proof.matched_backup());
    assert_eq!(proof.pin_match(), PinMatch::Primary);
    assert_eq!(proof.spiffe_id(), None);

    let new = server_cert(&ca, &new_key, 2);
    let proof = check(&verifier, &new.chain).unwrap();
    assert!(proof.matched_backup());
    assert_eq!(proof.pin_match(), PinMatch::Backup(spki_sha256(&new_key)));
}

#[test]
fn expired_and_not_yet_valid_svids_carry_exact_times() {
    let domain_ca = Ca::new("corp.example", KeyType::EcdsaP256);
    let verifier = svid_verifier(&domain_ca);
    let key = KeyType::EcdsaP256.key();

    let mut expired = svid_params(&[SVID_ID]);
    expired.not_before = rcgen::date_time_ymd(2019, 1, 1);
    expired.not_after = rcgen::date_time_ymd(2020, 1, 1);
    assert_eq!(
        check(&verifier, &[domain_ca.issue(&expired, &key)]).unwrap_err(),
        IdentityError::SvidChainRejected {
            trust_domain: TRUST_DOMAIN.to_owned(),
            problem: CertificateProblem::Expired {
                now: "2026-06-01T00:00:00Z".to_owned(),
                not_after: "2020-01-01T00:00:00Z".to_owned(),
            },
        }
    );

    let mut future = svid_params(&[SVID_ID]);
    future.not_before = rcgen::date_time_ymd(2030, 1, 1);
    future.not_after = rcgen::date_time_ymd(2031, 1, 1);
    assert_eq!(
        check(&verifier, &[domain_ca.issue(&future, &key)]).unwrap_err(),
        IdentityError::SvidChainRejected {
            trust_domain: TRUST_DOMAIN.to_owned(),
            problem: CertificateProblem::NotValidYet {
                now: "2026-06-01T00:00:00Z".to_owned(),
                not_before: "2030-01-01T00:00:00Z".to_owned(),
            },
        }
    );
}

#[test]
fn svid_shape_rules() {
    let domain_ca = Ca::new("corp.example", KeyType::EcdsaP256);
    let verifier = svid_verifier(&domain_ca);
    let key = KeyType::EcdsaP256.key();
    let expected = SVID_ID.parse().unwrap();

    // A web server certificate has no URI SAN.
    let web = server_cert(&domain_ca, &key, 1);
    assert_eq!(
        check(&verifier, &web.chain).unwrap_err(),
        IdentityError::SvidUriSanCount {
            expected: SVID_ID.parse().unwrap(),
            presented: vec![]
        }
    );
    // One URI SAN that is not a SPIFFE ID.
    let not_spiffe = domain_ca.issue(&svid_params(&["https://corp.example/svc"]), &key);
    assert_eq!(
        check(&verifier, &[not_spiffe]).unwrap_err(),
        IdentityError::SvidInvalidId {
            expected,
            presented: "https://corp.example/svc".to_owned(),
            reason: SpiffeIdError::WrongScheme {
                presented: "https://corp.example/svc".to_owned()
            },
        }
    );
    // Not a CA, but allowed to sign certificates (X509-SVID §4.3 forbids keyCertSign).
    let mut signer = svid_params(&[SVID_ID]);
    signer.key_usages = vec![
        rcgen::KeyUsagePurpose::DigitalSignature,
        rcgen::KeyUsagePurpose::KeyCertSign,
    ];
    assert_eq!(
        check(&verifier, &[domain_ca.issue(&signer, &key)]).unwrap_err(),
        IdentityError::SvidIsCa {
            presented: SVID_ID.parse().unwrap()
        }
    );
    // Garbage instead of a certificate.
    assert!(matches!(
        check(
            &verifier,
            &[CertificateDer::from(vec![0x30, 0x03, 0x02, 0x01, 0x00])]
        )
        .unwrap_err(),
        IdentityError::MalformedLeaf {
            problem: CertificateProblem::Malformed { .. }
        }
    ));
}

#[test]
fn svid_through_an_intermediate_chains_to_the_root_bundle() {
    let root = Ca::new("corp.example root", KeyType::EcdsaP256);
    let intermediate = Ca::new("corp.example intermediate", KeyType::EcdsaP256);
    let intermediate_cert = root.issue(&intermediate.params(), intermediate.key());
    let key = KeyType::EcdsaP256.key();
    let leaf = intermediate.issue(&svid_params(&[SVID_ID]), &key);
    let verifier = svid_verifier(&root);
    let proof = check(&verifier, &[leaf.clone(), intermediate_cert]).unwrap();
    assert_eq!(proof.spiffe_id().map(|id| id.as_str()), Some(SVID_ID));
    // Without the intermediate there is no path.
    assert_eq!(
        check(&verifier, &[leaf]).unwrap_err(),
        IdentityError::SvidChainRejected {
            trust_domain: TRUST_DOMAIN.to_owned(),
            problem: CertificateProblem::UnknownIssuer,
        }
    );
}

#[test]
fn configuration_errors() {
    let spiffe = ServerAnchors::builder()
        .spiffe_id(SVID_ID.parse().unwrap())
        .build()
        .unwrap();
    assert_eq!(
        client_config(
            &spiffe,
            Arc::new(RootCertStore::empty()),
            &TrustBundles::new()
        )
        .unwrap_err(),
        ConfigError::MissingBundle {
            trust_domain: TRUST_DOMAIN.to_owned(),
            spiffe_id: SVID_ID.parse().unwrap(),
        }
    );
    let key = KeyType::EcdsaP256.key();
    let webpki = ServerAnchors::builder()
        .fingerprint(spki_sha256(&key))
        .build()
        .unwrap();
    assert_eq!(
        client_config(
            &webpki,
            Arc::new(RootCertStore::empty()),
            &TrustBundles::new()
        )
        .unwrap_err(),
        ConfigError::NoRoots
    );
    let pin = ServerAnchors::builder()
        .fingerprint(spki_sha256(&key))
        .tls_trust(TlsTrust::Pin)
        .build()
        .unwrap();
    let config =
        client_config(&pin, Arc::new(RootCertStore::empty()), &TrustBundles::new()).unwrap();
    assert_eq!(
        config.alpn_protocols,
        [b"h2".to_vec(), b"http/1.1".to_vec()]
    );
}

#[test]
fn webpki_chain_through_an_intermediate() {
    let root = Ca::new("web root", KeyType::Ed25519);
    let intermediate = Ca::new("web intermediate", KeyType::Ed25519);
    let intermediate_cert = root.issue(&intermediate.params(), intermediate.key());
    let key = KeyType::Ed25519.key();
    let leaf = server_cert(&intermediate, &key, 1);
    let mut roots = RootCertStore::empty();
    roots.add(root.cert.clone()).unwrap();
    let anchors = ServerAnchors::builder()
        .fingerprint(spki_sha256(&key))
        .build()
        .unwrap();
    let verifier =
        ServerIdentityVerifier::new(&anchors, Arc::new(roots), &TrustBundles::new()).unwrap();
    assert!(check(&verifier, &[leaf.leaf().clone(), intermediate_cert]).is_ok());
    assert_eq!(
        check(&verifier, &leaf.chain).unwrap_err(),
        IdentityError::WebpkiRejected {
            problem: CertificateProblem::UnknownIssuer
        }
    );
}

/// Documents the `pin` decision: dates and the CA bit of a self-signed leaf are not checked;
/// the pin is.
#[test]
fn pin_trust_skips_dates_and_ca_bit_but_not_the_pin() {
    let key = KeyType::EcdsaP256.key();
    let mut params = crate::pki::server_params(&["anything.test"], 1);
    params.not_before = rcgen::date_time_ymd(2000, 1, 1);
    params.not_after = rcgen::date_time_ymd(2001, 1, 1);
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let expired_ca_leaf = params.self_signed(&key).unwrap().der().clone();
    let pin = ServerAnchors::builder()
        .fingerprint(spki_sha256(&key))
        .tls_trust(TlsTrust::Pin)
        .build()
        .unwrap();
    let verifier =
        ServerIdentityVerifier::new(&pin, Arc::new(RootCertStore::empty()), &TrustBundles::new())
            .unwrap();
    assert!(check(&verifier, std::slice::from_ref(&expired_ca_leaf)).is_ok());
    let other = KeyType::EcdsaP256.key();
    let other_leaf = crate::pki::server_params(&[HOST], 2)
        .self_signed(&other)
        .unwrap();
    assert_eq!(
        check(&verifier, &[other_leaf.der().clone()]).unwrap_err(),
        IdentityError::PinMismatch {
            mode: server_identity::RotationMode::KeyPinned,
            expected: spki_sha256(&key),
            backups: vec![],
            presented: spki_sha256(&other),
        }
    );
}

#[test]
fn key_fingerprint_of_a_certificate() {
    let key = KeyType::Ed25519.key();
    let cert = crate::pki::server_params(&[HOST], 1)
        .self_signed(&key)
        .unwrap();
    assert_eq!(
        server_identity::Fingerprint::of_certificate_key(cert.der()),
        Ok(spki_sha256(&key))
    );
    assert!(matches!(
        server_identity::Fingerprint::of_certificate_key(b"not a certificate"),
        Err(CertificateProblem::Malformed { .. })
    ));
}
