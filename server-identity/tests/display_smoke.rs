//! Display smoke test of the error enums (`IdentityError` also has its own exact test in
//! `errors.rs`): each message shows the values it carries.

use server_identity::{
    AnchorsError, BundleError, CertificateProblem, ConfigError, EntrypointError, FileDigest,
    FileDigestError, IdentityError, ObserveError, SpiffeIdError, TimestampError,
};

#[test]
fn messages_carry_their_values() {
    let cases: Vec<(String, &[&str])> = vec![
        (
            IdentityError::EntrypointMismatch {
                path: "/srv/mcp/index.js".into(),
                expected: FileDigest::from_bytes([0xaa; 32]),
                observed: FileDigest::from_bytes([0x11; 32]),
            }
            .to_string(),
            &[
                "/srv/mcp/index.js",
                "expected sha256:aaaaaaaaaaaaaaaaaaaaaaaa",
                "digest sha256:111111111111111111111111",
                "not started",
                "toolgate identity --command -- CMD ARGS…",
            ],
        ),
        (
            IdentityError::EntrypointUnreadable {
                path: "/srv/mcp/index.js".into(),
                detail: "Permission denied (os error 13)".into(),
            }
            .to_string(),
            &[
                "/srv/mcp/index.js",
                "Permission denied (os error 13)",
                "permissions",
                "toolgate identity --command -- CMD ARGS…",
            ],
        ),
        (
            EntrypointError::RelativePath {
                path: "dist/x.js".into(),
            }
            .to_string(),
            &["dist/x.js", "relative", "cwd"],
        ),
        (
            EntrypointError::DuplicatePath {
                path: "/x.js".into(),
            }
            .to_string(),
            &["/x.js", "twice"],
        ),
        (
            FileDigestError::MissingPrefix {
                presented: "md5:x".into(),
            }
            .to_string(),
            &["`md5:x`", "sha256:"],
        ),
        (
            FileDigestError::WrongLength { presented: 40 }.to_string(),
            &["40 bytes", "64 hex digits"],
        ),
        (
            FileDigestError::InvalidCharacter {
                character: 'z',
                position: 9,
            }
            .to_string(),
            &["`z`", "byte 9"],
        ),
        (
            TimestampError::Syntax {
                reason: "the hour is outside 00-23",
            }
            .to_string(),
            &["the hour is outside 00-23", "RFC 3339"],
        ),
        (
            TimestampError::OutOfRange { unix_seconds: -99 }.to_string(),
            &["-99 s", "9999-12-31T23:59:59Z"],
        ),
        (
            TimestampError::Nanos {
                nanos: 2_000_000_000,
            }
            .to_string(),
            &["2000000000 ns"],
        ),
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
        (ObserveError::NoCertificate.to_string(), &["no certificate"]),
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
