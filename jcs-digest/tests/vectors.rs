//! Byte-exact agreement with the JCS vectors in `corpus/jcs` (see PROVENANCE.upstream.txt
//! there). The expected bytes come from the RFC's author's reference repository, the RFC text
//! and V8; none is computed by this crate.

use jcs_digest::{StrictJsonErrorKind, canonicalize, parse_strict};
use serde_json::{Number, Value};

use crate::material::{read_material, read_material_text};

const CASES: [&str; 6] = [
    "arrays",
    "french",
    "structures",
    "unicode",
    "values",
    "weird",
];

/// Hex pairs separated by whitespace, as in `testdata/outhex/*.txt`.
fn decode_hex(text: &str) -> Vec<u8> {
    text.split_whitespace()
        .map(|pair| u8::from_str_radix(pair, 16).unwrap())
        .collect()
}

#[test]
fn cyberphone_input_output_pairs_are_byte_exact() {
    for case in CASES {
        let input = read_material(&format!("jcs/testdata/input/{case}.json"));
        let expected = read_material(&format!("jcs/testdata/output/{case}.json"));
        let outhex = read_material_text(&format!("jcs/testdata/outhex/{case}.txt"));
        // The two expected forms agree (guards against a damaged copy of the vectors).
        assert_eq!(
            decode_hex(&outhex),
            expected,
            "{case}: output and outhex disagree"
        );

        let value = parse_strict(&input).unwrap_or_else(|e| panic!("{case}: {e}"));
        let canonical = canonicalize(&value).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&canonical),
            String::from_utf8_lossy(&expected),
            "{case}"
        );
        assert_eq!(canonical, expected, "{case}");
        // The canonical output is itself a fixed point.
        assert_eq!(
            canonicalize(&parse_strict(&expected).unwrap()).unwrap(),
            expected
        );
    }
}

/// One row of `rfc8785-appendix-b.tsv`.
struct AppendixBRow {
    bits: u64,
    expected: String,
    accepted: bool,
}

fn appendix_b_rows() -> Vec<AppendixBRow> {
    read_material_text("jcs/rfc8785-appendix-b.tsv")
        .lines()
        .filter(|line| !line.starts_with('#') && !line.starts_with("ieee754_hex"))
        .map(|line| {
            let columns: Vec<&str> = line.split('\t').collect();
            AppendixBRow {
                bits: u64::from_str_radix(columns[0], 16).unwrap(),
                expected: columns[1].to_owned(),
                accepted: match columns[2] {
                    "ok" => true,
                    "reject" => false,
                    other => panic!("unknown outcome {other:?} in row {line:?}"),
                },
            }
        })
        .collect()
}

/// The finite rows, given as the double itself (`Value::Number` from the IEEE bits).
#[test]
fn appendix_b_finite_rows_from_doubles() {
    let rows = appendix_b_rows();
    assert_eq!(rows.len(), 26);
    let mut checked = 0;
    for row in rows.iter().filter(|row| row.accepted) {
        let number = Number::from_f64(f64::from_bits(row.bits)).unwrap();
        let canonical = canonicalize(&Value::Number(number)).unwrap();
        assert_eq!(
            String::from_utf8(canonical).unwrap(),
            row.expected,
            "bits {:016x}",
            row.bits
        );
        checked += 1;
    }
    assert_eq!(checked, 24);
}

/// NaN and Infinity (RFC 8785 §3.2.2.3: an error) cannot reach the canonicalizer at all: a
/// `serde_json::Number` cannot hold them, and as JSON text they are refused by the reader.
#[test]
fn appendix_b_nan_and_infinity_rows_are_refused() {
    let refused: Vec<AppendixBRow> = appendix_b_rows()
        .into_iter()
        .filter(|row| !row.accepted)
        .collect();
    assert_eq!(refused.len(), 2);
    for row in &refused {
        let double = f64::from_bits(row.bits);
        assert!(!double.is_finite());
        assert_eq!(row.expected, "");
        assert_eq!(Number::from_f64(double), None);
        // The trap a caller must know about: serde_json turns a non-finite f64 into null.
        assert_eq!(Value::from(double), Value::Null);
    }
    let message = "NaN and Infinity are not JSON numbers, and RFC 8785 cannot represent them";
    for (text, offset) in [
        ("NaN", 0),
        ("Infinity", 0),
        ("-Infinity", 0),
        ("[1, NaN]", 4),
    ] {
        let error = parse_strict(text.as_bytes()).unwrap_err();
        assert_eq!(
            error.kind(),
            &StrictJsonErrorKind::Syntax {
                message: message.to_owned()
            },
            "{text}"
        );
        assert_eq!(error.offset(), offset, "{text}");
    }
    // The only other textual route to an infinity is a literal that overflows.
    let error = parse_strict(b"1e400").unwrap_err();
    assert_eq!(
        error.kind(),
        &StrictJsonErrorKind::NumberOverflow {
            pointer: String::new(),
            literal: "1e400".to_owned()
        }
    );
}

/// The finite rows given as JSON text (their expected text): the reader and canonicalizer
/// reproduce them, except the five integer literals outside ±(2^53−1), which the strict reader
/// refuses by design (docs/design.md §2) even though they are the canonical form of a double.
#[test]
fn appendix_b_finite_rows_from_text() {
    let mut reproduced = 0;
    let mut refused = Vec::new();
    for row in appendix_b_rows().iter().filter(|row| row.accepted) {
        match parse_strict(row.expected.as_bytes()) {
            Ok(value) => {
                assert_eq!(
                    String::from_utf8(canonicalize(&value).unwrap()).unwrap(),
                    row.expected
                );
                reproduced += 1;
            }
            Err(error) => {
                assert_eq!(
                    error.kind(),
                    &StrictJsonErrorKind::IntegerOutOfRange {
                        pointer: String::new(),
                        literal: row.expected.clone()
                    }
                );
                refused.push(row.expected.clone());
            }
        }
    }
    assert_eq!(reproduced, 19);
    assert_eq!(
        refused,
        [
            "9007199254740992",
            "-9007199254740992",
            "295147905179352830000",
            "999999999999999700000",
            "999999999999999900000",
        ]
    );
    // The same doubles written with an exponent are read and written back canonically.
    for (text, canonical) in [
        ("9.007199254740992e15", "9007199254740992"),
        ("-9.007199254740992E+15", "-9007199254740992"),
        ("2.9514790517935283e20", "295147905179352830000"),
    ] {
        let value = parse_strict(text.as_bytes()).unwrap();
        assert_eq!(
            String::from_utf8(canonicalize(&value).unwrap()).unwrap(),
            canonical
        );
    }
}

/// 10,000 lines `hex-ieee,expected` generated by the RFC author's numgen.js on V8.
#[test]
fn es6_number_serialization_first_10000() {
    let text = read_material_text("jcs/es6numbers/es6testfile-first10000.txt");
    // The committed copy is the published 10,000-line prefix of the reference file: its SHA-256
    // is the one the reference repository's README lists for N = 10000.
    assert_eq!(
        hex(&<sha2::Sha256 as sha2::Digest>::digest(text.as_bytes())),
        "b9f7a8e75ef22a835685a52ccba7f7d6bdc99e34b010992cbc5864cd12be6892"
    );
    let mut checked = 0;
    let mut failures = Vec::new();
    for line in text.lines() {
        let (hex, expected) = line.split_once(',').unwrap();
        let double = f64::from_bits(u64::from_str_radix(hex, 16).unwrap());
        let number = Number::from_f64(double).unwrap();
        let canonical = String::from_utf8(canonicalize(&Value::Number(number)).unwrap()).unwrap();
        if canonical != expected {
            failures.push(format!("{hex}: expected {expected}, wrote {canonical}"));
        }
        checked += 1;
    }
    assert_eq!(failures, Vec::<String>::new());
    assert_eq!(checked, 10_000);
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}
