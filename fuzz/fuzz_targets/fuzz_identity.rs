//! Fuzz the identity parsers of `server_identity`, which read catalog files and operator input:
//! no input panics; every accepted fingerprint prints in the one canonical form, which reads back
//! to the same bytes; every accepted SPIFFE ID prints as it was given and reads back unchanged;
//! every accepted file digest is its canonical text up to the case of its hex; every accepted
//! RFC 3339 timestamp prints in a form that reads back to the same instant.
#![no_main]

use libfuzzer_sys::fuzz_target;
use server_identity::{FileDigest, Fingerprint, RotationMode, SpiffeId, TlsTrust, UtcTimestamp};

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

    if let Ok(digest) = text.parse::<FileDigest>() {
        let canonical = digest.to_string();
        assert_eq!(canonical, format!("sha256:{}", text["sha256:".len()..].to_ascii_lowercase()));
        assert_eq!(canonical.parse::<FileDigest>().ok(), Some(digest));
    }

    if let Ok(time) = text.parse::<UtcTimestamp>() {
        let printed = time.to_string();
        assert_eq!(printed.parse::<UtcTimestamp>().ok(), Some(time), "{text:?} → {printed}");
        assert!(printed.ends_with('Z'));
    }

    // The mode parsers accept exactly their documented spellings.
    if let Ok(mode) = text.parse::<RotationMode>() {
        assert!(matches!(text, "key-pinned" | "cert-pinned"), "{mode:?} from {text:?}");
    }
    if let Ok(trust) = text.parse::<TlsTrust>() {
        assert!(matches!(text, "webpki" | "pin"), "{trust:?} from {text:?}");
    }
});
