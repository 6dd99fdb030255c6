//! The fourteen rows of the identity contract (docs/design.md §3, seed 003 §4), each a real handshake
//! over loopback, over TLS 1.3 and 1.2 and over ECDSA P-256, Ed25519 and RSA-2048 keys. Every refusal
//! asserts the exact reason and that the server read zero bytes of application data.

use std::sync::Arc;

use rustls::{RootCertStore, SupportedProtocolVersion};
use server_identity::{
    CertificateProblem, Fingerprint, IdentityError, RotationMode, ServerAnchors, SpiffeId,
    TlsTrust, TrustBundles, client_config,
};

use crate::loopback::{VERSIONS, connect, connect_as};
use crate::pki::{
    Ca, HOST, KeyType, SVID_ID, ServerCert, TRUST_DOMAIN, server_cert, server_params, spki_sha256,
    svid_params,
};

/// Every (key type, protocol version) pair a row runs under.
fn variants() -> Vec<(KeyType, &'static SupportedProtocolVersion)> {
    KeyType::ALL
        .into_iter()
        .flat_map(|key_type| VERSIONS.into_iter().map(move |version| (key_type, version)))
        .collect()
}

fn bundles(ca: &Ca) -> TrustBundles {
    let mut bundles = TrustBundles::new();
    bundles.add_pem(TRUST_DOMAIN, ca.pem.as_bytes()).unwrap();
    bundles
}

fn key_pin(fingerprint: Fingerprint, mode: RotationMode) -> ServerAnchors {
    ServerAnchors::builder()
        .fingerprint(fingerprint)
        .rotation_mode(mode)
        .build()
        .unwrap()
}

fn spiffe(id: &str) -> ServerAnchors {
    ServerAnchors::builder()
        .spiffe_id(id.parse().unwrap())
        .build()
        .unwrap()
}

fn config(anchors: &ServerAnchors, ca: &Ca) -> Arc<rustls::ClientConfig> {
    client_config(anchors, ca.roots(), &TrustBundles::new()).unwrap()
}

fn svid_config(anchors: &ServerAnchors, domain_ca: &Ca) -> Arc<rustls::ClientConfig> {
    client_config(
        anchors,
        Arc::new(RootCertStore::empty()),
        &bundles(domain_ca),
    )
    .unwrap()
}

fn id(text: &str) -> SpiffeId {
    text.parse().unwrap()
}

// Row 1: the right SPKI pin, CA-valid chain for the host name.
#[tokio::test]
async fn row_01_right_key_pin_is_accepted() {
    for (key_type, version) in variants() {
        let ca = Ca::new("web ca", key_type);
        let key = key_type.key();
        let cert = server_cert(&ca, &key, 1);
        let anchors = key_pin(spki_sha256(&key), RotationMode::KeyPinned);
        connect(&cert, version, config(&anchors, &ca))
            .await
            .assert_accepted();
    }
}

// Row 2: a renewal with the same key passes key-pinned and fails cert-pinned (seed 003 §4).
#[tokio::test]
async fn row_02_renewal_with_same_key_passes_key_pinned_fails_cert_pinned() {
    for (key_type, version) in variants() {
        let ca = Ca::new("web ca", key_type);
        let key = key_type.key();
        let original = server_cert(&ca, &key, 1);
        let renewed = server_cert(&ca, &key, 2);
        assert_ne!(original.cert_sha256(), renewed.cert_sha256());

        let key_pinned = key_pin(spki_sha256(&key), RotationMode::KeyPinned);
        connect(&renewed, version, config(&key_pinned, &ca))
            .await
            .assert_accepted();

        let cert_pinned = key_pin(original.cert_sha256(), RotationMode::CertPinned);
        connect(&original, version, config(&cert_pinned, &ca))
            .await
            .assert_accepted();
        connect(&renewed, version, config(&cert_pinned, &ca))
            .await
            .assert_refused(&IdentityError::PinMismatch {
                mode: RotationMode::CertPinned,
                expected: original.cert_sha256(),
                backups: vec![],
                presented: renewed.cert_sha256(),
            });
    }
}

// Row 3: a new key fails in both modes.
#[tokio::test]
async fn row_03_new_key_is_refused_in_both_modes() {
    for (key_type, version) in variants() {
        let ca = Ca::new("web ca", key_type);
        let (old_key, new_key) = (key_type.key(), key_type.key());
        let original = server_cert(&ca, &old_key, 1);
        let rekeyed = server_cert(&ca, &new_key, 2);

        let key_pinned = key_pin(spki_sha256(&old_key), RotationMode::KeyPinned);
        connect(&rekeyed, version, config(&key_pinned, &ca))
            .await
            .assert_refused(&IdentityError::PinMismatch {
                mode: RotationMode::KeyPinned,
                expected: spki_sha256(&old_key),
                backups: vec![],
                presented: spki_sha256(&new_key),
            });
        let cert_pinned = key_pin(original.cert_sha256(), RotationMode::CertPinned);
        connect(&rekeyed, version, config(&cert_pinned, &ca))
            .await
            .assert_refused(&IdentityError::PinMismatch {
                mode: RotationMode::CertPinned,
                expected: original.cert_sha256(),
                backups: vec![],
                presented: rekeyed.cert_sha256(),
            });
    }
}

// Row 4: a planned rotation: the new key is a backup fingerprint.
#[tokio::test]
async fn row_04_new_key_matching_a_backup_is_accepted() {
    for (key_type, version) in variants() {
        let ca = Ca::new("web ca", key_type);
        let (old_key, new_key) = (key_type.key(), key_type.key());
        let rekeyed = server_cert(&ca, &new_key, 2);
        let anchors = ServerAnchors::builder()
            .fingerprint(spki_sha256(&old_key))
            .backup_fingerprint(spki_sha256(&key_type.key()))
            .backup_fingerprint(spki_sha256(&new_key))
            .build()
            .unwrap();
        connect(&rekeyed, version, config(&anchors, &ca))
            .await
            .assert_accepted();
    }
}

// Row 5: an impostor with a CA-valid certificate for the right host name but its own key.
#[tokio::test]
async fn row_05_ca_valid_impostor_with_another_key_is_refused() {
    for (key_type, version) in variants() {
        let ca = Ca::new("web ca", key_type);
        let (real_key, impostor_key) = (key_type.key(), key_type.key());
        let impostor = server_cert(&ca, &impostor_key, 7);
        let anchors = key_pin(spki_sha256(&real_key), RotationMode::KeyPinned);
        connect(&impostor, version, config(&anchors, &ca))
            .await
            .assert_refused(&IdentityError::PinMismatch {
                mode: RotationMode::KeyPinned,
                expected: spki_sha256(&real_key),
                backups: vec![],
                presented: spki_sha256(&impostor_key),
            });
    }
}

// Row 6: the right key, in a certificate for another host name, under `webpki`.
#[tokio::test]
async fn row_06_right_key_wrong_host_name_is_refused_under_webpki() {
    for (key_type, version) in variants() {
        let ca = Ca::new("web ca", key_type);
        let key = key_type.key();
        let cert = ServerCert::new(
            ca.issue(&server_params(&["other.example.test"], 1), &key),
            &key,
        );
        let anchors = key_pin(spki_sha256(&key), RotationMode::KeyPinned);
        connect(&cert, version, config(&anchors, &ca))
            .await
            .assert_refused(&IdentityError::WebpkiRejected {
                problem: CertificateProblem::NotValidForName {
                    expected: HOST.to_owned(),
                    presented: vec!["other.example.test".to_owned()],
                },
            });
        // The same certificate, reached under its own name, passes: the name was the fault.
        connect_as(&cert, version, config(&anchors, &ca), "other.example.test")
            .await
            .assert_accepted();
    }
}

// Row 7: a self-signed leaf: `webpki` refuses it, `pin` trusts the pinned key alone.
#[tokio::test]
async fn row_07_self_signed_leaf_refused_by_webpki_accepted_by_pin() {
    for (key_type, version) in variants() {
        let ca = Ca::new("web ca", key_type);
        let key = key_type.key();
        let cert = ServerCert::new(
            server_params(&[HOST], 1)
                .self_signed(&key)
                .unwrap()
                .der()
                .clone(),
            &key,
        );
        let webpki = key_pin(spki_sha256(&key), RotationMode::KeyPinned);
        connect(&cert, version, config(&webpki, &ca))
            .await
            .assert_refused(&IdentityError::WebpkiRejected {
                problem: CertificateProblem::UnknownIssuer,
            });
        let pin = ServerAnchors::builder()
            .fingerprint(spki_sha256(&key))
            .tls_trust(TlsTrust::Pin)
            .build()
            .unwrap();
        let pin_config =
            client_config(&pin, Arc::new(RootCertStore::empty()), &TrustBundles::new()).unwrap();
        connect(&cert, version, pin_config).await.assert_accepted();
    }
}

// Row 8: an SVID with the pinned ID, chaining to the trust domain's bundle.
#[tokio::test]
async fn row_08_svid_with_pinned_id_is_accepted() {
    for (key_type, version) in variants() {
        let domain_ca = Ca::new("corp.example", key_type);
        let key = key_type.key();
        let svid = ServerCert::new(domain_ca.issue(&svid_params(&[SVID_ID]), &key), &key);
        connect(&svid, version, svid_config(&spiffe(SVID_ID), &domain_ca))
            .await
            .assert_accepted();
    }
}

// Row 9: another workload of the same trust domain.
#[tokio::test]
async fn row_09_other_id_in_same_trust_domain_is_refused() {
    for (key_type, version) in variants() {
        let domain_ca = Ca::new("corp.example", key_type);
        let key = key_type.key();
        let other = "spiffe://corp.example/billing/mcp-server";
        let svid = ServerCert::new(domain_ca.issue(&svid_params(&[other]), &key), &key);
        connect(&svid, version, svid_config(&spiffe(SVID_ID), &domain_ca))
            .await
            .assert_refused(&IdentityError::SpiffeIdMismatch {
                expected: id(SVID_ID),
                presented: id(other),
            });
    }
}

// Row 10: the pinned ID, but signed by another trust domain's CA.
#[tokio::test]
async fn row_10_pinned_id_from_another_trust_domain_ca_is_refused() {
    for (key_type, version) in variants() {
        let domain_ca = Ca::new("corp.example", key_type);
        let foreign_ca = Ca::new("evil.example", key_type);
        let key = key_type.key();
        let svid = ServerCert::new(foreign_ca.issue(&svid_params(&[SVID_ID]), &key), &key);
        connect(&svid, version, svid_config(&spiffe(SVID_ID), &domain_ca))
            .await
            .assert_refused(&IdentityError::SvidChainRejected {
                trust_domain: TRUST_DOMAIN.to_owned(),
                problem: CertificateProblem::UnknownIssuer,
            });
    }
}

// Row 11: an SVID with two URI SANs (X509-SVID §2: exactly one).
#[tokio::test]
async fn row_11_svid_with_two_uri_sans_is_refused() {
    for (key_type, version) in variants() {
        let domain_ca = Ca::new("corp.example", key_type);
        let key = key_type.key();
        let second = "spiffe://corp.example/other";
        let svid = ServerCert::new(
            domain_ca.issue(&svid_params(&[SVID_ID, second]), &key),
            &key,
        );
        connect(&svid, version, svid_config(&spiffe(SVID_ID), &domain_ca))
            .await
            .assert_refused(&IdentityError::SvidUriSanCount {
                expected: id(SVID_ID),
                presented: vec![SVID_ID.to_owned(), second.to_owned()],
            });
    }
}

// Row 12: an SVID leaf that is a CA.
#[tokio::test]
async fn row_12_svid_leaf_that_is_a_ca_is_refused() {
    for (key_type, version) in variants() {
        let domain_ca = Ca::new("corp.example", key_type);
        let key = key_type.key();
        let mut params = svid_params(&[SVID_ID]);
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let svid = ServerCert::new(domain_ca.issue(&params, &key), &key);
        connect(&svid, version, svid_config(&spiffe(SVID_ID), &domain_ca))
            .await
            .assert_refused(&IdentityError::SvidIsCa {
                presented: id(SVID_ID),
            });
    }
}

// Row 13: an expired SVID: validity dates are enforced against the bundle chain.
#[tokio::test]
async fn row_13_expired_svid_is_refused() {
    for (key_type, version) in variants() {
        let domain_ca = Ca::new("corp.example", key_type);
        let key = key_type.key();
        let mut params = svid_params(&[SVID_ID]);
        params.not_before = rcgen::date_time_ymd(2019, 1, 1);
        params.not_after = rcgen::date_time_ymd(2020, 1, 1);
        let svid = ServerCert::new(domain_ca.issue(&params, &key), &key);
        let outcome = connect(&svid, version, svid_config(&spiffe(SVID_ID), &domain_ca)).await;
        // `now` is the handshake's clock: the exact value is asserted in `verify_identity` tests.
        let Err(IdentityError::SvidChainRejected {
            trust_domain,
            problem: CertificateProblem::Expired { now, not_after },
        }) = &outcome.client
        else {
            panic!("expected an expired SVID refusal, got {outcome:?}");
        };
        assert_eq!(trust_domain, TRUST_DOMAIN);
        assert_eq!(not_after, "2020-01-01T00:00:00Z");
        assert!(now.as_str() > "2026-", "{now}");
        outcome.assert_refused(outcome.client.as_ref().err().unwrap());
    }
}

// Row 14: both anchors set: the SPIFFE ID is right, the pin is not; both are enforced.
#[tokio::test]
async fn row_14_both_anchors_spiffe_right_pin_wrong_is_refused() {
    for (key_type, version) in variants() {
        let domain_ca = Ca::new("corp.example", key_type);
        let (key, pinned_key) = (key_type.key(), key_type.key());
        let svid = ServerCert::new(domain_ca.issue(&svid_params(&[SVID_ID]), &key), &key);
        let anchors = ServerAnchors::builder()
            .spiffe_id(id(SVID_ID))
            .fingerprint(spki_sha256(&pinned_key))
            .build()
            .unwrap();
        connect(&svid, version, svid_config(&anchors, &domain_ca))
            .await
            .assert_refused(&IdentityError::PinMismatch {
                mode: RotationMode::KeyPinned,
                expected: spki_sha256(&pinned_key),
                backups: vec![],
                presented: spki_sha256(&key),
            });
        // And with the right pin, both anchors pass.
        let both = ServerAnchors::builder()
            .spiffe_id(id(SVID_ID))
            .fingerprint(spki_sha256(&key))
            .build()
            .unwrap();
        connect(&svid, version, svid_config(&both, &domain_ca))
            .await
            .assert_accepted();
    }
}

// X509-SVID §4.3: a leaf SVID must carry keyUsage with digitalSignature. One with other key
// usages only, and one with no keyUsage extension at all, are both refused (webpki does not read
// an end entity's keyUsage, so this check is ours); with digitalSignature added, it passes.
#[tokio::test]
async fn svid_leaf_without_digital_signature_is_refused() {
    use rcgen::KeyUsagePurpose;
    for (key_type, version) in variants() {
        let domain_ca = Ca::new("corp.example", key_type);
        let key = key_type.key();
        for (usages, presented) in [
            (
                vec![
                    KeyUsagePurpose::KeyEncipherment,
                    KeyUsagePurpose::KeyAgreement,
                ],
                Some(vec![
                    "keyEncipherment".to_owned(),
                    "keyAgreement".to_owned(),
                ]),
            ),
            // rcgen writes no keyUsage extension for an empty list.
            (vec![], None),
        ] {
            let mut params = svid_params(&[SVID_ID]);
            params.key_usages = usages;
            let svid = ServerCert::new(domain_ca.issue(&params, &key), &key);
            connect(&svid, version, svid_config(&spiffe(SVID_ID), &domain_ca))
                .await
                .assert_refused(&IdentityError::SvidWithoutDigitalSignature {
                    presented: id(SVID_ID),
                    key_usage: presented,
                });
        }
        let mut params = svid_params(&[SVID_ID]);
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        let svid = ServerCert::new(domain_ca.issue(&params, &key), &key);
        connect(&svid, version, svid_config(&spiffe(SVID_ID), &domain_ca))
            .await
            .assert_accepted();
    }
}
