//! `FromStr` for `ToolKey`: valid key texts round-trip, and every error variant is exact.

use catalog_key::{ToolKey, ToolKeyParseError};

fn parse(text: &str) -> Result<ToolKey, ToolKeyParseError> {
    text.parse::<ToolKey>()
}

#[test]
fn accepts_produced_keys_including_cut_ones() {
    for name in [
        "ask_question",
        "",
        "a b=c%",
        "café🚀",
        &"b".repeat(129),
        &format!("{}{}", "a".repeat(95), " ".repeat(20)),
        &format!("{}{}", "a".repeat(94), " ".repeat(20)),
        &"é".repeat(50),
    ] {
        let key = ToolKey::from_name(name);
        assert_eq!(parse(key.as_str()), Ok(key.clone()), "name {name:?}");
    }
}

#[test]
fn accepts_a_cut_prefix_ending_inside_a_utf8_sequence() {
    // "%C3" alone is an incomplete character; rule 3 may cut there.
    let body = format!("{}%C3~0123456789abcdef", "a".repeat(93));
    let key = parse(&format!("tool:{body}")).unwrap();
    assert!(key.is_cut());
    assert_eq!(key.body(), body);
}

#[test]
fn missing_prefix() {
    assert_eq!(
        parse("tools:overflow"),
        Err(ToolKeyParseError::MissingPrefix {
            found: "tools:overflow".into()
        })
    );
    assert_eq!(
        parse(&"x".repeat(100)),
        Err(ToolKeyParseError::MissingPrefix {
            found: "x".repeat(32)
        })
    );
}

#[test]
fn empty_body() {
    assert_eq!(parse("tool:"), Err(ToolKeyParseError::EmptyBody));
}

#[test]
fn body_too_long() {
    assert_eq!(
        parse(&format!("tool:{}", "a".repeat(129))),
        Err(ToolKeyParseError::BodyTooLong {
            max: 128,
            length: 129
        })
    );
}

#[test]
fn disallowed_characters() {
    assert_eq!(
        parse("tool:a=b"),
        Err(ToolKeyParseError::DisallowedCharacter {
            offset: 1,
            character: '='
        })
    );
    assert_eq!(
        parse("tool:a b"),
        Err(ToolKeyParseError::DisallowedCharacter {
            offset: 1,
            character: ' '
        })
    );
    assert_eq!(
        parse("tool:ab\n"),
        Err(ToolKeyParseError::DisallowedCharacter {
            offset: 2,
            character: '\n'
        })
    );
    assert_eq!(
        parse("tool:café"),
        Err(ToolKeyParseError::DisallowedCharacter {
            offset: 3,
            character: 'é'
        })
    );
}

#[test]
fn malformed_escapes() {
    assert_eq!(
        parse("tool:a%"),
        Err(ToolKeyParseError::MalformedEscape { offset: 1 })
    );
    assert_eq!(
        parse("tool:a%2"),
        Err(ToolKeyParseError::MalformedEscape { offset: 1 })
    );
    assert_eq!(
        parse("tool:%c3%a9"),
        Err(ToolKeyParseError::MalformedEscape { offset: 0 })
    );
    assert_eq!(
        parse("tool:%G0"),
        Err(ToolKeyParseError::MalformedEscape { offset: 0 })
    );
}

#[test]
fn non_canonical_escape() {
    assert_eq!(
        parse("tool:x%41"),
        Err(ToolKeyParseError::NonCanonicalEscape {
            offset: 1,
            byte: 0x41,
            literal: 'A'
        })
    );
}

#[test]
fn escapes_that_are_not_utf8() {
    assert_eq!(
        parse("tool:ab%FF"),
        Err(ToolKeyParseError::InvalidUtf8 { offset: 2 })
    );
    // A truncated character is only acceptable where rule 3 cut the body.
    assert_eq!(
        parse("tool:a%C3"),
        Err(ToolKeyParseError::InvalidUtf8 { offset: 1 })
    );
    assert_eq!(
        parse("tool:%ED%A0%80"),
        Err(ToolKeyParseError::InvalidUtf8 { offset: 0 })
    );
}

#[test]
fn cut_shape_with_bad_prefix_is_refused() {
    let body = format!("{}=~0123456789abcdef", "a".repeat(95));
    assert_eq!(
        parse(&format!("tool:{body}")),
        Err(ToolKeyParseError::DisallowedCharacter {
            offset: 95,
            character: '='
        })
    );
}

#[test]
fn display_says_what_and_what_to_do() {
    let cases = [
        (
            ToolKeyParseError::MissingPrefix { found: "x".into() },
            "tool key must start with \"tool:\", found \"x\"; keys are written as tool:<body> (seed 000 §4)",
        ),
        (
            ToolKeyParseError::EmptyBody,
            "tool key \"tool:\" has an empty body; a tool with no name is keyed tool:unnamed",
        ),
        (
            ToolKeyParseError::BodyTooLong {
                max: 128,
                length: 129,
            },
            "tool key body is 129 bytes, longer than the maximum of 128; longer names are cut to 96 characters + \"~\" + 16 hex (seed 000 §4 rule 3)",
        ),
        (
            ToolKeyParseError::DisallowedCharacter {
                offset: 1,
                character: '=',
            },
            "tool key body has '=' at offset 1; a body holds only printable ASCII other than \"=\", everything else is written as %XX",
        ),
        (
            ToolKeyParseError::MalformedEscape { offset: 4 },
            "tool key body has a \"%\" at offset 4 that is not followed by two uppercase hex digits; escapes are written %XX with XX in 0-9A-F",
        ),
        (
            ToolKeyParseError::NonCanonicalEscape {
                offset: 1,
                byte: 0x41,
                literal: 'A',
            },
            "tool key body escapes 'A' as \"%41\" at offset 1, but that character is always written literally; this key was not produced by the encoding",
        ),
        (
            ToolKeyParseError::InvalidUtf8 { offset: 2 },
            "tool key body escapes starting at offset 2 do not decode to UTF-8; a tool name is always UTF-8",
        ),
    ];
    for (error, message) in cases {
        assert_eq!(error.to_string(), message);
    }
}

#[test]
fn cut_prefix_ending_in_a_partial_triplet_is_still_checked_for_utf8() {
    let body = format!("{}%FF{}%~0123456789abcdef", "a".repeat(88), "a".repeat(4));
    assert_eq!(
        parse(&format!("tool:{body}")),
        Err(ToolKeyParseError::InvalidUtf8 { offset: 88 })
    );
}
