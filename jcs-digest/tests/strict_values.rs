//! What the strict reader accepts, and the exact values it produces.

use jcs_digest::{StrictReader, canonicalize, parse_strict};
use serde_json::{Map, Number, Value, json};

/// The canonical text of `input`, the streaming path checked to agree (`stream::agreed`).
fn canonical_text(input: &[u8]) -> String {
    let canonical = canonicalize(&parse_strict(input).unwrap()).unwrap();
    assert_eq!(crate::stream::agreed(input).unwrap(), canonical);
    String::from_utf8(canonical).unwrap()
}

fn float_bits(input: &[u8]) -> u64 {
    match parse_strict(input).unwrap() {
        Value::Number(number) => {
            assert!(number.is_f64(), "{number} is not read as a double");
            number.as_f64().unwrap().to_bits()
        }
        other => panic!("not a number: {other}"),
    }
}

#[test]
fn integer_literals_are_read_as_serde_json_reads_them() {
    assert_eq!(
        parse_strict(b"0").unwrap(),
        Value::Number(Number::from(0u64))
    );
    assert_eq!(
        parse_strict(b"-5").unwrap(),
        Value::Number(Number::from(-5i64))
    );
    let max = (1u64 << 53) - 1;
    assert_eq!(parse_strict(b"9007199254740991").unwrap(), json!(max));
    assert_eq!(
        parse_strict(b"-9007199254740991").unwrap(),
        json!(-(max as i64))
    );
    // -0 is the double -0.0, as in serde_json; its canonical form is "0".
    let negative_zero = parse_strict(b"-0").unwrap();
    assert_eq!(
        negative_zero,
        serde_json::from_slice::<Value>(b"-0").unwrap()
    );
    assert_eq!(
        negative_zero.as_f64().unwrap().to_bits(),
        (-0.0f64).to_bits()
    );
    assert_eq!(canonical_text(b"-0"), "0");
}

#[test]
fn other_numbers_are_the_nearest_double() {
    assert_eq!(float_bits(b"1.0"), 1.0f64.to_bits());
    assert_eq!(float_bits(b"1E2"), 100.0f64.to_bits());
    assert_eq!(float_bits(b"0.1"), 0x3FB9_9999_9999_999A);
    // Exactly halfway cases and long literals must round correctly (to even).
    assert_eq!(
        float_bits(b"0.1000000000000000055511151231257827021181583404541015625"),
        0x3FB9_9999_9999_999A
    );
    assert_eq!(float_bits(b"9007199254740993.0"), 0x4340_0000_0000_0000);
    assert_eq!(
        float_bits(b"2.2250738585072011e-308"),
        0x000F_FFFF_FFFF_FFFF
    );
    // Largest value that still rounds to f64::MAX.
    assert_eq!(float_bits(b"1.7976931348623158e308"), f64::MAX.to_bits());
    // Underflow is not an error: the nearest double is zero.
    assert_eq!(float_bits(b"1e-400"), 0);
    assert_eq!(float_bits(b"-1e-400"), (-0.0f64).to_bits());
    assert_eq!(canonical_text(b"-1e-400"), "0");
    assert_eq!(
        canonical_text(b"[1.0, 1E2, 4.50, -0.0, 1e21, 123e-2]"),
        "[1,100,4.5,0,1e+21,1.23]"
    );
}

#[test]
fn escapes_are_decoded() {
    let value = parse_strict(br#""\"\\\/\b\f\n\r\t\u00e9\u20AC\ud83d\ude00\u0000""#).unwrap();
    assert_eq!(
        value,
        Value::String("\"\\/\u{8}\u{c}\n\r\t\u{e9}\u{20ac}\u{1f600}\u{0}".to_owned())
    );
    // Unescaped UTF-8 and DEL are taken as they are.
    assert_eq!(
        parse_strict("\"é😀\u{7f}\"".as_bytes()).unwrap(),
        json!("é😀\u{7f}")
    );
}

#[test]
fn whitespace_is_allowed_around_every_token() {
    let value = parse_strict(b" \t\r\n{ \"a\" : [ 1 , true , null ] , \"b\" : { } } \n").unwrap();
    assert_eq!(value, json!({"a": [1, true, null], "b": {}}));
}

#[test]
fn the_same_name_in_different_objects_is_not_a_duplicate() {
    let value = parse_strict(br#"[{"a":1},{"a":2,"b":{"a":3}}]"#).unwrap();
    assert_eq!(value, json!([{"a": 1}, {"a": 2, "b": {"a": 3}}]));
}

#[test]
fn nesting_at_the_limit_is_accepted() {
    let input = format!("{}{}", "[".repeat(128), "]".repeat(128));
    assert_eq!(canonical_text(input.as_bytes()), input);
    let mut reader = StrictReader::new();
    reader.max_depth(0);
    assert_eq!(reader.parse(b" 7 ").unwrap(), json!(7));
    assert_eq!(StrictReader::default(), StrictReader::new());
    assert_eq!(StrictReader::DEFAULT_MAX_DEPTH, 128);
}

#[test]
fn values_agree_with_serde_json_inside_the_strict_domain() {
    let inputs: [&[u8]; 4] = [
        br#"{"name":"x","n":[0,-1,2.5,1e300,-9007199254740991],"o":{"":null,"t":true}}"#,
        br#"[]"#,
        br#""\u0041\n""#,
        b"[1.5e-7, 3, 0.5]",
    ];
    for input in inputs {
        let ours = parse_strict(input).unwrap();
        let theirs: Value = serde_json::from_slice(input).unwrap();
        assert_eq!(ours, theirs, "{}", String::from_utf8_lossy(input));
    }
}

#[test]
fn member_order_of_the_input_does_not_matter() {
    let a = parse_strict(br#"{"b":1,"a":{"d":2,"c":3}}"#).unwrap();
    let b = parse_strict(br#"{"a":{"c":3,"d":2},"b":1}"#).unwrap();
    assert_eq!(a, b);
    let mut expected = Map::new();
    expected.insert("a".to_owned(), json!({"c": 3, "d": 2}));
    expected.insert("b".to_owned(), json!(1));
    assert_eq!(a, Value::Object(expected));
}

#[test]
fn surrogate_pairs_at_the_edges_of_the_range() {
    assert_eq!(
        parse_strict(br#""\ud800\udc00""#).unwrap(),
        json!("\u{10000}")
    );
    assert_eq!(
        parse_strict(br#""\uDBFF\uDFFF""#).unwrap(),
        json!("\u{10ffff}")
    );
    assert_eq!(
        parse_strict(br#""\ud7ff\ue000""#).unwrap(),
        json!("\u{d7ff}\u{e000}")
    );
}

#[test]
fn zero_in_every_spelling() {
    for (input, bits) in [
        ("0.0", 0.0f64.to_bits()),
        ("-0.0", (-0.0f64).to_bits()),
        ("0e0", 0.0f64.to_bits()),
        ("-0E-0", (-0.0f64).to_bits()),
    ] {
        assert_eq!(float_bits(input.as_bytes()), bits, "{input}");
        assert_eq!(canonical_text(input.as_bytes()), "0", "{input}");
    }
}

/// The real catalogs in `corpus/catalogs` read the same as with serde_json.
#[test]
fn shared_catalogs_read_as_serde_json_reads_them() {
    for name in ["deepwiki-tools-list.json", "everything-tools-list.json"] {
        let bytes = crate::material::read_material(&format!("catalogs/{name}"));
        let theirs: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(parse_strict(&bytes).unwrap(), theirs, "{name}");
    }
}
