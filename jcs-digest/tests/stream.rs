//! The streaming path (`StreamReader`, `canonicalize_strict`, `canonical_digest`) against the
//! tree path it must equal: the JCS vectors and ES6 numbers read as text, tool digests, the
//! walk API, and (through `agreed`, which `strict_errors` and `strict_values` call for every
//! input they test) the same bytes, digest or error for every input.

use jcs_digest::{
    Digest, JsonType, Profile, StreamReader, StreamedTool, StrictJsonError, StrictJsonErrorKind,
    StrictReader, ToolName, canonical_digest, canonicalize, canonicalize_strict, parse_strict,
    tool_definition_digest,
};
use serde_json::Value;

use crate::material::{read_material, read_material_text};

/// The tree path's canonical bytes (or error) for `input`, after asserting that every streaming
/// entry point gives the same: `canonicalize_strict`, `canonical_digest`, `skip_value`, and
/// `tool_definition` for the per-tool digest.
#[track_caller]
pub fn agreed(input: &[u8]) -> Result<Vec<u8>, StrictJsonError> {
    agreed_with_depth(input, StrictReader::DEFAULT_MAX_DEPTH)
}

/// [`agreed`] with a depth limit of `limit` on both paths.
#[track_caller]
pub fn agreed_with_depth(input: &[u8], limit: usize) -> Result<Vec<u8>, StrictJsonError> {
    let shown = String::from_utf8_lossy(input);
    let tree = StrictReader::new().max_depth(limit).parse(input);
    let canonical = tree
        .as_ref()
        .map(|value| canonicalize(value).unwrap())
        .map_err(Clone::clone);

    let mut reader = StreamReader::with_max_depth(input, limit);
    let mut streamed = Vec::new();
    let streamed = reader
        .canonical_value(&mut streamed)
        .and_then(|()| reader.finish())
        .map(|()| streamed);
    assert_eq!(streamed, canonical, "canonical bytes of {shown:?}");
    if limit == StrictReader::DEFAULT_MAX_DEPTH {
        assert_eq!(canonicalize_strict(input), canonical, "{shown:?}");
        assert_eq!(
            canonical_digest(input),
            canonical.as_deref().map(Digest::of).map_err(Clone::clone),
            "digest of {shown:?}"
        );
    }

    let mut reader = StreamReader::with_max_depth(input, limit);
    let skipped = reader.skip_value().and_then(|_| reader.finish());
    assert_eq!(skipped.err(), canonical.clone().err(), "skipping {shown:?}");

    let mut reader = StreamReader::with_max_depth(input, limit);
    let value = reader
        .tree_value()
        .and_then(|value| reader.finish().map(|()| value));
    assert_eq!(value, tree, "tree value of {shown:?}");
    tree_elements_agree(input, limit);

    let mut reader = StreamReader::with_max_depth(input, limit);
    let tool = reader
        .tool_definition(Profile::Trace)
        .and_then(|tool| reader.finish().map(|()| tool));
    let expected = tree.map(|value| streamed_from_tree(&value));
    assert_eq!(tool, expected, "tool definition {shown:?}");
    canonical
}

/// `input` as the element of an array inside an object, `{"k": [input]}`, read with the walk
/// API, the array with `tree_elements` and every other value with `tree_value`: the tree
/// path's document or error (its pointer under `/k/0`, the depth limit counting the two
/// containers around it).
#[track_caller]
fn tree_elements_agree(input: &[u8], limit: usize) {
    let wrapped = [&b"{\"k\": ["[..], input, b"]}"].concat();
    let tree = StrictReader::new().max_depth(limit).parse(&wrapped);
    let mut reader = StreamReader::with_max_depth(&wrapped, limit);
    let walked = walk_with_trees(&mut reader).and_then(|value| reader.finish().map(|()| value));
    assert_eq!(walked, tree, "{:?}", String::from_utf8_lossy(&wrapped));
}

/// An object read member by member, arrays as `tree_elements`, anything else as `tree_value`.
fn walk_with_trees(reader: &mut StreamReader<'_>) -> Result<Value, StrictJsonError> {
    reader.enter_object()?;
    let mut members = serde_json::Map::new();
    while let Some(name) = reader.next_member()? {
        let name = name.to_owned();
        let value = if reader.peek() == Some(JsonType::Array) {
            Value::Array(reader.tree_elements()?)
        } else {
            reader.tree_value()?
        };
        members.insert(name, value);
    }
    Ok(Value::Object(members))
}

/// What `tool_definition` must give for a strictly read `value`, by the tree path.
pub fn streamed_from_tree(value: &Value) -> StreamedTool {
    StreamedTool::from_value(value, Profile::Trace).unwrap()
}

const CASES: [&str; 6] = [
    "arrays",
    "french",
    "structures",
    "unicode",
    "values",
    "weird",
];

#[test]
fn cyberphone_input_output_pairs_through_the_stream() {
    for case in CASES {
        let input = read_material(&format!("jcs/testdata/input/{case}.json"));
        let expected = read_material(&format!("jcs/testdata/output/{case}.json"));
        assert_eq!(canonicalize_strict(&input).unwrap(), expected, "{case}");
        assert_eq!(
            canonical_digest(&input).unwrap(),
            Digest::of(&expected),
            "{case}"
        );
        assert_eq!(agreed(&input).unwrap(), expected, "{case}");
        assert_eq!(canonicalize_strict(&expected).unwrap(), expected, "{case}");
    }
}

/// Appendix B of RFC 8785 as text, through the stream: the 19 accepted rows written back as
/// they are, the five large integer literals refused exactly as the tree path refuses them.
#[test]
fn appendix_b_rows_through_the_stream() {
    let mut reproduced = 0;
    let mut refused = 0;
    for line in read_material_text("jcs/rfc8785-appendix-b.tsv").lines() {
        let columns: Vec<&str> = line.split('\t').collect();
        if line.starts_with('#') || line.starts_with("ieee754_hex") || columns[2] != "ok" {
            continue;
        }
        let text = columns[1];
        match agreed(text.as_bytes()) {
            Ok(canonical) => {
                assert_eq!(String::from_utf8(canonical).unwrap(), text);
                reproduced += 1;
            }
            Err(error) => {
                assert_eq!(
                    error.kind(),
                    &StrictJsonErrorKind::IntegerOutOfRange {
                        pointer: String::new(),
                        literal: text.to_owned()
                    }
                );
                refused += 1;
            }
        }
    }
    assert_eq!((reproduced, refused), (19, 5));
}

/// The 10,000 ES6 numbers as JSON text (each double's shortest exponent form, `1.5e-7`, which
/// is always a float literal): one by one, and as one array whose canonical form is the
/// expected texts joined by commas, hashed straight into SHA-256.
#[test]
fn es6_numbers_through_the_stream() {
    let text = read_material_text("jcs/es6numbers/es6testfile-first10000.txt");
    let mut document = String::from("[");
    let mut expected_array = String::from("[");
    let mut failures = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let (hex, expected) = line.split_once(',').unwrap();
        let double = f64::from_bits(u64::from_str_radix(hex, 16).unwrap());
        let literal = format!("{double:e}");
        let canonical =
            String::from_utf8(canonicalize_strict(literal.as_bytes()).unwrap()).unwrap();
        if canonical != expected {
            failures.push(format!(
                "{hex} as {literal}: expected {expected}, wrote {canonical}"
            ));
        }
        if index > 0 {
            document.push_str(" ,\n");
            expected_array.push(',');
        }
        document.push_str(&literal);
        expected_array.push_str(expected);
    }
    document.push(']');
    expected_array.push(']');
    assert_eq!(failures, Vec::<String>::new());
    assert_eq!(text.lines().count(), 10_000);
    assert_eq!(
        canonicalize_strict(document.as_bytes()).unwrap(),
        expected_array.as_bytes()
    );
    assert_eq!(
        canonical_digest(document.as_bytes()).unwrap(),
        Digest::of(expected_array.as_bytes())
    );
}

/// Objects whose members need sorting at several depths, a name order that differs between
/// UTF-8 and UTF-16 (U+FF61 sorts after U+1F600 in UTF-16), escapes in names, and an object of
/// more members than the linear duplicate scan handles.
#[test]
fn member_order_and_large_objects_agree_with_the_tree() {
    let large: Vec<String> = (0..40).rev().map(|i| format!("\"k{i}\": {i}")).collect();
    let large = format!("{{{}}}", large.join(", "));
    for input in [
        r#"{"b": {"d": [ {"f": 1, "e": 2} ], "c": null}, "a": "x"}"#,
        "{\"\u{ff61}\": 1, \"\u{1f600}\": 2, \"\u{e000}\": 3, \"z\": 4}",
        r#"{"\u00e9": 1, "e": 2, "\ud83d\ude00": 3, "\"": 4, "\\": 5}"#,
        r#"[{"b": 1, "a": 2}, {"a": 1, "b": 2}, {}, [], {"": {"": []}}]"#,
        &large,
    ] {
        agreed(input.as_bytes()).unwrap();
    }
    let mut duplicated = large.clone();
    duplicated.insert_str(1, "\"k3\": 0, ");
    let error = agreed(duplicated.as_bytes()).unwrap_err();
    assert_eq!(
        error.kind(),
        &StrictJsonErrorKind::DuplicateMember {
            pointer: String::new(),
            name: "k3".to_owned()
        }
    );
}

/// Objects whose members arrive out of order, inside objects whose members arrive out of
/// order, come out in RFC 8785 order at every level: nested a hundred deep (each level's
/// members in reverse order, every third level in order); side by side with objects in order
/// and arrays between them; and thousands of them inside one open object.
#[test]
fn objects_out_of_order_at_every_depth_are_written_in_order() {
    // Level i: {"z":<level i+1>,"m":[i],"a":i}, every third level in order instead.
    let (mut input, mut expected) = ("0".to_owned(), "0".to_owned());
    for level in (0..100).rev() {
        if level % 3 == 0 {
            input = format!(r#"{{"a": {level}, "m": [{level}], "z": {input}}}"#);
        } else {
            input = format!(r#"{{"z": {input}, "m": [{level}], "a": {level}}}"#);
        }
        expected = format!(r#"{{"a":{level},"m":[{level}],"z":{expected}}}"#);
    }
    assert_eq!(agreed(input.as_bytes()).unwrap(), expected.as_bytes());

    let input = r#"[{"d": {"y": {"q": 1, "p": [{"k": 2, "j": 3}]}, "x": 4}, "c": 5}, {"b": 6, "a": 7}, {"e": 8}]"#;
    let expected = r#"[{"c":5,"d":{"x":4,"y":{"p":[{"j":3,"k":2}],"q":1}}},{"a":7,"b":6},{"e":8}]"#;
    assert_eq!(agreed(input.as_bytes()).unwrap(), expected.as_bytes());

    // 3,000 elements, each with three objects out of order, in one open object.
    let element = r#"{"t": {"s": 1, "r": "é"}, "b": [true, {"f": null, "e": -0}]}"#;
    let canonical = r#"{"b":[true,{"e":0,"f":null}],"t":{"r":"é","s":1}}"#;
    let input = format!(
        r#"{{"z": [{}], "a": {element}}}"#,
        vec![element; 3_000].join(",")
    );
    let expected = format!(
        r#"{{"a":{canonical},"z":[{}]}}"#,
        vec![canonical; 3_000].join(",")
    );
    assert_eq!(agreed(input.as_bytes()).unwrap(), expected.as_bytes());
}

/// A repeated name is found wherever it falls around the switch from members kept in order as
/// they come to a set of names (at 16 members): the second member, the 15th, 16th and 17th,
/// and the 40th, nested one level down, with the offset of the repeat and its pointer; the
/// earlier names in order (each new member placed last) and in reverse order (each placed
/// first), the repeat the least or the greatest of them.
#[test]
fn a_repeated_name_is_found_before_at_and_after_the_switch_to_a_set() {
    for (distinct, reversed) in [1, 14, 15, 16, 39]
        .into_iter()
        .flat_map(|distinct| [(distinct, false), (distinct, true)])
    {
        let mut names: Vec<String> = (0..distinct).map(|i| format!("\"n{i:02}\":{i}")).collect();
        if reversed {
            names.reverse();
        }
        for repeated in [0, distinct - 1] {
            let head = format!("{{\"outer\":{{{},", names.join(","));
            let input = format!("{head}\"n{repeated:02}\":true}}}}");
            let error = agreed(input.as_bytes()).unwrap_err();
            assert_eq!(
                error.kind(),
                &StrictJsonErrorKind::DuplicateMember {
                    pointer: "/outer".to_owned(),
                    name: format!("n{repeated:02}"),
                },
                "{input}"
            );
            assert_eq!(error.offset(), head.len(), "{input}");
        }
        // The same members without the repeat are accepted.
        agreed(format!("{{\"outer\":{{{}}}}}", names.join(",")).as_bytes()).unwrap();
    }
}

/// Names and strings taken from the input as they stand (printable ASCII without escapes)
/// and those decoded (an escape, a character outside ASCII) sort together, by RFC 8785 order,
/// and are written alike.
#[test]
fn plain_and_decoded_names_and_strings_side_by_side() {
    let input =
        r#"{"c": "x\u00e9", "\u0062": "plain", "é": 1, "a": "café \ud83d\ude80", "ab": "t\"q"}"#;
    assert_eq!(
        String::from_utf8(agreed(input.as_bytes()).unwrap()).unwrap(),
        "{\"a\":\"caf\u{e9} \u{1f680}\",\"ab\":\"t\\\"q\",\"b\":\"plain\",\"c\":\"x\u{e9}\",\"\u{e9}\":1}"
    );
}

/// A document of many top-level array elements is handed to the hasher in pieces; the digest
/// is still the one of the whole canonical text.
#[test]
fn long_arrays_are_hashed_in_pieces() {
    let element = r#"{"b": "é\u00e9", "a": [1.50, -0, 1e2]}"#;
    let document = format!("[{}]", vec![element; 5_000].join(",\n"));
    let canonical = agreed(document.as_bytes()).unwrap();
    assert!(canonical.len() > 1 << 17);
    assert_eq!(
        canonical_digest(document.as_bytes()).unwrap(),
        Digest::of(&canonical)
    );
}

/// The per-tool digest from the bytes equals the tree path's on the shared catalogs' tools,
/// `_meta` and unknown members skipped, null members omitted.
#[test]
fn tool_definitions_from_the_bytes() {
    let input = br#"{"_meta": {"x": [1, {"y": 2}]}, "name": "echo", "title": null,
        "description": "", "annotations": {}, "extra": 1e300, "inputSchema": {"type": "object",
        "properties": {"b": {"type": "string"}, "a": {"type": "number", "maximum": 1.50}}}}"#;
    let mut reader = StreamReader::new(input);
    let tool = reader.tool_definition(Profile::AgentAvow).unwrap();
    reader.finish().unwrap();
    let value = parse_strict(input).unwrap();
    assert_eq!(
        tool,
        StreamedTool::Definition {
            name: ToolName::Text("echo".to_owned()),
            digest: tool_definition_digest(&value, Profile::AgentAvow).unwrap(),
        }
    );
    agreed(input).unwrap();
    for input in [
        &br#"{"name": 5}"#[..],
        br#"{"name": null, "description": "d"}"#,
        br#"{"name": ["a"]}"#,
        br#"{}"#,
        br#"[{"name": "a"}]"#,
        b"\"tool\"",
        b"null",
        b"true",
        b"-1.5",
    ] {
        agreed(input).unwrap();
    }
}

/// The walk API: peek, enter, next, string values, and its refusals of misuse.
#[test]
fn walking_a_document() {
    let input = br#" {"a": [true, "x\n", {"k": 1}], "b": "\u0032.0"} "#;
    let mut reader = StreamReader::new(input);
    assert_eq!(reader.peek(), Some(JsonType::Object));
    reader.enter_object().unwrap();
    assert_eq!(reader.next_member().unwrap(), Some("a"));
    reader.enter_array().unwrap();
    assert!(reader.next_element().unwrap());
    assert_eq!(reader.skip_value().unwrap(), JsonType::Boolean);
    assert!(reader.next_element().unwrap());
    assert_eq!(reader.string_value().unwrap().as_deref(), Some("x\n"));
    assert!(reader.next_element().unwrap());
    assert_eq!(reader.string_value().unwrap(), None);
    assert!(!reader.next_element().unwrap());
    assert_eq!(reader.next_member().unwrap(), Some("b"));
    assert_eq!(reader.string_value().unwrap().as_deref(), Some("2.0"));
    assert_eq!(reader.next_member().unwrap(), None);
    assert_eq!(reader.offset(), input.len() - 1);
    reader.finish().unwrap();

    // Entering what is not there, finishing early, and walking past the end are syntax errors.
    let mut reader = StreamReader::new(b"[1]");
    let error = reader.enter_object().unwrap_err();
    assert_eq!(
        (error.kind().to_string(), error.offset()),
        ("expected '{' (an object), found '['".to_owned(), 0)
    );
    let mut reader = StreamReader::new(b"[1]");
    reader.enter_array().unwrap();
    let error = reader.finish().unwrap_err();
    assert_eq!(
        (error.kind().to_string(), error.offset()),
        (
            "expected the end of the input after the JSON value, found '1'".to_owned(),
            1
        )
    );
    let mut reader = StreamReader::new(b"1");
    reader.skip_value().unwrap();
    let error = reader.next_element().unwrap_err();
    assert_eq!(
        error.kind().to_string(),
        "expected the end of the input after the JSON value, found the end of the input"
    );
    let error = reader.next_member().unwrap_err();
    assert_eq!(error.offset(), 1);
    assert_eq!(reader.peek(), None);
}

/// The depth limit holds for the stream at any limit, and a document far deeper than the
/// default is refused without recursion.
#[test]
fn depth_limits_agree() {
    for limit in [0, 1, 2, 5] {
        for depth in 0..=limit + 1 {
            let input = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            agreed_with_depth(input.as_bytes(), limit).ok();
            let objects = format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth));
            agreed_with_depth(objects.as_bytes(), limit).ok();
        }
    }
    let deep = "[".repeat(1_000_000);
    let error = agreed(deep.as_bytes()).unwrap_err();
    assert_eq!(
        (error.kind(), error.offset()),
        (&StrictJsonErrorKind::TooDeep { limit: 128 }, 128)
    );
}

/// A catalog of more than a megabyte, read in two halves on two threads by `tool_definitions`:
/// the same tools as element by element and as the tree path, and the same error when one is
/// refused near the end.
#[test]
fn large_arrays_read_in_two_halves_agree() {
    let catalog = crate::catalog_gen::generate_catalog(1_000);
    assert!(catalog.len() > 1 << 20);
    let mut reader = StreamReader::new(catalog.as_bytes());
    let tools = reader.tool_definitions(Profile::Trace).unwrap();
    reader.finish().unwrap();
    let Value::Array(values) = parse_strict(catalog.as_bytes()).unwrap() else {
        panic!("not an array");
    };
    let expected: Vec<StreamedTool> = values.iter().map(streamed_from_tree).collect();
    assert_eq!(tools.len(), 1_000);
    assert_eq!(tools, expected);
    let mut reader = StreamReader::new(catalog.as_bytes());
    reader.enter_array().unwrap();
    let mut one_by_one = Vec::new();
    while reader.next_element().unwrap() {
        one_by_one.push(reader.tool_definition(Profile::Trace).unwrap());
    }
    assert_eq!(one_by_one, expected);

    // Non-objects among them, and a duplicate member in the last tool.
    let mixed = format!("[1, {}, \"x\"]", &catalog[1..catalog.len() - 1]);
    let mut reader = StreamReader::new(mixed.as_bytes());
    let tools = reader.tool_definitions(Profile::Trace).unwrap();
    assert_eq!(tools.len(), 1_002);
    assert_eq!(
        tools[0],
        StreamedTool::NotAnObject {
            found: JsonType::Number
        }
    );
    assert_eq!(tools[1..1_001], expected[..]);
    let at = catalog.rfind("{\"name\"").unwrap();
    let broken = format!("{}{{\"name\":1,{}", &catalog[..at], &catalog[at + 1..]);
    let mut reader = StreamReader::new(broken.as_bytes());
    let error = reader.tool_definitions(Profile::Trace).unwrap_err();
    assert_eq!(
        Err(error.clone()),
        parse_strict(broken.as_bytes()).map(|_| ())
    );
    assert_eq!(
        error.kind(),
        &StrictJsonErrorKind::DuplicateMember {
            pointer: "/999".to_owned(),
            name: "name".to_owned()
        }
    );
}

/// `tool_definitions` on `document` (whose tools are the array at `pointer`) against the tree
/// path: the same tools, or the same error; and `tree_elements` on the same array against the
/// tree reader's elements.
#[track_caller]
fn split_agrees(document: &str, pointer: &str) -> Result<Vec<StreamedTool>, StrictJsonError> {
    assert!(
        document.len() > 1 << 20,
        "{} bytes: not split",
        document.len()
    );
    let tree = parse_strict(document.as_bytes()).map(|value| {
        let tools = value.pointer(pointer).unwrap().as_array().unwrap();
        tools.iter().map(streamed_from_tree).collect::<Vec<_>>()
    });
    let mut reader = StreamReader::new(document.as_bytes());
    let streamed = if pointer.is_empty() {
        reader.tool_definitions(Profile::Trace)
    } else {
        reader.enter_object().unwrap();
        assert_eq!(reader.next_member().unwrap(), Some("tools"));
        reader.tool_definitions(Profile::Trace)
    }
    .and_then(|tools| {
        if !pointer.is_empty() {
            while reader.next_member()?.is_some() {
                reader.skip_value()?;
            }
        }
        reader.finish().map(|()| tools)
    });
    assert_eq!(streamed, tree);

    let elements = parse_strict(document.as_bytes()).map(|value| value.pointer(pointer).cloned());
    let mut reader = StreamReader::new(document.as_bytes());
    let read = if pointer.is_empty() {
        reader
            .tree_elements()
            .and_then(|elements| reader.finish().map(|()| Some(Value::Array(elements))))
    } else {
        walk_with_trees(&mut reader)
            .and_then(|value| reader.finish().map(|()| value.pointer(pointer).cloned()))
    };
    assert_eq!(read, elements);
    streamed
}

/// Where the second half of a large array is guessed to start does not change the result: a
/// guess inside a string or inside a nested array of objects is found wrong and the first
/// thread reads on alone.
#[test]
fn a_wrong_guess_at_the_middle_reads_on_alone() {
    let small = r#"{"name":"t","inputSchema":{"type":"object"}}"#;
    let tools = |n: usize| vec![small; n].join(",");
    // The middle falls in a description full of element-like text.
    let fake = r#"},{\"name\":\"fake\"}, {"#.repeat(60_000);
    let in_string = format!(
        r#"[{},{{"name":"long","description":"{fake}"}},{}]"#,
        tools(100),
        tools(100)
    );
    assert_eq!(split_agrees(&in_string, "").unwrap().len(), 201);
    // The middle falls in an array of objects with names inside one tool.
    let nested = vec![r#"{"name":"n","const":1}"#; 60_000].join(", ");
    let in_array = format!(
        r#"{{"tools": [{}, {{"name":"big","inputSchema":{{"examples":[{nested}]}}}}, {}]}}"#,
        tools(100),
        tools(100)
    );
    assert_eq!(split_agrees(&in_array, "/tools").unwrap().len(), 201);
}

/// A large array read in two halves refuses what the tree path refuses, with its error: in the
/// first half, in the second (whose thread cannot name the index, so the first reads on), at
/// the depth limit counted from the document's root, and after the array.
#[test]
fn a_split_array_gives_the_tree_errors() {
    let catalog = crate::catalog_gen::generate_catalog(1_000);
    let body = &catalog[1..catalog.len() - 1];
    let wrapped = |body: &str| format!(r#"{{"tools": [{body}], "nextCursor": null}}"#);
    assert_eq!(split_agrees(&wrapped(body), "/tools").unwrap().len(), 1_000);

    // The first tool and the last one have a duplicate member.
    for at in [
        body.find("{\"name\"").unwrap(),
        body.rfind("{\"name\"").unwrap(),
    ] {
        let broken = format!("{}{{\"name\":1,{}", &body[..at], &body[at + 1..]);
        let error = split_agrees(&wrapped(&broken), "/tools").unwrap_err();
        let index = if at == 0 { 0 } else { 999 };
        assert_eq!(
            error.kind(),
            &StrictJsonErrorKind::DuplicateMember {
                pointer: format!("/tools/{index}"),
                name: "name".to_owned()
            }
        );
    }

    // Nesting in the last tool: 128 levels from the root pass, 129 do not.
    let at = body.rfind("{\"name\"").unwrap();
    for (levels, refused) in [(125, false), (126, true)] {
        let deep = format!("{}1{}", "[".repeat(levels), "]".repeat(levels));
        let tool = format!("{{\"name\":\"deep\",\"inputSchema\":{deep}}}");
        let document = wrapped(&format!("{},{tool}", &body[..at - 1]));
        let outcome = split_agrees(&document, "/tools");
        assert_eq!(outcome.is_err(), refused, "{levels} levels");
        if let Err(error) = outcome {
            assert_eq!(error.kind(), &StrictJsonErrorKind::TooDeep { limit: 128 });
        }
    }

    // After the array: a second `tools` member.
    let twice = format!(r#"{{"tools": [{body}], "tools": []}}"#);
    let mut reader = StreamReader::new(twice.as_bytes());
    reader.enter_object().unwrap();
    reader.next_member().unwrap();
    reader.tool_definitions(Profile::Trace).unwrap();
    let error = reader.next_member().unwrap_err();
    assert_eq!(Err(error), parse_strict(twice.as_bytes()).map(|_| ()));
}

/// Whitespace runs of every length up to past two of the eight-space steps the reader skips
/// indentation by, of spaces alone and mixed, around every token, at the end of the input and
/// before a byte that is refused: the tree reader's bytes or error (its offset) every time.
#[test]
fn runs_of_whitespace_of_any_length_read_as_the_tree_reads_them() {
    for length in 0..=19 {
        for run in [
            " ".repeat(length),
            format!("\n{}", " ".repeat(length)),
            format!("{}\t{}", " ".repeat(length), " ".repeat(length % 9)),
            format!("{}\r\n ", " ".repeat(length)),
        ] {
            let w = run.as_str();
            let valid = format!(
                "{w}{{{w}\"a\"{w}:{w}[{w}1{w},{w}\"x\"{w}]{w},{w}\"b\"{w}:{w}{{{w}}}{w}}}{w}"
            );
            assert!(agreed(valid.as_bytes()).is_ok(), "{valid:?}");
            for refused in ["x", "\u{a0}", "\u{b}"] {
                let after_run = format!("{{\"a\":{w}{refused}}}");
                assert!(agreed(after_run.as_bytes()).is_err(), "{after_run:?}");
                let trailing = format!("[1]{w}{refused}");
                assert!(agreed(trailing.as_bytes()).is_err(), "{trailing:?}");
            }
        }
    }
}
