//! Property tests of the streaming path: generated values and catalogs, written in random
//! spellings (whitespace, member order, escapes, number forms; `spelling.rs`), digest and
//! canonicalize exactly as the tree path and as the value itself; arbitrary bytes give the
//! same bytes or the same error on both paths.

use jcs_digest::{
    Profile, StreamReader, canonicalize, canonicalize_strict, parse_strict, tool_definition_digest,
};
use proptest::prelude::*;
use serde_json::{Map, Value};

use crate::properties::{any_string, finite_double, json_value};
use crate::spelling::spell;
use crate::stream::{agreed, streamed_from_tree};

/// A tool definition: some of the six members (sometimes null), `_meta`, and unknown members.
fn tool_definition() -> impl Strategy<Value = Value> {
    let member = prop_oneof![
        Just("name".to_owned()),
        Just("title".to_owned()),
        Just("description".to_owned()),
        Just("inputSchema".to_owned()),
        Just("outputSchema".to_owned()),
        Just("annotations".to_owned()),
        Just("_meta".to_owned()),
        any_string(),
    ];
    let value = prop_oneof![
        4 => json_value(finite_double()),
        1 => any_string().prop_map(Value::String),
        1 => Just(Value::Null),
        // Zero, whose spellings include the integer literal -0.
        1 => Just(Value::from(0)),
    ];
    proptest::collection::vec((member, value), 0..9)
        .prop_map(|members| Value::Object(members.into_iter().collect::<Map<_, _>>()))
}

fn catalog() -> impl Strategy<Value = Vec<Value>> {
    proptest::collection::vec(
        prop_oneof![
            8 => tool_definition(),
            1 => json_value(finite_double()),
        ],
        0..8,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// Any spelling of a value canonicalizes, on the stream, to the canonical bytes of the
    /// value itself (and the tree path agrees, bytes and digest).
    #[test]
    fn any_spelling_streams_to_the_canonical_bytes(
        value in json_value(finite_double()),
        seed in any::<u64>(),
    ) {
        let text = spell(&value, seed);
        let expected = canonicalize(&value).unwrap();
        prop_assert_eq!(canonicalize_strict(text.as_bytes()).unwrap(), expected.clone());
        prop_assert_eq!(agreed(text.as_bytes()).unwrap(), expected);
    }

    /// A generated catalog (a bare array), spelled at random, digested tool by tool from the
    /// bytes: the digests of the tree path on the same bytes and on the generated values.
    #[test]
    fn catalogs_stream_to_the_tree_digests(tools in catalog(), seed in any::<u64>()) {
        let text = spell(&Value::Array(tools.clone()), seed);
        let mut reader = StreamReader::new(text.as_bytes());
        reader.enter_array().unwrap();
        let mut streamed = Vec::new();
        while reader.next_element().unwrap() {
            streamed.push(reader.tool_definition(Profile::Trace).unwrap());
        }
        reader.finish().unwrap();
        let from_values: Vec<_> = tools.iter().map(streamed_from_tree).collect();
        prop_assert_eq!(&streamed, &from_values);
        let Value::Array(reread) = parse_strict(text.as_bytes()).unwrap() else {
            panic!("not an array");
        };
        let from_tree: Vec<_> = reread.iter().map(streamed_from_tree).collect();
        prop_assert_eq!(&streamed, &from_tree);
        for (tool, value) in streamed.iter().zip(&tools) {
            if let jcs_digest::StreamedTool::Definition { digest, .. } = tool {
                prop_assert_eq!(*digest, tool_definition_digest(value, Profile::Trace).unwrap());
            }
        }
    }

    /// Arbitrary bytes near JSON: both paths give the same canonical bytes or the same error
    /// (kind, pointer, offset), for every entry point of the stream.
    #[test]
    fn arbitrary_bytes_agree_on_both_paths(
        bytes in proptest::collection::vec(
            prop_oneof![
                4 => proptest::sample::select(
                    b"[]{}\",:0123456789-+.eE \\u\nntrufalsdNI\xc3\xa9\xed\xa0\x80".to_vec()
                ),
                1 => any::<u8>(),
            ],
            0..48,
        )
    ) {
        let _ = agreed(&bytes);
    }

    /// Strings and member names of arbitrary bytes (every lead and continuation byte, the
    /// overlong and surrogate forms, truncated sequences): the stream checks UTF-8 as it scans
    /// and must refuse exactly where `str::from_utf8` does.
    #[test]
    fn utf8_in_strings_agrees_on_both_paths(
        content in proptest::collection::vec(
            prop_oneof![
                2 => proptest::sample::select(b"ab\\\"u".to_vec()),
                1 => 0x80u8..=0xff,
                1 => proptest::sample::select(
                    vec![0xc0u8, 0xc1, 0xc2, 0xdf, 0xe0, 0xed, 0xee, 0xef, 0xf0, 0xf4, 0xf5, 0x9f, 0xa0, 0xbf]
                ),
            ],
            0..16,
        ),
        as_name in any::<bool>(),
    ) {
        let mut bytes = if as_name { b"{\"".to_vec() } else { b"[\"".to_vec() };
        bytes.extend_from_slice(&content);
        bytes.extend_from_slice(if as_name { b"\": 1}" } else { b"\"]" });
        let _ = agreed(&bytes);
    }

    /// Valid documents with one byte changed: errors deep inside a structure agree too.
    #[test]
    fn mutated_documents_agree_on_both_paths(
        value in json_value(finite_double()),
        seed in any::<u64>(),
        at in any::<prop::sample::Index>(),
        byte in prop_oneof![
            proptest::sample::select(b"[]{}\",:0-.e\\u \x00\xff".to_vec()),
            any::<u8>(),
        ],
    ) {
        let mut bytes = spell(&value, seed).into_bytes();
        let at = at.index(bytes.len());
        bytes[at] = byte;
        let _ = agreed(&bytes);
    }
}

/// A decimal literal with a fraction and no exponent, shaped near where the stream stops
/// copying the literal and converts it instead: 14 to 17 significant digits, up to seven zeros
/// after the point below 1, a trailing zero or not, either sign.
fn decimal_literal() -> impl Strategy<Value = String> {
    let integer = prop_oneof![
        Just(String::from("0")),
        "[1-9][0-9]{0,16}".prop_map(String::from),
    ];
    let fraction = ("0{0,7}", "[0-9]{0,16}", "[0-9]")
        .prop_map(|(zeros, digits, last)| format!("{zeros}{digits}{last}"));
    (any::<bool>(), integer, fraction).prop_map(|(negative, integer, fraction)| {
        format!("{}{integer}.{fraction}", if negative { "-" } else { "" })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    /// The stream copies a fraction it finds already canonical and converts any other; either
    /// way it writes what the tree path writes from the double (ECMAScript's shortest form).
    #[test]
    fn a_decimal_literal_streams_as_its_double_is_written(literal in decimal_literal()) {
        let expected = canonicalize(&parse_strict(literal.as_bytes()).unwrap()).unwrap();
        prop_assert_eq!(agreed(literal.as_bytes()).unwrap(), expected);
    }
}

#[test]
fn fractions_copied_as_written_and_those_converted() {
    for (literal, canonical) in [
        // Copied: already the shortest form of their double.
        ("9468.5", "9468.5"),
        ("-0.5", "-0.5"),
        ("0.000001", "0.000001"),
        ("123456789012345.6", "123456789012345.6"),
        ("0.123456789012345", "0.123456789012345"),
        // Converted: a trailing zero, an exponent form, more than 15 digits, zero.
        ("1.50", "1.5"),
        ("2.0", "2"),
        ("-0.0", "0"),
        ("0.0000001", "1e-7"),
        ("0.1000000000000000055511151231257827", "0.1"),
        ("1234567890123456.7", "1234567890123456.8"),
        ("1e-3", "0.001"),
    ] {
        assert_eq!(
            canonicalize_strict(literal.as_bytes()).unwrap(),
            canonical.as_bytes(),
            "{literal}"
        );
        assert_eq!(
            agreed(literal.as_bytes()).unwrap(),
            canonical.as_bytes(),
            "{literal}"
        );
    }
}
