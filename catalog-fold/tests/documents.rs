//! The three document shapes of docs/design.md §2 and every `DocumentError`.

use catalog_fold::DocumentError;
use serde_json::json;

use crate::support::pinned_catalog;

fn deepwiki_text() -> String {
    String::from_utf8(pinned_catalog("deepwiki-tools-list.json")).unwrap()
}

#[test]
fn bare_array() {
    let tools = crate::support::read_both(br#"[{"name": "a"}, {"name": "b"}]"#).unwrap();
    assert_eq!(tools, vec![json!({"name": "a"}), json!({"name": "b"})]);
}

#[test]
fn tools_list_result_ignores_other_members() {
    let bare = crate::support::read_both(deepwiki_text().as_bytes()).unwrap();
    assert_eq!(bare.len(), 3);
    let document = format!(
        r#"{{"tools": {}, "nextCursor": "page-2", "_meta": {{}}}}"#,
        deepwiki_text()
    );
    assert_eq!(
        crate::support::read_both(document.as_bytes()).unwrap(),
        bare
    );
}

#[test]
fn json_rpc_response() {
    let bare = crate::support::read_both(deepwiki_text().as_bytes()).unwrap();
    let document = format!(
        r#"{{"jsonrpc": "2.0", "id": 7, "result": {{"tools": {}, "nextCursor": null}}}}"#,
        deepwiki_text()
    );
    assert_eq!(
        crate::support::read_both(document.as_bytes()).unwrap(),
        bare
    );
}

#[test]
fn empty_array_is_an_empty_catalog() {
    assert_eq!(
        crate::support::read_both(b"[]").unwrap(),
        Vec::<serde_json::Value>::new()
    );
}

#[test]
fn strict_json_errors_are_passed_through() {
    let bytes = br#"[{"name": "a", "name": "b"}]"#;
    let error = crate::support::read_both(bytes).unwrap_err();
    let strict = jcs_digest::parse_strict(bytes).unwrap_err();
    assert_eq!(error, DocumentError::Json(strict.clone()));
    assert_eq!(
        error.to_string(),
        format!("the tools/list document is not strict JSON: {strict}")
    );
    assert!(matches!(
        crate::support::read_both(b"[9007199254740992]"),
        Err(DocumentError::Json(_))
    ));
}

const EXPECTED: &str = "expected a bare array of tools, a tools/list result {\"tools\": [...]}, \
     or a JSON-RPC response {\"jsonrpc\": \"2.0\", \"result\": {\"tools\": [...]}}";

#[test]
fn unexpected_shapes() {
    let cases: [(&[u8], &str); 8] = [
        (b"\"tools\"", "a string"),
        (b"null", "null"),
        (b"12", "a number"),
        (b"{}", "an empty object"),
        (
            br#"{"id": 1, "tool": []}"#,
            r#"an object with members "id", "tool""#,
        ),
        (
            br#"{"a":0,"b":0,"c":0,"d":0,"e":0,"f":0,"g":0}"#,
            r#"an object with members "a", "b", "c", "d", "e" and 2 more"#,
        ),
        (
            br#"{"jsonrpc": "2.0", "id": 1}"#,
            r#"a JSON-RPC response with neither "result" nor "error""#,
        ),
        (
            br#"{"jsonrpc": "2.0", "result": {"resources": []}}"#,
            r#"a JSON-RPC response whose result is an object with members "resources""#,
        ),
    ];
    for (bytes, found) in cases {
        let error = crate::support::read_both(bytes).unwrap_err();
        assert_eq!(
            error,
            DocumentError::UnexpectedShape {
                found: found.into()
            }
        );
        assert_eq!(
            error.to_string(),
            format!("the tools/list document is {found}; {EXPECTED}")
        );
    }
    assert_eq!(
        crate::support::read_both(br#"{"jsonrpc": "2.0", "result": [1]}"#),
        Err(DocumentError::UnexpectedShape {
            found: "a JSON-RPC response whose result is an array".into()
        })
    );
}

#[test]
fn long_member_names_are_shortened_in_the_message() {
    let document = format!(r#"{{"{}": 1}}"#, "x".repeat(1000));
    assert_eq!(
        crate::support::read_both(document.as_bytes()),
        Err(DocumentError::UnexpectedShape {
            found: format!("an object with members \"{}\"…", "x".repeat(40))
        })
    );
}

#[test]
fn tools_not_an_array() {
    let error = crate::support::read_both(br#"{"tools": {"name": "a"}}"#).unwrap_err();
    assert_eq!(
        error,
        DocumentError::ToolsNotAnArray {
            pointer: "/tools",
            found: "an object with members \"name\"".into()
        }
    );
    assert_eq!(
        error.to_string(),
        "the \"tools\" member at JSON Pointer \"/tools\" is an object with members \"name\"; it must be an array of tool definitions"
    );
    assert_eq!(
        crate::support::read_both(br#"{"jsonrpc": "2.0", "result": {"tools": null}}"#),
        Err(DocumentError::ToolsNotAnArray {
            pointer: "/result/tools",
            found: "null".into()
        })
    );
}

#[test]
fn json_rpc_version_must_be_2_0() {
    let error =
        crate::support::read_both(br#"{"jsonrpc": "1.0", "result": {"tools": []}}"#).unwrap_err();
    assert_eq!(
        error,
        DocumentError::JsonRpcVersion {
            found: "\"1.0\"".into()
        }
    );
    assert_eq!(
        error.to_string(),
        "the JSON-RPC response has \"jsonrpc\": \"1.0\", expected \"2.0\"; only JSON-RPC 2.0 responses are read"
    );
    assert_eq!(
        crate::support::read_both(br#"{"jsonrpc": 2, "result": {"tools": []}}"#),
        Err(DocumentError::JsonRpcVersion { found: "2".into() })
    );
}

#[test]
fn json_rpc_error_response_quotes_code_and_message() {
    let bytes =
        br#"{"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}}"#;
    let error = crate::support::read_both(bytes).unwrap_err();
    assert_eq!(
        error,
        DocumentError::JsonRpcError {
            code: "-32601".into(),
            message: "\"Method not found\"".into()
        }
    );
    assert_eq!(
        error.to_string(),
        "the document is a JSON-RPC error response (code -32601, message \"Method not found\"), not a tools/list result; the server refused the request, so there is no catalog to digest"
    );
    // "error" wins over "result", and missing members are said to be absent.
    assert_eq!(
        crate::support::read_both(br#"{"jsonrpc": "2.0", "error": {}, "result": {"tools": []}}"#),
        Err(DocumentError::JsonRpcError {
            code: "absent".into(),
            message: "absent".into()
        })
    );
}

#[test]
fn long_json_rpc_error_messages_are_shortened() {
    let document = format!(
        r#"{{"jsonrpc": "2.0", "error": {{"code": 1, "message": "{}"}}}}"#,
        "m".repeat(500)
    );
    assert_eq!(
        crate::support::read_both(document.as_bytes()),
        Err(DocumentError::JsonRpcError {
            code: "1".into(),
            message: format!("\"{}…", "m".repeat(199))
        })
    );
}

/// Tools without a key, and catalogs of every shape with members in any order, read from the
/// bytes by both paths (`read_both` compares the streaming path with the tree path, errors
/// included).
#[test]
fn both_paths_agree_on_tool_errors_and_member_order() {
    use catalog_fold::{CatalogDigest, ReadCatalogError, ToolErrorReason};
    use jcs_digest::Profile;

    let bytes = br#"[{"name": 5}, "tool", {"name": "ok"}, null, {"name": {"a": 1}}]"#;
    crate::support::read_both(bytes).unwrap();
    let Err(ReadCatalogError::Catalog(error)) = CatalogDigest::from_document(bytes, Profile::Trace)
    else {
        panic!("the catalog has a digest");
    };
    let reasons: Vec<(usize, &ToolErrorReason)> = error
        .tools()
        .iter()
        .map(|tool| (tool.index, &tool.reason))
        .collect();
    assert_eq!(
        reasons,
        [
            (0, &ToolErrorReason::NameNotAString { found: "a number" }),
            (1, &ToolErrorReason::NotAnObject { found: "a string" }),
            (3, &ToolErrorReason::NotAnObject { found: "null" }),
            (4, &ToolErrorReason::NameNotAString { found: "an object" }),
        ]
    );
    for document in [
        &br#"{"nextCursor": "x", "tools": [{"name": "a"}], "jsonrpc": "2.0", "result": {"tools": []}}"#[..],
        br#"{"result": {"tools": [{"name": "b"}], "x": 1}, "id": 1, "jsonrpc": "2.0", "tools": 3}"#,
        br#"{"result": {"tools": [{"name": "b"}]}, "jsonrpc": "\u0032.0"}"#,
        br#"{"result": {"tools": [{"name": "b"}]}, "jsonrpc": "2.0", "error": null}"#,
        br#"{"result": {"tools": [{"name": "b"}]}, "jsonrpc": "2.0 "}"#,
        br#"{"result": {"tools": 1}, "jsonrpc": "2.0"}"#,
        br#"{"result": 1, "jsonrpc": "2.0"}"#,
        br#"{"jsonrpc": "2.0"}"#,
        br#"{"tools": "x"}"#,
        br#"{"tools": [1], "x": {"a": 1, "a": 2}}"#,
        br#"{"x": [1e400], "tools": 1}"#,
        br#"{}"#,
        br#""tools""#,
        br#"[] []"#,
        b"",
    ] {
        let _ = crate::support::read_both(document);
    }
}
