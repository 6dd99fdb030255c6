//! The per-tool definition digest (seed 000 §3, docs/design.md §2).
//!
//! The deepwiki digests were computed independently with the Python reference implementation
//! of RFC 8785 (`python3 -m venv /tmp/v && /tmp/v/bin/pip install rfc8785==0.1.4`):
//!
//! ```text
//! import hashlib, json, rfc8785, sys
//! for t in json.load(open(sys.argv[1])):
//!     for label in ["trace.mcp-tool-definition.v1", "agentavow.mcp-tool-definition.v1"]:
//!         r = {k: t[k] for k in ["name", "title", "description", "inputSchema",
//!              "outputSchema", "annotations"] if t.get(k) is not None}
//!         print(t["name"], label, "sha256:" + hashlib.sha256(
//!             rfc8785.dumps({"profile": label, "tool": r})).hexdigest())
//! ```
//!
//! run on `corpus/catalogs/deepwiki-tools-list.json` and (trace label only)
//! `corpus/catalogs/everything-tools-list.json`.

use jcs_digest::{
    CanonicalizeError, Digest, Profile, TOOL_DEFINITION_MEMBERS, ToolDigestError, canonicalize,
    parse_strict, tool_definition_digest, tool_definition_preimage,
};
use serde_json::{Value, json};

use crate::material::read_material;

const DEEPWIKI: [(&str, &str, &str); 6] = [
    (
        "ask_wiki_question",
        "trace.mcp-tool-definition.v1",
        "sha256:7b433df44e34a9356d6481fc370283840a598c47b879d0f663952e91d8b3e729",
    ),
    (
        "ask_wiki_question",
        "agentavow.mcp-tool-definition.v1",
        "sha256:171a53c9725874258b0b1125bc1d1c517e1b02f91a236096a37f53cc3a763dc9",
    ),
    (
        "read_wiki_contents",
        "trace.mcp-tool-definition.v1",
        "sha256:60d4ddd7838f28963920e8687ef644096fb38e8602cb25b8a53149fe87fc72d5",
    ),
    (
        "read_wiki_contents",
        "agentavow.mcp-tool-definition.v1",
        "sha256:3582a81089d120634d681ccf94e9ab7f15f471ddd48f4a82e06b05d10905d9c4",
    ),
    (
        "read_wiki_structure",
        "trace.mcp-tool-definition.v1",
        "sha256:9b1330cf1cf19a6b003fc093dc0d92bdea53a47de4cf4efd17b7a0add7945c50",
    ),
    (
        "read_wiki_structure",
        "agentavow.mcp-tool-definition.v1",
        "sha256:9bd57ff3e9534bbed54167ef1a74b2bc0e4b46128db28218767f0eed6e8f79a8",
    ),
];

/// The 13 tools of server-everything (titles, annotations, an `execution` member that is not
/// hashed), under the trace label.
const EVERYTHING: [(&str, &str); 13] = [
    (
        "echo",
        "sha256:812b74b8d391296c1a0114dc7cfb3d641fb31505fe871a2f8c91ddfe6fd451e7",
    ),
    (
        "get-annotated-message",
        "sha256:6f768e997aa183d5c99b504625e88bf681570a30a667a8272bfe87feeea662d9",
    ),
    (
        "get-env",
        "sha256:21c2788f626562ac7a609ae96528084289a823400ca01f2a0803fa8f872a1a87",
    ),
    (
        "get-resource-links",
        "sha256:3675b6cdab0f5f4d03e8e74be1b4f8619ee3a37a58c660897821b8fd425edc74",
    ),
    (
        "get-resource-reference",
        "sha256:92c2ce0bc618c3a50e8a5fc575b12364b413f954e9c33ae45f2b6326b5ccea34",
    ),
    (
        "get-structured-content",
        "sha256:b1095fe3b0f382d9143ea3fb335890146aed986c95047a740eec40a50803b23d",
    ),
    (
        "get-sum",
        "sha256:6eea6a38194b314f423df2f73488cfda25f51e70a450e50b1206762bb2758745",
    ),
    (
        "get-tiny-image",
        "sha256:3e0597ef3bb30e383edf6f73135322634fb176b5d56d8ce48b9085d51fb21f1d",
    ),
    (
        "gzip-file-as-resource",
        "sha256:e12675e4cddcf15f984bb6c74eb8d8d4ce024a71c7a84d6a42a8cbff662da223",
    ),
    (
        "toggle-simulated-logging",
        "sha256:c438ac6bb1116b2f78dcdcec4df07b364c9d2e4f18d870d3cbec845759b46af4",
    ),
    (
        "toggle-subscriber-updates",
        "sha256:ae6b410bdd324a414bb08224522d9761a4094158e454c5d5b2c08f638cb73eb3",
    ),
    (
        "trigger-long-running-operation",
        "sha256:ebf1e70999fb24a496482868c0269cf4444590fdf1c2ef77d731cafd25e9278f",
    ),
    (
        "simulate-research-query",
        "sha256:0ca998823bd08a2256618547b5072df1b89cebecde673ebb40340b5e1a2fd9de",
    ),
];

fn deepwiki_tools() -> Vec<Value> {
    match parse_strict(&read_material("catalogs/deepwiki-tools-list.json")).unwrap() {
        Value::Array(tools) => tools,
        other => panic!("the deepwiki catalog is not an array: {other}"),
    }
}

fn digest(tool: &Value) -> Digest {
    tool_definition_digest(tool, Profile::default()).unwrap()
}

#[test]
fn deepwiki_digests_match_the_python_reference() {
    let tools = deepwiki_tools();
    assert_eq!(tools.len(), 3);
    for (name, label, expected) in DEEPWIKI {
        let tool = tools.iter().find(|tool| tool["name"] == name).unwrap();
        let profile: Profile = label.parse().unwrap();
        let digest = tool_definition_digest(tool, profile).unwrap();
        assert_eq!(digest.to_string(), expected, "{name} under {label}");
    }
}

#[test]
fn everything_digests_match_the_python_reference() {
    let Value::Array(tools) =
        parse_strict(&read_material("catalogs/everything-tools-list.json")).unwrap()
    else {
        panic!("the everything catalog is not an array");
    };
    assert_eq!(tools.len(), EVERYTHING.len());
    for (name, expected) in EVERYTHING {
        let tool = tools.iter().find(|tool| tool["name"] == name).unwrap();
        assert_eq!(digest(tool).to_string(), expected, "{name}");
    }
}

/// The direct preimage writer agrees with the general canonicalizer applied to the wrapper.
#[test]
fn preimage_is_the_canonical_form_of_the_wrapper() {
    for tool in deepwiki_tools() {
        let restricted: serde_json::Map<String, Value> = tool
            .as_object()
            .unwrap()
            .iter()
            .filter(|(name, value)| {
                TOOL_DEFINITION_MEMBERS.contains(&name.as_str()) && !value.is_null()
            })
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect();
        for profile in Profile::ALL {
            let wrapper = json!({"profile": profile.label(), "tool": restricted});
            assert_eq!(
                tool_definition_preimage(&tool, profile).unwrap(),
                canonicalize(&wrapper).unwrap()
            );
        }
    }
}

/// The same on the generated catalog the bench uses (titles, annotations, `_meta`, numbers
/// with fractions and exponents, non-ASCII text), so the fast path is checked on that shape.
#[test]
fn preimage_is_the_canonical_form_of_the_wrapper_on_a_generated_catalog() {
    let document = crate::catalog_gen::generate_catalog(200);
    let Value::Array(tools) = parse_strict(document.as_bytes()).unwrap() else {
        panic!("the generated catalog is not an array");
    };
    assert_eq!(tools.len(), 200);
    for tool in &tools {
        let restricted: serde_json::Map<String, Value> = tool
            .as_object()
            .unwrap()
            .iter()
            .filter(|(name, value)| {
                TOOL_DEFINITION_MEMBERS.contains(&name.as_str()) && !value.is_null()
            })
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect();
        let wrapper = json!({"profile": "trace.mcp-tool-definition.v1", "tool": restricted});
        let preimage = tool_definition_preimage(tool, Profile::Trace).unwrap();
        assert_eq!(preimage, canonicalize(&wrapper).unwrap());
        assert_eq!(preimage, serde_jcs::to_vec(&wrapper).unwrap());
    }
}

#[test]
fn preimage_of_a_tool_with_every_member() {
    let tool = json!({
        "title": "T", "name": "n", "outputSchema": {}, "description": "",
        "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": false},
        "_meta": {"x": 1}, "icons": []
    });
    // Members in code-unit order; "_meta" and "icons" dropped; "" and {} and false kept.
    let expected = concat!(
        r#"{"profile":"agentavow.mcp-tool-definition.v1","tool":{"#,
        r#""annotations":{"readOnlyHint":false},"description":"","#,
        r#""inputSchema":{"type":"object"},"name":"n","outputSchema":{},"title":"T"}}"#
    );
    let preimage = tool_definition_preimage(&tool, Profile::AgentAvow).unwrap();
    assert_eq!(String::from_utf8(preimage).unwrap(), expected);
    assert_eq!(
        tool_definition_digest(&tool, Profile::AgentAvow).unwrap(),
        Digest::of(expected.as_bytes())
    );
    assert_eq!(
        String::from_utf8(tool_definition_preimage(&json!({}), Profile::Trace).unwrap()).unwrap(),
        r#"{"profile":"trace.mcp-tool-definition.v1","tool":{}}"#
    );
}

#[test]
fn meta_and_unknown_members_do_not_change_the_digest() {
    let tool = json!({"name": "echo", "description": "Echo."});
    let decorated = json!({
        "name": "echo", "description": "Echo.", "_meta": {"v": 2}, "icons": [], "x-extra": true
    });
    assert_eq!(digest(&tool), digest(&decorated));
}

#[test]
fn null_and_absent_are_the_same() {
    let absent = json!({"name": "echo"});
    let nulls = json!({
        "name": "echo", "title": null, "description": null, "inputSchema": null,
        "outputSchema": null, "annotations": null
    });
    assert_eq!(digest(&absent), digest(&nulls));
}

#[test]
fn empty_values_are_not_absent() {
    let absent = digest(&json!({"name": "echo"}));
    for (member, empty) in [
        ("description", json!("")),
        ("title", json!("")),
        ("outputSchema", json!({})),
        ("annotations", json!({"destructiveHint": false})),
    ] {
        let mut tool = json!({"name": "echo"});
        tool[member] = empty.clone();
        assert_ne!(digest(&tool), absent, "{member}: {empty}");
    }
    // Nulls nested inside a kept member are values, not omissions.
    assert_ne!(
        digest(&json!({"name": "echo", "annotations": {"title": null}})),
        digest(&json!({"name": "echo", "annotations": {}}))
    );
}

#[test]
fn the_two_labels_give_different_digests() {
    let tool = json!({"name": "echo"});
    let trace = tool_definition_digest(&tool, Profile::Trace).unwrap();
    let agentavow = tool_definition_digest(&tool, Profile::AgentAvow).unwrap();
    assert_ne!(trace, agentavow);
    // Each is the hash of its own hand-written preimage.
    assert_eq!(
        trace,
        Digest::of(br#"{"profile":"trace.mcp-tool-definition.v1","tool":{"name":"echo"}}"#)
    );
    assert_eq!(
        agentavow,
        Digest::of(br#"{"profile":"agentavow.mcp-tool-definition.v1","tool":{"name":"echo"}}"#)
    );
}

#[test]
fn member_order_and_whitespace_of_the_input_do_not_matter() {
    let a = parse_strict(br#"{"name":"echo","inputSchema":{"b":1,"a":2}}"#).unwrap();
    let b =
        parse_strict(b"{ \"inputSchema\" : { \"a\" : 2 , \"b\" : 1 } ,\n \"name\" : \"echo\" }")
            .unwrap();
    assert_eq!(digest(&a), digest(&b));
}

#[test]
fn not_an_object_is_refused() {
    for (tool, found) in [
        (json!([]), "array"),
        (json!("echo"), "string"),
        (json!(1), "number"),
        (json!(true), "boolean"),
        (Value::Null, "null"),
    ] {
        let error = tool_definition_digest(&tool, Profile::Trace).unwrap_err();
        assert_eq!(error, ToolDigestError::NotAnObject { found });
        assert_eq!(
            error.to_string(),
            format!(
                "a tool definition must be a JSON object, found {found}; pass one element of \
                 the `tools` array of a tools/list result"
            )
        );
        assert_eq!(
            tool_definition_preimage(&tool, Profile::Trace).unwrap_err(),
            error
        );
    }
}

#[test]
fn an_integer_out_of_range_in_a_kept_member_is_refused_with_a_pointer_into_the_tool() {
    let tool = json!({"name": "n", "inputSchema": {"properties": {"x": {"maximum": u64::MAX}}}});
    let error = tool_definition_digest(&tool, Profile::Trace).unwrap_err();
    assert_eq!(
        error,
        ToolDigestError::Canonicalize(CanonicalizeError::IntegerOutOfRange {
            pointer: "/inputSchema/properties/x/maximum".to_owned(),
            value: "18446744073709551615".to_owned(),
        })
    );
    assert_eq!(
        error.to_string(),
        "the tool definition has no digest: integer 18446744073709551615 at JSON Pointer \
         \"/inputSchema/properties/x/maximum\" is outside ±(2^53−1) and has no exact RFC 8785 \
         form; write it as a string, or as an f64 if rounding is intended"
    );
    // The same integer in an ignored member does not matter.
    let ignored = json!({"name": "n", "_meta": {"big": u64::MAX}});
    assert_eq!(digest(&ignored), digest(&json!({"name": "n"})));
}

#[test]
fn profiles_by_label() {
    assert_eq!(Profile::default(), Profile::Trace);
    assert_eq!(Profile::Trace.label(), "trace.mcp-tool-definition.v1");
    assert_eq!(
        Profile::AgentAvow.label(),
        "agentavow.mcp-tool-definition.v1"
    );
    for profile in Profile::ALL {
        assert_eq!(profile.to_string(), profile.label());
        assert_eq!(profile.label().parse::<Profile>().unwrap(), profile);
    }
    for input in [
        "TRACE.mcp-tool-definition.v1",
        " trace.mcp-tool-definition.v1",
        "",
        "trace",
    ] {
        let error = input.parse::<Profile>().unwrap_err();
        assert_eq!(error.input(), input);
        assert_eq!(
            error.to_string(),
            format!(
                "unknown tool definition profile {input:?}; use \
                 \"trace.mcp-tool-definition.v1\" (the default) or \
                 \"agentavow.mcp-tool-definition.v1\""
            )
        );
    }
    assert_eq!(
        TOOL_DEFINITION_MEMBERS,
        [
            "name",
            "title",
            "description",
            "inputSchema",
            "outputSchema",
            "annotations"
        ]
    );
}
