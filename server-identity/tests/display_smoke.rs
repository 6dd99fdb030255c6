//! Display smoke test of the error enums (`IdentityError` also has its own exact test in
//! `errors.rs`): each message shows the values it carries.

use server_identity::{
    AnchorsError, BundleError, CertificateProblem, ConfigError, IdentityError, ObserveError,
    SpiffeIdError,
};

#[test]
fn messages_carry_their_values() {
    let cases: Vec<(String, &[&str])> = vec![
        (
            IdentityError::SvidWithoutDigitalSignature {
                presented: "spiffe://td/w".parse().unwrap(),
                key_usage: Some(vec!["keyAgreement".to_owned()]),
            }
            .to_string(),
            &[
                "spiffe://td/w",
                "keyUsage keyAgreement",
                "digitalSignature",
                "reissue",
            ],
        ),
        (
            IdentityError::SvidWithoutDigitalSignature {
                presented: "spiffe://td/w".parse().unwrap(),
                key_usage: None,
            }
            .to_string(),
            &["spiffe://td/w", "no keyUsage extension", "digitalSignature"],
        ),
        (
            CertificateProblem::UnknownIssuer.to_string(),
            &["unknown certificate authority"],
        ),
        (
            CertificateProblem::NotValidYet {
                now: "N".into(),
                not_before: "B".into(),
            }
            .to_string(),
            &["not before B", "now N"],
        ),
        (
            CertificateProblem::NotValidForName {
                expected: "a.test".into(),
                presented: vec![],
            }
            .to_string(),
            &["a.test", "no names"],
        ),
        (
            CertificateProblem::CaUsedAsEndEntity.to_string(),
            &["CA certificate"],
        ),
        (CertificateProblem::BadSignature.to_string(), &["signature"]),
        (
            CertificateProblem::UnsupportedSignatureAlgorithm.to_string(),
            &["unsupported"],
        ),
        (
            CertificateProblem::NotForServerAuth.to_string(),
            &["server authentication"],
        ),
        (
            CertificateProblem::NameConstraintViolation.to_string(),
            &["name constraints"],
        ),
        (
            CertificateProblem::Other {
                detail: "xyz".into(),
            }
            .to_string(),
            &["xyz"],
        ),
        (
            AnchorsError::PinTrustWithoutFingerprint.to_string(),
            &["tls_fingerprint"],
        ),
        (
            AnchorsError::PinTrustWithSpiffeId.to_string(),
            &["remove tls_trust `pin`"],
        ),
        (
            AnchorsError::BackupsWithoutFingerprint.to_string(),
            &["set the primary"],
        ),
        (ConfigError::Tls { detail: "d".into() }.to_string(), &["d"]),
        (
            BundleError::TrustDomain {
                presented: "X".into(),
                reason: SpiffeIdError::MissingTrustDomain,
            }
            .to_string(),
            &["`X`", "empty trust domain"],
        ),
        (
            BundleError::X5cCount {
                index: 3,
                presented: 2,
            }
            .to_string(),
            &["key 3", "2 certificates", "exactly 1"],
        ),
        (
            BundleError::NoX509SvidKey.to_string(),
            &["no x509-svid key"],
        ),
        (
            BundleError::Certificate {
                index: 1,
                problem: CertificateProblem::UnknownIssuer,
            }
            .to_string(),
            &["certificate 1", "unknown certificate authority"],
        ),
        (
            ObserveError::Handshake {
                address: "h:1".into(),
                detail: "eof".into(),
            }
            .to_string(),
            &["h:1", "eof", "speaking TLS"],
        ),
        (
            ObserveError::Certificate {
                problem: CertificateProblem::BadSignature,
            }
            .to_string(),
            &["signature"],
        ),
    ];
    for (message, parts) in cases {
        for part in parts {
            assert!(message.contains(part), "{message:?} lacks {part:?}");
        }
    }
}
