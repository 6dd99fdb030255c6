//! Every accepted and rejected `Fingerprint` text form (docs/design.md §3), with exact errors.

use server_identity::{Fingerprint, FingerprintError};

const CANONICAL: &str = "SHA256:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
const COLON: &str = "00:01:02:03:04:05:06:07:08:09:0A:0B:0C:0D:0E:0F:10:11:12:13:14:15:16:17:18:19:1A:1B:1C:1D:1E:1F";
const BASE64_UNPADDED: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8";

fn expected() -> Fingerprint {
    Fingerprint::from_bytes(std::array::from_fn(|i| i as u8))
}

#[test]
fn every_accepted_form_parses_to_the_same_fingerprint() {
    let forms = [
        CANONICAL.to_owned(),
        CANONICAL.to_uppercase(),
        "SHA256:000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F".to_owned(),
        "SHA256:000102030405060708090a0B0c0D0e0F101112131415161718191a1B1c1D1e1F".to_owned(),
        COLON.to_owned(),
        COLON.to_lowercase(),
        format!("sha256 Fingerprint={COLON}"),
        format!("SHA256 Fingerprint={COLON}"),
        format!("SHA256:{BASE64_UNPADDED}"),
        format!("SHA256:{BASE64_UNPADDED}="),
        format!("  {CANONICAL}\n"),
        format!("sha256 Fingerprint={COLON}\n"),
    ];
    for form in forms {
        assert_eq!(form.parse::<Fingerprint>(), Ok(expected()), "{form:?}");
    }
}

#[test]
fn display_is_canonical_and_round_trips() {
    assert_eq!(expected().to_string(), CANONICAL);
    assert_eq!(
        format!("{:?}", expected()),
        format!("Fingerprint({CANONICAL})")
    );
    let parsed: Fingerprint = format!("SHA256:{BASE64_UNPADDED}").parse().unwrap();
    assert_eq!(parsed.to_string(), CANONICAL);
    assert_eq!(parsed.as_bytes(), expected().as_bytes());
}

#[test]
fn of_spki_and_of_certificate_are_sha256() {
    // SHA-256("abc"), FIPS 180-2 appendix B.1.
    let abc = "SHA256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    assert_eq!(Fingerprint::of_spki(b"abc").to_string(), abc);
    assert_eq!(Fingerprint::of_certificate(b"abc").to_string(), abc);
}

#[test]
fn equality_compares_all_bytes() {
    let mut other = *expected().as_bytes();
    other[31] ^= 1;
    assert_ne!(expected(), Fingerprint::from_bytes(other));
    other[31] ^= 1;
    assert_eq!(expected(), Fingerprint::from_bytes(other));
}

fn error(text: &str) -> FingerprintError {
    text.parse::<Fingerprint>().unwrap_err()
}

#[test]
fn rejected_forms_have_exact_errors() {
    use FingerprintError::*;
    assert_eq!(error(""), Empty);
    assert_eq!(error("   "), Empty);
    // Bare hex: which hash is it? The `SHA256:` prefix is required.
    let bare = &CANONICAL["SHA256:".len()..];
    assert_eq!(
        error(bare),
        UnknownForm {
            presented: bare.to_owned()
        }
    );
    assert_eq!(
        error("sha256:abc"),
        UnknownForm {
            presented: "sha256:abc".to_owned()
        }
    );
    assert_eq!(
        error("SHA1:0102"),
        UnknownForm {
            presented: "SHA1:0102".to_owned()
        }
    );
    assert_eq!(
        error(&CANONICAL[..CANONICAL.len() - 2]),
        WrongLength {
            form: "`SHA256:` hex or base64",
            expected: "64 (hex) or 43/44 (base64)",
            presented: 62
        }
    );
    assert_eq!(
        error(&format!("{CANONICAL}00")),
        WrongLength {
            form: "`SHA256:` hex or base64",
            expected: "64 (hex) or 43/44 (base64)",
            presented: 66
        }
    );
    let mut not_hex = CANONICAL.to_owned();
    not_hex.replace_range(10..11, "g");
    assert_eq!(
        error(&not_hex),
        InvalidCharacter {
            form: "hex",
            character: 'g',
            position: 10
        }
    );
    // A SHA-1 in colon form (20 pairs).
    assert_eq!(
        error(&COLON[..59]),
        WrongLength {
            form: "colon-separated hex",
            expected: "95 (32 hex pairs separated by `:`)",
            presented: 59
        }
    );
    assert_eq!(
        error(&COLON.replace("0A:", "0A-")),
        InvalidCharacter {
            form: "colon-separated hex",
            character: '-',
            position: 32
        }
    );
    assert_eq!(
        error(&format!("sha256 Fingerprint={}", COLON.replace("1F", "1Z"))),
        InvalidCharacter {
            form: "colon-separated hex",
            character: 'Z',
            position: 19 + 94
        }
    );
    assert_eq!(
        error(&format!("sha256 Fingerprint={CANONICAL}")),
        WrongLength {
            form: "colon-separated hex",
            expected: "95 (32 hex pairs separated by `:`)",
            presented: 71
        }
    );
    // base64url is not OpenSSH's alphabet.
    assert_eq!(
        error(&format!("SHA256:{}", BASE64_UNPADDED.replace('E', "-"))),
        InvalidCharacter {
            form: "base64",
            character: '-',
            position: 7 + 2
        }
    );
    // Non-zero trailing bits: a second spelling of another fingerprint is refused.
    assert_eq!(
        error(&format!("SHA256:{}9", &BASE64_UNPADDED[..42])),
        InvalidCharacter {
            form: "base64",
            character: '9',
            position: 7 + 42
        }
    );
    // 44 characters must end in `=`.
    assert_eq!(
        error(&format!("SHA256:{BASE64_UNPADDED}A")),
        WrongLength {
            form: "base64",
            expected: "43 (or 44 ending in `=`)",
            presented: 44
        }
    );
    // A multi-byte character is reported whole.
    assert_eq!(
        error(&format!("SHA256:{}é", &CANONICAL[7..69])),
        InvalidCharacter {
            form: "hex",
            character: 'é',
            position: 7 + 62
        }
    );
}

#[test]
fn errors_show_the_accepted_forms() {
    let message = error("nonsense").to_string();
    assert_eq!(
        message,
        "unrecognized fingerprint `nonsense`; accepted forms: `SHA256:` + 64 hex digits (any \
         case); colon-separated hex as `openssl x509 -fingerprint -sha256` prints it, with or \
         without its `sha256 Fingerprint=` prefix; `SHA256:` + base64 (43 characters, or 44 \
         ending in `=`, as OpenSSH prints)"
    );
    for text in ["", "SHA256:00", &COLON[..59], "SHA256:zz"] {
        assert!(
            error(text).to_string().contains("accepted forms:"),
            "{text}"
        );
    }
    let long = "x".repeat(500);
    assert_eq!(
        error(&long),
        FingerprintError::UnknownForm {
            presented: format!("{}…", "x".repeat(100))
        }
    );
}
