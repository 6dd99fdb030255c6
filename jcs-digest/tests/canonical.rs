//! The canonicalizer on values built in code. Expected bytes are written out by hand from
//! RFC 8785 §3.2.2.2 (escaping), §3.2.3 (UTF-16 order) and §3.2.2.3 (numbers).

use jcs_digest::{CanonicalizeError, canonicalize, write_canonical};
use serde_json::{Map, Number, Value, json};

fn canonical_text(value: &Value) -> String {
    String::from_utf8(canonicalize(value).unwrap()).unwrap()
}

#[test]
fn strings_use_the_minimal_escaping() {
    let controls: String = (0u8..0x20).map(char::from).collect();
    let value = Value::String(format!("{controls}\"\\/\u{7f}\u{2028}é😀"));
    let expected = concat!(
        "\"",
        r"\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007",
        r"\b\t\n\u000b\f\r\u000e\u000f",
        r"\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017",
        r"\u0018\u0019\u001a\u001b\u001c\u001d\u001e\u001f",
        r#"\"\\/"#,
        "\u{7f}\u{2028}é😀",
        "\""
    );
    assert_eq!(canonical_text(&value), expected);
}

#[test]
fn members_are_sorted_by_utf16_code_units() {
    // serde_json's map iterates in UTF-8 (code point) order, which puts U+E000 and U+FF61
    // before U+1F600; in UTF-16 U+1F600 is D83D DE00, which sorts before E000 and FF61.
    let mut map = Map::new();
    for name in [
        "b",
        "\u{ff61}",
        "a",
        "\u{e000}",
        "\u{1f600}",
        "aa",
        "",
        "\u{7f}",
        "B",
    ] {
        map.insert(name.to_owned(), json!(name.len()));
    }
    assert_eq!(
        canonical_text(&Value::Object(map)),
        "{\"\":0,\"B\":1,\"a\":1,\"aa\":2,\"b\":1,\"\u{7f}\":1,\"😀\":4,\"\u{e000}\":3,\"\u{ff61}\":3}"
    );
}

#[test]
fn nested_containers_and_literals() {
    let value = json!({"z": [[], {}, [null, true, false]], "y": {"b": [1, {"a": "s"}]}});
    assert_eq!(
        canonical_text(&value),
        r#"{"y":{"b":[1,{"a":"s"}]},"z":[[],{},[null,true,false]]}"#
    );
    assert_eq!(canonical_text(&json!([])), "[]");
    assert_eq!(canonical_text(&json!({})), "{}");
    assert_eq!(canonical_text(&json!("")), "\"\"");
}

#[test]
fn numbers_in_ecmascript_form() {
    let max = (1u64 << 53) - 1;
    let value = json!([
        max,
        -(max as i64),
        0,
        -0.0,
        9007199254740992.0,
        1e21,
        1e-7,
        0.000001,
        -1.5,
        f64::MIN_POSITIVE
    ]);
    assert_eq!(
        canonical_text(&value),
        "[9007199254740991,-9007199254740991,0,0,9007199254740992,1e+21,1e-7,0.000001,-1.5,\
         2.2250738585072014e-308]"
    );
}

#[test]
fn integers_outside_the_safe_range_are_refused_not_rounded() {
    let cases = [
        (
            json!({"a": [1, 9007199254740992u64]}),
            "/a/1",
            "9007199254740992",
        ),
        (json!([-9007199254740992i64]), "/0", "-9007199254740992"),
        (json!(u64::MAX), "", "18446744073709551615"),
        (
            json!({"x/y~z": i64::MIN}),
            "/x~1y~0z",
            "-9223372036854775808",
        ),
    ];
    for (value, pointer, integer) in cases {
        assert_eq!(
            canonicalize(&value),
            Err(CanonicalizeError::IntegerOutOfRange {
                pointer: pointer.to_owned(),
                value: integer.to_owned()
            })
        );
    }
    let error = canonicalize(&json!({"a": [1, 9007199254740992u64]})).unwrap_err();
    assert_eq!(
        error.to_string(),
        "integer 9007199254740992 at JSON Pointer \"/a/1\" is outside ±(2^53−1) and has no \
         exact RFC 8785 form; write it as a string, or as an f64 if rounding is intended"
    );
}

#[test]
fn write_canonical_appends_and_leaves_the_buffer_alone_on_error() {
    let mut out = b"prefix:".to_vec();
    write_canonical(&json!({"b": 2, "a": 1}), &mut out).unwrap();
    assert_eq!(out, br#"prefix:{"a":1,"b":2}"#);

    let mut out = b"prefix:".to_vec();
    let error = write_canonical(
        &json!({"a": "long enough to be written", "b": u64::MAX}),
        &mut out,
    );
    assert!(matches!(
        error,
        Err(CanonicalizeError::IntegerOutOfRange { .. })
    ));
    assert_eq!(out, b"prefix:");
}

/// Regression guard for the iterative writer: a value built in code deeper than any parser
/// limit is written without recursion.
#[test]
fn very_deep_value_is_written_without_recursion() {
    let depth = 20_000;
    let mut value = json!(1);
    for level in 0..depth {
        value = if level % 2 == 0 {
            Value::Array(vec![value])
        } else {
            let mut map = Map::new();
            map.insert("k".to_owned(), value);
            Value::Object(map)
        };
    }
    let mut expected = String::new();
    for level in (0..depth).rev() {
        expected.push_str(if level % 2 == 0 { "[" } else { "{\"k\":" });
    }
    expected.push('1');
    for level in 0..depth {
        expected.push(if level % 2 == 0 { ']' } else { '}' });
    }
    assert_eq!(canonical_text(&value), expected);
    dismantle(value);
}

/// Drops a deep value level by level (serde_json's own drop recurses).
fn dismantle(mut value: Value) {
    loop {
        value = match value {
            Value::Array(mut items) => match items.pop() {
                Some(inner) => inner,
                None => return,
            },
            Value::Object(map) => match map.into_iter().next() {
                Some((_, inner)) => inner,
                None => return,
            },
            _ => return,
        };
    }
}

#[test]
fn a_number_built_from_a_float_keeps_its_double_value() {
    // 2^60 as a double is allowed (it is a double, not an integer literal); as u64 it is not.
    // ECMAScript writes the shortest round-trip digits padded with zeros, not the exact
    // integer (compare RFC 8785 Appendix B, the 2**68 row): String(2**60) in JavaScript.
    let as_double = Value::Number(Number::from_f64(1_152_921_504_606_846_976.0).unwrap());
    assert_eq!(canonical_text(&as_double), "1152921504606847000");
    assert!(canonicalize(&json!(1_152_921_504_606_846_976u64)).is_err());
}
