//! Property tests over generated JSON values inside the strict domain (integers within
//! ±(2^53−1), finite doubles, any strings and member names).
//!
//! `serde_jcs` 0.2 is the oracle for the canonical bytes. It agrees with RFC 8785 on the whole
//! strict domain as generated here (including `-0.0`, integral doubles and member names
//! outside the Basic Multilingual Plane), so the generator is not restricted for it.

use jcs_digest::{StrictJsonErrorKind, canonicalize, parse_strict, write_canonical_str};
use proptest::prelude::*;
use serde_json::{Map, Number, Value};

const MAX_SAFE: i64 = (1 << 53) - 1;

/// Characters from every class the canonicalizer treats differently.
fn any_char() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => proptest::char::range(' ', '~'),
        1 => proptest::char::range('\u{0}', '\u{1f}'),
        1 => Just('"'),
        1 => Just('\\'),
        1 => proptest::char::range('\u{80}', '\u{7ff}'),
        1 => proptest::char::range('\u{e000}', '\u{ffff}'),
        1 => proptest::char::range('\u{10000}', '\u{10ffff}'),
        1 => any::<char>(),
    ]
}

pub fn any_string() -> impl Strategy<Value = String> {
    proptest::collection::vec(any_char(), 0..8).prop_map(|chars| chars.into_iter().collect())
}

/// Every finite double, with extra weight on integral values and plain decimals.
pub fn finite_double() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<u64>()
            .prop_map(f64::from_bits)
            .prop_filter("finite", |x| x.is_finite()),
        (-1e6f64..1e6),
        (-(1i64 << 62)..(1i64 << 62)).prop_map(|x| x as f64),
        Just(-0.0),
        Just(9_007_199_254_740_992.0),
        Just(1e21),
    ]
}

/// Doubles whose canonical text has a fraction or an exponent, so that the strict reader reads
/// the text back as the same double (see the idempotence property for the others).
fn non_integral_double() -> impl Strategy<Value = f64> {
    finite_double().prop_filter("has a fraction or is at least 1e21", |x| {
        x.fract() != 0.0 || x.abs() >= 1e21
    })
}

pub fn json_value(double: impl Strategy<Value = f64> + 'static) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-MAX_SAFE..=MAX_SAFE).prop_map(|x| Value::Number(Number::from(x))),
        double.prop_map(|x| Value::Number(Number::from_f64(x).unwrap_or_else(|| Number::from(0)))),
        any_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec((any_string(), inner), 0..6)
                .prop_map(|members| Value::Object(members.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Whether `literal` is the canonical text of an integral double of magnitude in
/// [2^53, 1e21): such text is an integer literal outside ±(2^53−1), refused by design.
fn is_large_integral_double(literal: &str) -> bool {
    let magnitude = literal.trim_start_matches('-');
    magnitude.bytes().all(|b| b.is_ascii_digit())
        && literal
            .parse::<f64>()
            .is_ok_and(|x| x.abs() >= 9_007_199_254_740_992.0 && x.abs() < 1e21 && x.fract() == 0.0)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn canonical_bytes_equal_serde_jcs(value in json_value(finite_double())) {
        let ours = canonicalize(&value).unwrap();
        let oracle = serde_jcs::to_vec(&value).unwrap();
        prop_assert_eq!(String::from_utf8(ours).unwrap(), String::from_utf8(oracle).unwrap());
    }

    #[test]
    fn a_string_written_alone_is_its_value_canonicalized(text in any_string(), before in any_string()) {
        let mut out = before.clone().into_bytes();
        write_canonical_str(&text, &mut out);
        let mut expected = before.into_bytes();
        expected.extend(canonicalize(&Value::String(text)).unwrap());
        prop_assert_eq!(out, expected);
    }

    #[test]
    fn strict_reader_reads_canonical_bytes_back_to_the_value(
        value in json_value(non_integral_double())
    ) {
        let canonical = canonicalize(&value).unwrap();
        prop_assert_eq!(parse_strict(&canonical).unwrap(), value);
    }

    /// canonicalize ∘ parse_strict is the identity on canonical bytes, except for integral
    /// doubles in [2^53, 1e21), whose canonical text the strict reader refuses as an integer
    /// literal outside ±(2^53−1) (docs/design.md §2).
    #[test]
    fn canonicalization_is_idempotent(value in json_value(finite_double())) {
        let canonical = canonicalize(&value).unwrap();
        match parse_strict(&canonical) {
            Ok(reread) => prop_assert_eq!(canonicalize(&reread).unwrap(), canonical),
            Err(error) => match error.kind() {
                StrictJsonErrorKind::IntegerOutOfRange { literal, .. } => {
                    prop_assert!(is_large_integral_double(literal), "{}", error);
                }
                _ => prop_assert!(false, "canonical bytes refused: {}", error),
            },
        }
    }

    /// Any serialization of the value (serde_json's pretty printer writes doubles with a
    /// fraction, so every one is re-readable) canonicalizes to the same bytes.
    #[test]
    fn any_serialization_canonicalizes_the_same(value in json_value(finite_double())) {
        let pretty = serde_json::to_vec_pretty(&value).unwrap();
        let reread = parse_strict(&pretty).unwrap();
        prop_assert_eq!(canonicalize(&reread).unwrap(), canonicalize(&value).unwrap());
    }

    /// The fuzz target's property on generated bytes: never a panic, and a fixed point.
    #[test]
    fn arbitrary_bytes_never_panic_and_reach_a_fixed_point(
        bytes in proptest::collection::vec(
            prop_oneof![
                3 => proptest::sample::select(b"[]{}\",:0123456789-+.eE \\u\nntrufalsd".to_vec()),
                1 => any::<u8>(),
            ],
            0..40,
        )
    ) {
        if let Ok(value) = parse_strict(&bytes) {
            let canonical = canonicalize(&value).unwrap();
            if let Ok(reread) = parse_strict(&canonical) {
                prop_assert_eq!(canonicalize(&reread).unwrap(), canonical);
            }
        }
    }
}

/// The oracle on the classes where a JCS implementation most often goes wrong, so that the
/// property above is known to cover them whatever the generator happens to draw.
#[test]
fn serde_jcs_agrees_on_the_edge_cases() {
    let mut names = Map::new();
    for name in ["\u{ff61}", "\u{e000}", "\u{1f600}", "a", ""] {
        names.insert(name.to_owned(), Value::Null);
    }
    let edge_cases = [
        Value::Object(names),
        Value::Number(Number::from_f64(-0.0).unwrap()),
        Value::Number(Number::from_f64(1e21).unwrap()),
        Value::Number(Number::from_f64(9_007_199_254_740_992.0).unwrap()),
        Value::Number(Number::from_f64(5e-324).unwrap()),
        Value::Number(Number::from(-MAX_SAFE)),
        Value::String("\u{0}\u{1f}\u{7f}\"\\/\u{2028}".to_owned()),
    ];
    for value in edge_cases {
        assert_eq!(
            canonicalize(&value).unwrap(),
            serde_jcs::to_vec(&value).unwrap(),
            "{value}"
        );
    }
}
