//! Every refusal in the strict-JSON table (docs/design.md §2) and of the JSON grammar, with the
//! exact kind, offset, line, column and (once per kind at least) the exact Display text.
//! Offsets were counted by hand from the inputs written here.

use jcs_digest::{StrictJsonError, StrictJsonErrorKind, StrictReader};

/// The tree path's refusal of `input`, after `agreed` checked that the streaming path refuses
/// it with the same error.
#[track_caller]
fn refuse(input: &[u8]) -> StrictJsonError {
    match crate::stream::agreed(input) {
        Ok(canonical) => panic!(
            "accepted {:?} as {:?}",
            String::from_utf8_lossy(input),
            String::from_utf8_lossy(&canonical)
        ),
        Err(error) => error,
    }
}

/// Asserts kind, offset, line and column.
#[track_caller]
fn assert_refused(
    input: &[u8],
    kind: StrictJsonErrorKind,
    offset: usize,
    line: usize,
    column: usize,
) -> StrictJsonError {
    let error = refuse(input);
    assert_eq!(error.kind(), &kind, "{:?}", String::from_utf8_lossy(input));
    assert_eq!(
        (error.offset(), error.line(), error.column()),
        (offset, line, column),
        "{:?}",
        String::from_utf8_lossy(input)
    );
    error
}

fn duplicate(pointer: &str, name: &str) -> StrictJsonErrorKind {
    StrictJsonErrorKind::DuplicateMember {
        pointer: pointer.to_owned(),
        name: name.to_owned(),
    }
}

fn syntax(message: &str) -> StrictJsonErrorKind {
    StrictJsonErrorKind::Syntax {
        message: message.to_owned(),
    }
}

#[test]
fn duplicate_member_at_the_root() {
    let error = assert_refused(br#"{"a":1,"a":2}"#, duplicate("", "a"), 7, 1, 8);
    assert_eq!(
        error.to_string(),
        "duplicate member name \"a\" in the object at JSON Pointer \"\" at line 1 column 8 \
         (byte 7): a member name may appear once per object; remove or rename one of them"
    );
}

#[test]
fn duplicate_member_deep_names_the_object_with_an_escaped_pointer() {
    // Line 3 starts at byte 22; the second "k" opens at byte 25 (column 4).
    let input = b"{\"m/n~\": [\n  {\"k\": 1,\n   \"k\": 2}\n]}";
    let error = assert_refused(input, duplicate("/m~1n~0/0", "k"), 25, 3, 4);
    assert_eq!(
        error.to_string(),
        "duplicate member name \"k\" in the object at JSON Pointer \"/m~1n~0/0\" at line 3 \
         column 4 (byte 25): a member name may appear once per object; remove or rename one \
         of them"
    );
}

#[test]
fn duplicate_member_is_detected_after_unescaping() {
    // "\u0061" is "a": the two names are the same string.
    assert_refused(br#"{"\u0061": 1, "a": 2}"#, duplicate("", "a"), 14, 1, 15);
    assert_refused(br#"{"": 1, "": 2}"#, duplicate("", ""), 8, 1, 9);
}

/// A member name or string that starts as printable ASCII without escapes (which the reader
/// takes from the input as it stands) and then holds something else: the error is where that
/// is, and a name decoded from escapes is the same name as one written plainly.
#[test]
fn an_error_after_a_plain_start_is_where_it_is() {
    assert_refused(
        b"[\"plain \xff\"]",
        StrictJsonErrorKind::InvalidUtf8,
        8,
        1,
        9,
    );
    assert_refused(
        b"{\"name\xff\": 1}",
        StrictJsonErrorKind::InvalidUtf8,
        6,
        1,
        7,
    );
    assert_refused(
        b"{\"ab\x01\": 1}",
        syntax("raw control character U+0001 in a string; write it as \\u0001"),
        4,
        1,
        5,
    );
    assert_refused(
        b"[\"ok\", \"abc\x1f\"]",
        syntax("raw control character U+001F in a string; write it as \\u001f"),
        11,
        1,
        12,
    );
    assert_refused(br#"{"b": 1, "\u0062": 2}"#, duplicate("", "b"), 9, 1, 10);
    assert_refused(
        br#"{"a": {"name": 1, "n\u0061me": 2}}"#,
        duplicate("/a", "name"),
        18,
        1,
        19,
    );
}

#[test]
fn integer_literal_outside_the_safe_range() {
    let error = assert_refused(
        b"9007199254740992",
        StrictJsonErrorKind::IntegerOutOfRange {
            pointer: String::new(),
            literal: "9007199254740992".to_owned(),
        },
        0,
        1,
        1,
    );
    assert_eq!(
        error.to_string(),
        "integer 9007199254740992 at JSON Pointer \"\" is outside ±(2^53−1) at line 1 column 1 \
         (byte 0): integers must lie within -9007199254740991..=9007199254740991 to have one \
         canonical form; write larger values as strings"
    );
    assert_refused(
        br#"{"n": [1, -9007199254740992]}"#,
        StrictJsonErrorKind::IntegerOutOfRange {
            pointer: "/n/1".to_owned(),
            literal: "-9007199254740992".to_owned(),
        },
        10,
        1,
        11,
    );
    // Far more digits than any u64 holds.
    assert_refused(
        b"[123456789012345678901234567890]",
        StrictJsonErrorKind::IntegerOutOfRange {
            pointer: "/0".to_owned(),
            literal: "123456789012345678901234567890".to_owned(),
        },
        1,
        1,
        2,
    );
}

#[test]
fn number_overflowing_a_double() {
    let error = assert_refused(
        b"1e400",
        StrictJsonErrorKind::NumberOverflow {
            pointer: String::new(),
            literal: "1e400".to_owned(),
        },
        0,
        1,
        1,
    );
    assert_eq!(
        error.to_string(),
        "number 1e400 at JSON Pointer \"\" overflows an IEEE 754 double at line 1 column 1 \
         (byte 0): numbers must lie within ±1.7976931348623157e+308; write larger values as \
         strings"
    );
    assert_refused(
        br#"{"a": -1.8e308}"#,
        StrictJsonErrorKind::NumberOverflow {
            pointer: "/a".to_owned(),
            literal: "-1.8e308".to_owned(),
        },
        6,
        1,
        7,
    );
    // Just above the halfway point between f64::MAX and 2^1024: rounds to infinity.
    assert_refused(
        b"1.7976931348623159e308",
        StrictJsonErrorKind::NumberOverflow {
            pointer: String::new(),
            literal: "1.7976931348623159e308".to_owned(),
        },
        0,
        1,
        1,
    );
}

#[test]
fn invalid_utf8() {
    let error = assert_refused(b"\"\xff\"", StrictJsonErrorKind::InvalidUtf8, 1, 1, 2);
    assert_eq!(
        error.to_string(),
        "invalid UTF-8 at line 1 column 2 (byte 1): JSON text must be UTF-8; re-encode the \
         input as UTF-8"
    );
    // A sequence cut short by the closing quote, reported at its first byte.
    assert_refused(
        b"[\"ok\", \"a\xe2\x82\"]",
        StrictJsonErrorKind::InvalidUtf8,
        9,
        1,
        10,
    );
    // A UTF-8-encoded surrogate (CESU-8) and an overlong encoding of '/'.
    assert_refused(
        b"\"\xed\xa0\x80\"",
        StrictJsonErrorKind::InvalidUtf8,
        1,
        1,
        2,
    );
    assert_refused(b"\"\xc0\xaf\"", StrictJsonErrorKind::InvalidUtf8, 1, 1, 2);
    // In a member name, outside any string, and after the value.
    assert_refused(b"{\"\xfe\": 1}", StrictJsonErrorKind::InvalidUtf8, 2, 1, 3);
    assert_refused(b"\xff", StrictJsonErrorKind::InvalidUtf8, 0, 1, 1);
    assert_refused(b"[1]\n\x80", StrictJsonErrorKind::InvalidUtf8, 4, 2, 1);
}

#[test]
fn lone_surrogate_escapes() {
    let lone = |pointer: &str| StrictJsonErrorKind::LoneSurrogate {
        pointer: pointer.to_owned(),
    };
    let error = assert_refused(br#""\ud800""#, lone(""), 1, 1, 2);
    assert_eq!(
        error.to_string(),
        "lone UTF-16 surrogate escape in a string at JSON Pointer \"\" at line 1 column 2 \
         (byte 1): escape a character outside the Basic Multilingual Plane as a high and low \
         surrogate pair, or write it unescaped"
    );
    // A low surrogate on its own.
    assert_refused(br#"["\udc00"]"#, lone("/0"), 2, 1, 3);
    // A high surrogate followed by something other than a low surrogate escape.
    assert_refused(br#"{"a": "x\ud800\u0041"}"#, lone("/a"), 8, 1, 9);
    assert_refused(br#""\ud800\ud800""#, lone(""), 1, 1, 2);
    assert_refused(b"\"\\ud800a\"", lone(""), 1, 1, 2);
    assert_refused(b"\"\\ud800", lone(""), 1, 1, 2);
    // In a member name the pointer is that of the object holding the name.
    assert_refused(br#"{"k": {"\uDBFF": 1}}"#, lone("/k"), 8, 1, 9);
}

#[test]
fn nesting_deeper_than_the_default_limit() {
    let input = format!("{}{}", "[".repeat(129), "]".repeat(129));
    let error = assert_refused(
        input.as_bytes(),
        StrictJsonErrorKind::TooDeep { limit: 128 },
        128,
        1,
        129,
    );
    assert_eq!(
        error.to_string(),
        "arrays and objects nested deeper than the limit of 128 at line 1 column 129 (byte \
         128): flatten the document: deeper nesting is refused so that no reader of it can be \
         driven to exhaust its stack"
    );
}

#[test]
fn nesting_deeper_than_a_configured_limit() {
    let mut reader = StrictReader::new();
    reader.max_depth(3);
    let error = reader.parse(br#"{"a":[{"b":[]}]}"#).unwrap_err();
    assert_eq!(error.kind(), &StrictJsonErrorKind::TooDeep { limit: 3 });
    assert_eq!(error.offset(), 11);
    assert!(reader.parse(br#"{"a":[{"b":1}]}"#).is_ok());

    let error = StrictReader::new().max_depth(0).parse(b"[]").unwrap_err();
    assert_eq!(error.kind(), &StrictJsonErrorKind::TooDeep { limit: 0 });
    assert_eq!(error.offset(), 0);
}

/// Regression guard for the iterative parser: a hostile document far deeper than any thread
/// stack is an error, never a stack overflow, whatever the limit.
#[test]
fn very_deep_input_is_an_error_not_a_stack_overflow() {
    let depth = 200_000;
    let input = "[".repeat(depth);
    let error = refuse(input.as_bytes());
    assert_eq!(error.kind(), &StrictJsonErrorKind::TooDeep { limit: 128 });
    assert_eq!(error.offset(), 128);

    let error = StrictReader::new()
        .max_depth(usize::MAX)
        .parse(input.as_bytes())
        .unwrap_err();
    assert_eq!(
        error.kind(),
        &syntax("expected a JSON value, found the end of the input")
    );
    assert_eq!(error.offset(), depth);

    let objects = "{\"a\":".repeat(depth);
    let error = refuse(objects.as_bytes());
    assert_eq!(error.kind(), &StrictJsonErrorKind::TooDeep { limit: 128 });
    assert_eq!(error.offset(), 128 * 5);
}

#[test]
fn syntax_error_display() {
    let error = refuse(b"[1 2]");
    assert_eq!(
        error.to_string(),
        "expected ',' or ']' after an array element, found '2' at line 1 column 4 (byte 3): \
         the input is not JSON (RFC 8259); fix the syntax"
    );
}

/// (input, offset, line, column, message) for everything else the grammar refuses.
#[test]
fn syntax_errors() {
    let value = "expected a JSON value";
    let cases: &[(&[u8], usize, usize, usize, String)] = &[
        (b"", 0, 1, 1, format!("{value}, found the end of the input")),
        (
            b"  \n ",
            4,
            2,
            2,
            format!("{value}, found the end of the input"),
        ),
        (
            b"1 2",
            2,
            1,
            3,
            "expected the end of the input after the JSON value, found '2'".into(),
        ),
        (
            b"{} x",
            3,
            1,
            4,
            "expected the end of the input after the JSON value, found 'x'".into(),
        ),
        (
            b"01",
            0,
            1,
            1,
            "a number must not have a leading zero".into(),
        ),
        (
            b"-01",
            0,
            1,
            1,
            "a number must not have a leading zero".into(),
        ),
        (
            b"1.",
            2,
            1,
            3,
            "expected a digit after the decimal point, found the end of the input".into(),
        ),
        (
            b"1.e5",
            2,
            1,
            3,
            "expected a digit after the decimal point, found 'e'".into(),
        ),
        (
            b"1e",
            2,
            1,
            3,
            "expected a digit in the exponent, found the end of the input".into(),
        ),
        (
            b"1e+",
            3,
            1,
            4,
            "expected a digit in the exponent, found the end of the input".into(),
        ),
        (
            b"-",
            1,
            1,
            2,
            "expected a digit after '-', found the end of the input".into(),
        ),
        (
            b"-a",
            1,
            1,
            2,
            "expected a digit after '-', found 'a'".into(),
        ),
        (
            b"-NaN",
            1,
            1,
            2,
            "expected a digit after '-', found 'N'".into(),
        ),
        (b".5", 0, 1, 1, format!("{value}, found '.'")),
        (b"+1", 0, 1, 1, format!("{value}, found '+'")),
        (
            b"\"a\nb\"",
            2,
            1,
            3,
            "raw control character U+000A in a string; write it as \\u000a".into(),
        ),
        (
            b"\"\x00\"",
            1,
            1,
            2,
            "raw control character U+0000 in a string; write it as \\u0000".into(),
        ),
        (
            b"\"\x1f\"",
            1,
            1,
            2,
            "raw control character U+001F in a string; write it as \\u001f".into(),
        ),
        (
            b"\"\\x\"",
            2,
            1,
            3,
            "expected one of \" \\ / b f n r t u after '\\' in a string, found 'x'".into(),
        ),
        (
            b"\"\\u12G4\"",
            1,
            1,
            2,
            "invalid \\u escape: expected four hexadecimal digits after \\u".into(),
        ),
        (
            b"\"\\u12\"",
            1,
            1,
            2,
            "invalid \\u escape: expected four hexadecimal digits after \\u".into(),
        ),
        (
            b"\"\\ud800\\u12\"",
            7,
            1,
            8,
            "invalid \\u escape: expected four hexadecimal digits after \\u".into(),
        ),
        (
            b"\"abc",
            0,
            1,
            1,
            "unterminated string: expected '\"' before the end of the input".into(),
        ),
        (b"[1,]", 3, 1, 4, format!("{value}, found ']'")),
        (b"[,1]", 1, 1, 2, format!("{value}, found ','")),
        (
            b"{\"a\":1,}",
            7,
            1,
            8,
            "expected a member name (a string in double quotes), found '}'".into(),
        ),
        (
            b"{\"a\" 1}",
            5,
            1,
            6,
            "expected ':' after the member name, found '1'".into(),
        ),
        (
            b"{'a':1}",
            1,
            1,
            2,
            "expected a member name (a string in double quotes), found '''".into(),
        ),
        (
            b"{1:2}",
            1,
            1,
            2,
            "expected a member name (a string in double quotes), found '1'".into(),
        ),
        (
            b"[1 2]",
            3,
            1,
            4,
            "expected ',' or ']' after an array element, found '2'".into(),
        ),
        (
            b"{\"a\":1 \"b\":2}",
            7,
            1,
            8,
            "expected ',' or '}' after an object member, found '\"'".into(),
        ),
        (
            b"[1",
            2,
            1,
            3,
            "expected ',' or ']' after an array element, found the end of the input".into(),
        ),
        (
            b"{\"a\":1",
            6,
            1,
            7,
            "expected ',' or '}' after an object member, found the end of the input".into(),
        ),
        (
            b"{",
            1,
            1,
            2,
            "expected a member name (a string in double quotes), found the end of the input".into(),
        ),
        (b"{\"a\":}", 5, 1, 6, format!("{value}, found '}}'")),
        (b"tru", 0, 1, 1, format!("{value}, found 't'")),
        (b"True", 0, 1, 1, format!("{value}, found 'T'")),
        (b"nul", 0, 1, 1, format!("{value}, found 'n'")),
        (b"// c\n1", 0, 1, 1, format!("{value}, found '/'")),
        (
            b"\xef\xbb\xbf{}",
            0,
            1,
            1,
            format!("{value}, found U+FEFF (a byte order mark)"),
        ),
        (b"\xc3\xa9", 0, 1, 1, format!("{value}, found U+00E9")),
        (b"\x0b1", 0, 1, 1, format!("{value}, found U+000B")),
        (b"[1,\n 2,\n x]", 9, 3, 2, format!("{value}, found 'x'")),
        (
            b"[1]]",
            3,
            1,
            4,
            "expected the end of the input after the JSON value, found ']'".into(),
        ),
    ];
    for (input, offset, line, column, message) in cases {
        assert_refused(input, syntax(message), *offset, *line, *column);
    }
}
