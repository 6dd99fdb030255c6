//! The `sha256:` digest type. Known SHA-256 values computed independently with
//! `python3 -c 'import hashlib; print(hashlib.sha256(b"").hexdigest())'` (and `b"abc"`).

use std::collections::HashSet;

use jcs_digest::{Digest, DigestParseError};

const EMPTY: &str = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const ABC: &str = "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

#[test]
fn hashes_and_displays() {
    assert_eq!(Digest::of(b"").to_string(), EMPTY);
    assert_eq!(Digest::of(b"abc").to_string(), ABC);
    assert_eq!(format!("{:?}", Digest::of(b"abc")), ABC);
}

/// `Digest::text` (which `Display` writes) against hex made by the formatter, for every byte
/// value at every position, and its bytes against its `str`.
#[test]
fn text_is_the_prefix_and_lowercase_hex_of_every_byte() {
    for value in 0..=255u8 {
        let mut bytes = [0u8; 32];
        for (position, byte) in bytes.iter_mut().enumerate() {
            *byte = value.wrapping_add((position as u8).wrapping_mul(37));
        }
        let expected: String = std::iter::once("sha256:".to_owned())
            .chain(bytes.iter().map(|byte| format!("{byte:02x}")))
            .collect();
        let digest = Digest::from_bytes(bytes);
        assert_eq!(digest.text().as_str(), expected);
        assert_eq!(digest.text().as_bytes(), expected.as_bytes());
        assert_eq!(digest.to_string(), expected);
        assert_eq!(format!("{:?}", digest.text()), format!("{expected:?}"));
        assert_eq!(expected.parse::<Digest>().unwrap(), digest);
    }
}

#[test]
fn parses_its_own_text() {
    let digest: Digest = ABC.parse().unwrap();
    assert_eq!(digest, Digest::of(b"abc"));
    assert_eq!(digest.as_bytes()[..4], [0xba, 0x78, 0x16, 0xbf]);
    assert_eq!(Digest::from_bytes(*digest.as_bytes()), digest);
    assert_ne!(digest, Digest::of(b""));
}

#[test]
fn order_is_the_order_of_the_text_and_hash_agrees_with_equality() {
    let mut digests: Vec<Digest> = (0u8..50).map(|i| Digest::of(&[i])).collect();
    let mut texts: Vec<String> = digests.iter().map(Digest::to_string).collect();
    digests.sort();
    texts.sort();
    assert_eq!(
        digests.iter().map(Digest::to_string).collect::<Vec<_>>(),
        texts
    );
    let set: HashSet<Digest> = [Digest::of(b"abc"), ABC.parse().unwrap(), Digest::of(b"")].into();
    assert_eq!(set.len(), 2);
}

#[test]
fn parse_errors_say_what_is_wrong() {
    let hex = &ABC["sha256:".len()..];
    let cases: Vec<(String, DigestParseError, &str)> = vec![
        (
            format!("SHA256:{hex}"),
            DigestParseError::Prefix {
                expected: "sha256:",
                found: "SHA256:".into(),
            },
            "a digest must start with \"sha256:\", found \"SHA256:\"; write the algorithm in \
             lowercase followed by a colon, as in \"sha256:<64 lowercase hex>\"",
        ),
        (
            hex.to_owned(),
            DigestParseError::Prefix {
                expected: "sha256:",
                found: "ba7816b".into(),
            },
            "a digest must start with \"sha256:\", found \"ba7816b\"; write the algorithm in \
             lowercase followed by a colon, as in \"sha256:<64 lowercase hex>\"",
        ),
        (
            String::new(),
            DigestParseError::Prefix {
                expected: "sha256:",
                found: String::new(),
            },
            "a digest must start with \"sha256:\", found \"\"; write the algorithm in \
             lowercase followed by a colon, as in \"sha256:<64 lowercase hex>\"",
        ),
        (
            format!("sha256:ba7816BF{}", &hex[8..]),
            DigestParseError::UppercaseHex {
                position: 13,
                character: 'B',
            },
            "uppercase hexadecimal digit 'B' at position 13; a digest is written in lowercase \
             hexadecimal",
        ),
        (
            format!("sha256:{}g", &hex[..63]),
            DigestParseError::InvalidCharacter {
                position: 70,
                character: 'g',
            },
            "'g' at position 70 is not a lowercase hexadecimal digit; after \"sha256:\" a \
             digest holds exactly 64 characters 0-9 a-f",
        ),
        (
            format!("{ABC}\n"),
            DigestParseError::InvalidCharacter {
                position: 71,
                character: '\n',
            },
            "'\\n' at position 71 is not a lowercase hexadecimal digit; after \"sha256:\" a \
             digest holds exactly 64 characters 0-9 a-f",
        ),
        (
            format!("sha256:é{}", &hex[1..]),
            DigestParseError::InvalidCharacter {
                position: 7,
                character: 'é',
            },
            "'é' at position 7 is not a lowercase hexadecimal digit; after \"sha256:\" a \
             digest holds exactly 64 characters 0-9 a-f",
        ),
        (
            format!("sha256:{}", &hex[..63]),
            DigestParseError::Length {
                expected: 64,
                found: 63,
            },
            "a digest has 64 hexadecimal digits after \"sha256:\", found 63; check that it was \
             copied whole",
        ),
        (
            format!("{ABC}0"),
            DigestParseError::Length {
                expected: 64,
                found: 65,
            },
            "a digest has 64 hexadecimal digits after \"sha256:\", found 65; check that it was \
             copied whole",
        ),
    ];
    for (text, error, display) in cases {
        assert_eq!(text.parse::<Digest>(), Err(error.clone()), "{text:?}");
        assert_eq!(error.to_string(), display);
    }
}
