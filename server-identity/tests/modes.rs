//! `RotationMode` and `TlsTrust` spellings, defaults and errors.

use server_identity::{ModeError, RotationMode, TlsTrust};

#[test]
fn rotation_mode_round_trips_and_defaults_to_key_pinned() {
    assert_eq!(RotationMode::default(), RotationMode::KeyPinned);
    for mode in [RotationMode::KeyPinned, RotationMode::CertPinned] {
        assert_eq!(mode.to_string().parse::<RotationMode>(), Ok(mode));
    }
    assert_eq!(RotationMode::KeyPinned.to_string(), "key-pinned");
    assert_eq!(RotationMode::CertPinned.to_string(), "cert-pinned");
}

#[test]
fn unknown_rotation_mode_lists_both() {
    for text in ["", "Key-Pinned", "key_pinned", "spki"] {
        let error = text.parse::<RotationMode>().unwrap_err();
        assert_eq!(
            error,
            ModeError::UnknownRotationMode {
                presented: text.to_owned()
            }
        );
    }
    assert_eq!(
        "spki".parse::<RotationMode>().unwrap_err().to_string(),
        "unknown rotation_mode `spki`: expected `key-pinned` (the default) or `cert-pinned`"
    );
}

#[test]
fn tls_trust_round_trips_and_defaults_to_webpki() {
    assert_eq!(TlsTrust::default(), TlsTrust::Webpki);
    for trust in [TlsTrust::Webpki, TlsTrust::Pin] {
        assert_eq!(trust.to_string().parse::<TlsTrust>(), Ok(trust));
    }
    assert_eq!(TlsTrust::Pin.to_string(), "pin");
    assert_eq!(
        "none".parse::<TlsTrust>().unwrap_err(),
        ModeError::UnknownTlsTrust {
            presented: "none".to_owned()
        }
    );
    assert_eq!(
        "WebPKI".parse::<TlsTrust>().unwrap_err().to_string(),
        "unknown tls_trust `WebPKI`: expected `webpki` (the default) or `pin`"
    );
}
