//! The `ServerAnchors` builder: what it refuses (seed 003 §1 Phase 1) and what it keeps.

use server_identity::{AnchorsError, Fingerprint, RotationMode, ServerAnchors, SpiffeId, TlsTrust};

fn fingerprint(byte: u8) -> Fingerprint {
    Fingerprint::from_bytes([byte; 32])
}

fn id() -> SpiffeId {
    "spiffe://corp.example/salesforce/mcp-server"
        .parse()
        .unwrap()
}

#[test]
fn refusals() {
    assert_eq!(
        ServerAnchors::builder().build(),
        Err(AnchorsError::NoAnchor)
    );
    assert_eq!(
        ServerAnchors::builder().tls_trust(TlsTrust::Pin).build(),
        Err(AnchorsError::NoAnchor)
    );
    assert_eq!(
        ServerAnchors::builder()
            .backup_fingerprint(fingerprint(1))
            .build(),
        Err(AnchorsError::BackupsWithoutFingerprint)
    );
    assert_eq!(
        ServerAnchors::builder()
            .spiffe_id(id())
            .backup_fingerprint(fingerprint(1))
            .build(),
        Err(AnchorsError::BackupsWithoutFingerprint)
    );
    assert_eq!(
        ServerAnchors::builder()
            .spiffe_id(id())
            .tls_trust(TlsTrust::Pin)
            .build(),
        Err(AnchorsError::PinTrustWithoutFingerprint)
    );
    assert_eq!(
        ServerAnchors::builder()
            .spiffe_id(id())
            .fingerprint(fingerprint(1))
            .tls_trust(TlsTrust::Pin)
            .build(),
        Err(AnchorsError::PinTrustWithSpiffeId)
    );
}

#[test]
fn accepted_sets_keep_every_field() {
    let anchors = ServerAnchors::builder()
        .fingerprint(fingerprint(1))
        .backup_fingerprint(fingerprint(2))
        .backup_fingerprint(fingerprint(3))
        .rotation_mode(RotationMode::CertPinned)
        .spiffe_id(id())
        .build()
        .unwrap();
    assert_eq!(anchors.fingerprint(), Some(&fingerprint(1)));
    assert_eq!(
        anchors.backup_fingerprints(),
        [fingerprint(2), fingerprint(3)]
    );
    assert_eq!(anchors.rotation_mode(), RotationMode::CertPinned);
    assert_eq!(anchors.spiffe_id(), Some(&id()));
    assert_eq!(anchors.tls_trust(), TlsTrust::Webpki);

    let spiffe_only = ServerAnchors::builder().spiffe_id(id()).build().unwrap();
    assert_eq!(spiffe_only.fingerprint(), None);
    assert_eq!(spiffe_only.rotation_mode(), RotationMode::KeyPinned);

    let pin = ServerAnchors::builder()
        .fingerprint(fingerprint(1))
        .tls_trust(TlsTrust::Pin)
        .build();
    assert_eq!(pin.map(|a| a.tls_trust()), Ok(TlsTrust::Pin));
}
