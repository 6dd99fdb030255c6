//! Fuzz the identity parsers of `server_identity`, which read catalog files and operator input:
//! no input panics; every accepted fingerprint prints in the one canonical form, which reads back
//! to the same bytes; every accepted SPIFFE ID prints as it was given and reads back unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use server_identity::{Fingerprint, RotationMode, SpiffeId, TlsTrust};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };

    if let Ok(fingerprint) = text.parse::<Fingerprint>() {
        let canonical = fingerprint.to_string();
        assert_eq!(canonical.len(), "SHA256:".len() + 64);
        assert!(canonical.starts_with("SHA256:"));
        assert!(canonical[7..].bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
        let again: Fingerprint = canonical.parse().expect("canonical form must parse");
        assert_eq!(again.as_bytes(), fingerprint.as_bytes());
    }

    if let Ok(id) = text.parse::<SpiffeId>() {
        assert_eq!(id.to_string(), text);
        assert!(text.starts_with("spiffe://"));
        assert!(!id.trust_domain().is_empty());
        let again: SpiffeId = id.to_string().parse().expect("a printed SPIFFE ID must parse");
        assert_eq!(again.to_string(), text);
    }

    // The mode parsers accept exactly their documented spellings.
    if let Ok(mode) = text.parse::<RotationMode>() {
        assert!(matches!(text, "key-pinned" | "cert-pinned"), "{mode:?} from {text:?}");
    }
    if let Ok(trust) = text.parse::<TlsTrust>() {
        assert!(matches!(text, "webpki" | "pin"), "{trust:?} from {text:?}");
    }
});
