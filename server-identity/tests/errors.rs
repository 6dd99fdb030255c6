//! Every `IdentityError` variant: its anchor, equality, and its Display (expected and presented
//! both shown, with what to do). The other error enums' messages are smoke-tested too.

use server_identity::{
    Anchor, AnchorsError, CertificateProblem, ConfigError, FileDigest, Fingerprint, IdentityError,
    RotationMode, SpiffeId, SpiffeIdError,
};

fn fp(byte: u8) -> Fingerprint {
    Fingerprint::from_bytes([byte; 32])
}

fn digest(byte: u8) -> FileDigest {
    FileDigest::from_bytes([byte; 32])
}

fn id(text: &str) -> SpiffeId {
    text.parse().unwrap()
}

fn every_variant() -> Vec<(IdentityError, Anchor, &'static str)> {
    vec![
        (
            IdentityError::MalformedLeaf {
                problem: CertificateProblem::Malformed {
                    detail: "invalid DER".to_owned(),
                },
            },
            Anchor::Certificate,
            "identity mismatch: the server's certificate is unreadable: malformed certificate (invalid DER)",
        ),
        (
            IdentityError::PinMismatch {
                mode: RotationMode::KeyPinned,
                expected: fp(0xaa),
                backups: vec![fp(0xbb)],
                presented: fp(0x11),
            },
            Anchor::TlsFingerprint,
            "identity mismatch (tls_fingerprint, key-pinned): expected SHA256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa (or a backup: SHA256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb), presented SHA256:1111111111111111111111111111111111111111111111111111111111111111; if the server's key changed on purpose, update tls_fingerprint in the catalog (`toolgate identity URL` prints it)",
        ),
        (
            IdentityError::PinMismatch {
                mode: RotationMode::CertPinned,
                expected: fp(0xaa),
                backups: vec![],
                presented: fp(0x11),
            },
            Anchor::TlsFingerprint,
            "identity mismatch (tls_fingerprint, cert-pinned): expected SHA256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, presented SHA256:1111111111111111111111111111111111111111111111111111111111111111; if the server's certificate changed on purpose, update tls_fingerprint in the catalog (`toolgate identity URL` prints it)",
        ),
        (
            IdentityError::WebpkiRejected {
                problem: CertificateProblem::NotValidForName {
                    expected: "mcp.example.test".to_owned(),
                    presented: vec!["other.example.test".to_owned()],
                },
            },
            Anchor::Webpki,
            "identity mismatch (tls_trust webpki): not valid for mcp.example.test; the certificate names other.example.test; if the server is self-signed, pin its key with tls_trust `pin`, or give the gateway its CA",
        ),
        (
            IdentityError::SvidUriSanCount {
                expected: id("spiffe://td/a"),
                presented: vec!["spiffe://td/a".to_owned(), "spiffe://td/b".to_owned()],
            },
            Anchor::SpiffeId,
            "identity mismatch (spiffe_id): expected one URI SAN spiffe://td/a, presented spiffe://td/a, spiffe://td/b",
        ),
        (
            IdentityError::SvidInvalidId {
                expected: id("spiffe://td/a"),
                presented: "spiffe://TD/a".to_owned(),
                reason: SpiffeIdError::TrustDomainCharacter {
                    character: 'T',
                    position: 9,
                },
            },
            Anchor::SpiffeId,
            "identity mismatch (spiffe_id): expected spiffe://td/a, presented `spiffe://TD/a`, which is not a SPIFFE ID: SPIFFE ID trust domain has `T` at byte 9: only lowercase letters, digits, `.`, `-` and `_` are allowed",
        ),
        (
            IdentityError::SpiffeIdMismatch {
                expected: id("spiffe://td/a"),
                presented: id("spiffe://td/b"),
            },
            Anchor::SpiffeId,
            "identity mismatch (spiffe_id): expected spiffe://td/a, presented spiffe://td/b; if the workload was renamed on purpose, update spiffe_id in the catalog",
        ),
        (
            IdentityError::SvidIsCa {
                presented: id("spiffe://td/a"),
            },
            Anchor::SpiffeId,
            "identity mismatch (spiffe_id): the leaf for spiffe://td/a is a CA or may sign certificates; a leaf SVID must not be",
        ),
        (
            IdentityError::SvidWithoutDigitalSignature {
                presented: id("spiffe://td/a"),
                key_usage: Some(vec![
                    "keyEncipherment".to_owned(),
                    "keyAgreement".to_owned(),
                ]),
            },
            Anchor::SpiffeId,
            "identity mismatch (spiffe_id): the leaf for spiffe://td/a has keyUsage keyEncipherment, keyAgreement without digitalSignature; an X509-SVID leaf must carry the keyUsage extension with digitalSignature (X509-SVID §4.3): reissue the SVID with it",
        ),
        (
            IdentityError::SvidWithoutDigitalSignature {
                presented: id("spiffe://td/a"),
                key_usage: None,
            },
            Anchor::SpiffeId,
            "identity mismatch (spiffe_id): the leaf for spiffe://td/a has no keyUsage extension; an X509-SVID leaf must carry the keyUsage extension with digitalSignature (X509-SVID §4.3): reissue the SVID with it",
        ),
        (
            IdentityError::SvidWithoutDigitalSignature {
                presented: id("spiffe://td/a"),
                key_usage: Some(vec![]),
            },
            Anchor::SpiffeId,
            "identity mismatch (spiffe_id): the leaf for spiffe://td/a has an empty keyUsage; an X509-SVID leaf must carry the keyUsage extension with digitalSignature (X509-SVID §4.3): reissue the SVID with it",
        ),
        (
            IdentityError::SvidChainRejected {
                trust_domain: "td".to_owned(),
                problem: CertificateProblem::Expired {
                    now: "2026-06-01T00:00:00Z".to_owned(),
                    not_after: "2020-01-01T00:00:00Z".to_owned(),
                },
            },
            Anchor::SpiffeId,
            "identity mismatch (spiffe_id): the SVID does not validate to the trust bundle of td: expired: not after 2020-01-01T00:00:00Z, now 2026-06-01T00:00:00Z",
        ),
        (
            IdentityError::EntrypointMismatch {
                path: "/opt/mcp/everything/dist/index.js".into(),
                expected: digest(0xaa),
                observed: digest(0x11),
            },
            Anchor::Entrypoint,
            "identity mismatch (entrypoint): /opt/mcp/everything/dist/index.js has digest sha256:1111111111111111111111111111111111111111111111111111111111111111, expected sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa; the server was not started; if the change was intended (an upgrade), re-pin with `toolgate identity --command -- CMD ARGS…` and update entrypoint_digests in the catalog; otherwise find out who changed it",
        ),
        (
            IdentityError::EntrypointUnreadable {
                path: "/usr/bin/node".into(),
                detail: "No such file or directory (os error 2)".to_owned(),
            },
            Anchor::Entrypoint,
            "identity mismatch (entrypoint): cannot read /usr/bin/node to check its digest: No such file or directory (os error 2); the server was not started; check the path and its permissions, or if the change was intended (an upgrade), re-pin with `toolgate identity --command -- CMD ARGS…` and update entrypoint_digests in the catalog; otherwise find out who changed it",
        ),
    ]
}

#[test]
fn every_variant_names_its_anchor_and_displays_both_values() {
    for (error, anchor, message) in every_variant() {
        assert_eq!(error.anchor(), anchor, "{error:?}");
        assert_eq!(error.to_string(), message);
        assert_eq!(error.clone(), error);
    }
}

#[test]
fn variants_differ_from_each_other() {
    let all = every_variant();
    for (i, (a, _, _)) in all.iter().enumerate() {
        for (j, (b, _, _)) in all.iter().enumerate() {
            assert_eq!(i == j, a == b, "{a:?} vs {b:?}");
        }
    }
}

#[test]
fn identity_error_survives_the_rustls_error_round_trip() {
    // The form the verifier returns, as rustls and tokio-rustls hand it back.
    let error = IdentityError::SvidIsCa {
        presented: id("spiffe://td/a"),
    };
    let tls = rustls::Error::InvalidCertificate(rustls::CertificateError::Other(
        rustls::OtherError(std::sync::Arc::new(error.clone())),
    ));
    assert_eq!(IdentityError::from_tls_error(&tls), Some(&error));
    let io = std::io::Error::new(std::io::ErrorKind::InvalidData, tls);
    assert_eq!(IdentityError::from_io_error(&io), Some(&error));
    assert_eq!(
        IdentityError::from_tls_error(&rustls::Error::HandshakeNotComplete),
        None
    );
    assert_eq!(
        IdentityError::from_io_error(&std::io::Error::other("x")),
        None
    );
}

#[test]
fn other_messages_say_what_to_do() {
    assert_eq!(
        AnchorsError::NoAnchor.to_string(),
        "no identity anchor: set tls_fingerprint, spiffe_id or both (seed 003 §1, Phase 1 requirement)"
    );
    assert_eq!(
        ConfigError::NoRoots.to_string(),
        "tls_trust `webpki` needs trust roots, and the root store is empty: give the CA \
         certificates, or use tls_trust `pin` for a self-signed server"
    );
    assert_eq!(
        ConfigError::MissingBundle {
            trust_domain: "td".to_owned(),
            spiffe_id: id("spiffe://td/a")
        }
        .to_string(),
        "no trust bundle for trust domain td: load its SPIFFE bundle (PEM or JSON) before pinning spiffe://td/a"
    );
    for anchor in [
        Anchor::Certificate,
        Anchor::TlsFingerprint,
        Anchor::Webpki,
        Anchor::SpiffeId,
        Anchor::Entrypoint,
    ] {
        assert!(!anchor.to_string().is_empty());
    }
}
