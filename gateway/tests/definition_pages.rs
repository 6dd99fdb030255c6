//! `toolgate::definition_check::ToolsPage`: a `tools/list` page digested from its bytes gives
//! the tree path's digests; every malformed page is refused with the listing's message, strict
//! JSON first; a listing of streamed pages is checked like one of values.

use std::time::Duration;

use jcs_digest::{
    Digest, JsonType, Profile, StrictJsonErrorKind, parse_strict, tool_definition_digest,
};
use serde_json::Value;
use toolgate::definition_check::{
    DefinitionCheckError, Freshness, ListedTools, LiveDefinitions, PageMemo, ToolsPage,
    ToolsPageError,
};

/// One tool spelled with whitespace, escapes, number forms and unhashed members that the
/// canonical form must erase.
const ASK: &str = r#"{ "_meta" : {"x": [1, 2]}, "name" : "ask",
    "description" : "Ask \u0061 question \ud83d\ude00.", "title": null,
    "inputSchema" : {"type": "object", "properties": {"n": {"maximum": 1E+2, "minimum": -0.0}},
      "required": []}, "extra": true }"#;
const READ: &str = r#"{"name": "read", "inputSchema": {"type": "object"}}"#;

fn tree_digest(tool: &str) -> Digest {
    tool_definition_digest(&parse_strict(tool.as_bytes()).unwrap(), Profile::Trace).unwrap()
}

fn run<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            tokio::time::timeout(Duration::from_secs(30), future)
                .await
                .expect("test timed out")
        })
}

/// Checks `name` against `expected` in a listing made of `listed`.
fn check_listed(
    listed: ListedTools,
    name: &str,
    expected: &Digest,
) -> Result<Digest, DefinitionCheckError<std::io::Error>> {
    let live = LiveDefinitions::<std::io::Error>::new(Freshness::PerCall);
    run(live.check(name, expected, 0, move || async move { Ok(listed) }))
        .map(|verified| verified.digest())
}

/// The digest of `name` in a listing of the pages `results` read through `memo`, and the
/// cursor of its last page.
fn digest_through(memo: &PageMemo, results: &[&str], name: &str) -> (Digest, Option<String>) {
    let mut listed = ListedTools::new();
    let mut next = None;
    for result in results {
        next = listed
            .read_page_remembered(result.as_bytes(), memo)
            .unwrap();
    }
    // An approved digest no tool has: the mismatch reports the observed one.
    match check_listed(listed, name, &Digest::from_bytes([0; 32])) {
        Err(DefinitionCheckError::Mismatch { observed, .. }) => (observed, next),
        other => panic!("expected a mismatch naming the digest of {name}, got {other:?}"),
    }
}

/// Checks `name` against `expected` in a listing made of the pages `results`.
fn check_pages(
    results: &[&str],
    name: &str,
    expected: &Digest,
) -> Result<Digest, DefinitionCheckError<std::io::Error>> {
    let mut listed = ListedTools::new();
    for result in results {
        listed.push_page(ToolsPage::read(result.as_bytes()).unwrap());
    }
    let live = LiveDefinitions::<std::io::Error>::new(Freshness::PerCall);
    run(live.check(name, expected, 0, move || async move { Ok(listed) }))
        .map(|verified| verified.digest())
}

#[test]
fn a_page_is_digested_as_the_tree_path_digests_its_tools() {
    let result = format!(r#"{{"tools": [{ASK}, {READ}], "nextCursor": "page 2"}}"#);
    let page = ToolsPage::read(result.as_bytes()).unwrap();
    assert_eq!(page.len(), 2);
    assert_eq!(page.next_cursor(), Some("page 2"));
    // The canonical form of ASK, written out, so the escapes and numbers are pinned too.
    let preimage = r#"{"profile":"trace.mcp-tool-definition.v1","tool":{"description":"Ask a question 😀.","inputSchema":{"properties":{"n":{"maximum":100,"minimum":0}},"required":[],"type":"object"},"name":"ask"}}"#;
    assert_eq!(tree_digest(ASK), Digest::of(preimage.as_bytes()));
    let ask = tree_digest(ASK);
    assert_eq!(check_pages(&[&result], "ask", &ask).unwrap(), ask);
    let read = tree_digest(READ);
    assert_eq!(check_pages(&[&result], "read", &read).unwrap(), read);
}

#[test]
fn a_drifted_tool_in_a_streamed_page_is_a_mismatch_with_both_digests() {
    let result = format!(r#"{{"tools": [{ASK}, {READ}]}}"#);
    let approved = tree_digest(r#"{"name": "ask", "description": "Ask a question."}"#);
    match check_pages(&[&result], "ask", &approved) {
        Err(error @ DefinitionCheckError::Mismatch { .. }) => {
            assert_eq!(error.observed(), Some(tree_digest(ASK)));
            let DefinitionCheckError::Mismatch { tool, expected, .. } = error else {
                unreachable!()
            };
            assert_eq!((tool.as_str(), expected), ("ask", approved));
        }
        other => panic!("expected a mismatch, got {other:?}"),
    }
}

#[test]
fn pages_are_joined_in_order_and_elements_without_a_string_name_are_only_counted() {
    let first = format!(r#"{{"tools": [{READ}, 7, {{"name": 3}}], "nextCursor": "2"}}"#);
    let second = format!(r#"{{"tools": [{READ}, {{"title": "no name"}}], "nextCursor": null}}"#);
    let read = tree_digest(READ);
    match check_pages(&[&first, &second], "read", &read) {
        Err(DefinitionCheckError::Duplicate {
            tool,
            count,
            observed,
            ..
        }) => {
            assert_eq!((tool.as_str(), count), ("read", 2));
            assert_eq!(observed, vec![read, read]);
        }
        other => panic!("expected a duplicate, got {other:?}"),
    }
    match check_pages(&[&first, &second], "write", &read) {
        Err(DefinitionCheckError::Absent { listed, .. }) => assert_eq!(listed, 5),
        other => panic!("expected an absent tool, got {other:?}"),
    }
}

#[test]
fn the_last_page_has_no_cursor_or_a_null_one() {
    for result in [r#"{"tools": []}"#, r#"{"tools": [], "nextCursor": null}"#] {
        let page = ToolsPage::read(result.as_bytes()).unwrap();
        assert_eq!((page.next_cursor(), page.is_empty()), (None, true));
        let mut listed = ListedTools::new();
        assert_eq!(listed.read_page(result.as_bytes()), Ok(None));
        assert!(listed.is_empty());
    }
}

#[test]
fn both_paths_read_the_same_tools_and_cursor() {
    let result = format!(r#"{{"nextCursor": "c\u0032", "tools": [{ASK}, 1, {READ}]}}"#);
    let mut values = Vec::new();
    let next = ToolsPage::read_values(result.as_bytes(), &mut values).unwrap();
    assert_eq!(next.as_deref(), Some("c2"));
    let expected: Vec<Value> = vec![
        parse_strict(ASK.as_bytes()).unwrap(),
        Value::from(1),
        parse_strict(READ.as_bytes()).unwrap(),
    ];
    assert_eq!(values, expected);
    let mut listed = ListedTools::new();
    assert_eq!(
        listed.read_page(result.as_bytes()).unwrap().as_deref(),
        Some("c2")
    );
    assert_eq!(listed.len(), 3);
}

/// The error of `ToolsPage::read`, with its message, after checking that the tree path
/// (`ToolsPage::read_values`) gives the same and appends nothing.
fn refused(result: &str) -> (ToolsPageError, String) {
    let error = ToolsPage::read(result.as_bytes()).unwrap_err();
    let mut values = Vec::new();
    let tree = ToolsPage::read_values(result.as_bytes(), &mut values);
    assert_eq!(tree, Err(error.clone()), "{result}");
    assert!(values.is_empty());
    let message = error.to_string();
    (error, message)
}

#[test]
fn malformed_pages_are_refused_with_the_listing_messages() {
    let cases: [(&str, ToolsPageError, &str); 5] = [
        (
            r#"[{"name": "ask"}]"#,
            ToolsPageError::NotAnObject {
                found: JsonType::Array,
            },
            "the result is not an object",
        ),
        (
            r#"{"nextCursor": null}"#,
            ToolsPageError::NoToolsArray { found: None },
            "the result has no `tools` array",
        ),
        (
            r#"{"tools": {"name": "ask"}}"#,
            ToolsPageError::NoToolsArray {
                found: Some(JsonType::Object),
            },
            "the result has no `tools` array",
        ),
        (
            r#"{"tools": [], "nextCursor": 2}"#,
            ToolsPageError::CursorNotAString {
                found: JsonType::Number,
            },
            "`nextCursor` is not a string",
        ),
        // The shape is judged in the tree path's order: `tools` before `nextCursor`.
        (
            r#"{"nextCursor": false, "tools": 1}"#,
            ToolsPageError::NoToolsArray {
                found: Some(JsonType::Number),
            },
            "the result has no `tools` array",
        ),
    ];
    for (result, error, message) in cases {
        assert_eq!(refused(result), (error, message.to_owned()), "{result}");
    }
}

#[test]
fn a_page_that_is_not_strict_json_is_refused_before_its_shape() {
    // A duplicate member inside a tool, in a result that is not an object at all: the strict
    // error wins, with the tree reader's pointer and offset.
    let result = r#"[{"name": "a", "name": "b"}]"#;
    let (error, message) = refused(result);
    let tree = parse_strict(result.as_bytes()).unwrap_err();
    assert_eq!(error, ToolsPageError::NotStrict(tree.clone()));
    assert_eq!(
        tree.kind(),
        &StrictJsonErrorKind::DuplicateMember {
            pointer: "/0".to_owned(),
            name: "name".to_owned(),
        }
    );
    assert_eq!(tree.offset(), 15);
    assert_eq!(message, format!("the result is not strict JSON: {tree}"));

    // An integer out of range in an unhashed member, and trailing bytes after the object.
    for (result, offset) in [
        (
            r#"{"tools": [{"name": "a", "_meta": {"n": 9007199254740992}}]}"#,
            40,
        ),
        (r#"{"tools": []} x"#, 14),
    ] {
        let (error, _) = refused(result);
        let tree = parse_strict(result.as_bytes()).unwrap_err();
        assert_eq!(tree.offset(), offset, "{result}");
        assert_eq!(error, ToolsPageError::NotStrict(tree), "{result}");
    }
}

#[test]
fn a_listing_given_as_values_still_digests_by_the_tree_path() {
    let tools: Vec<Value> = vec![parse_strict(ASK.as_bytes()).unwrap()];
    let listed = ListedTools::from(tools);
    assert_eq!((listed.len(), listed.is_empty()), (1, false));
    let live = LiveDefinitions::<std::io::Error>::new(Freshness::PerCall);
    let ask = tree_digest(ASK);
    let verified = run(live.check("ask", &ask, 0, move || async move { Ok(listed) })).unwrap();
    assert_eq!(verified.digest(), ask);
}

/// `per-call` lists an unchanged upstream again and again: a page served again byte for byte is
/// taken from the memo, and any change to its bytes, however small, is read and digested, so a
/// drifted definition is seen on the very next listing, and so is its return.
#[test]
fn a_page_served_again_is_taken_from_the_memo_and_a_changed_one_is_read() {
    let memo = PageMemo::new();
    let result = format!(r#"{{"tools": [{ASK}, {READ}], "nextCursor": "2"}}"#);
    // One escape spelled another way: the same definition, other bytes.
    let respelled = result.replacen(r"\u0061", "a", 1);
    // The same bytes and one more after them: a page is compared whole, not by its start.
    let longer = format!("{respelled}\n");
    // The description changed by one character: a rug pull.
    let drifted_ask = ASK.replacen("question", "questiom", 1);
    let drifted = format!(r#"{{"tools": [{drifted_ask}, {READ}], "nextCursor": "2"}}"#);
    let (ask, changed) = (tree_digest(ASK), tree_digest(&drifted_ask));
    assert_ne!(ask, changed);

    let listings: [(&str, Digest, u64); 7] = [
        (&result, ask, 0),
        (&result, ask, 1),
        (&drifted, changed, 1),
        (&drifted, changed, 2),
        (&respelled, ask, 2),
        (&longer, ask, 2),
        (&result, ask, 2),
    ];
    for (round, (page, digest, reused)) in listings.into_iter().enumerate() {
        assert_eq!(
            digest_through(&memo, &[page], "ask"),
            (digest, Some("2".to_owned())),
            "listing {round}"
        );
        assert_eq!(
            (memo.pages_reused(), memo.len()),
            (reused, 1),
            "listing {round}"
        );
    }
    assert_eq!(
        digest_through(&memo, &[&result], "read").0,
        tree_digest(READ)
    );
    assert_eq!(memo.pages_reused(), 3);
}

/// Pages are held by position: a changed page replaces the pages from it on, the pages before it
/// are still reused, and a page that is refused leaves the memo as it was.
#[test]
fn pages_are_held_by_position_and_a_refused_page_changes_nothing() {
    let memo = PageMemo::new();
    let first = format!(r#"{{"tools": [{READ}], "nextCursor": "2"}}"#);
    let second = format!(r#"{{"tools": [{ASK}]}}"#);
    let drifted_ask = ASK.replacen("question", "questiom", 1);
    let second_drifted = format!(r#"{{"tools": [{drifted_ask}]}}"#);
    let (ask, changed) = (tree_digest(ASK), tree_digest(&drifted_ask));

    assert_eq!(
        digest_through(&memo, &[&first, &second], "ask"),
        (ask, None)
    );
    assert_eq!((memo.pages_reused(), memo.len()), (0, 2));
    assert_eq!(
        digest_through(&memo, &[&first, &second_drifted], "ask"),
        (changed, None)
    );
    assert_eq!((memo.pages_reused(), memo.len()), (1, 2));
    // The second page's bytes as the first page: held by position, so read, and what was held
    // from position 0 on is replaced.
    assert_eq!(digest_through(&memo, &[&second], "ask"), (ask, None));
    assert_eq!((memo.pages_reused(), memo.len()), (1, 1));

    let mut listed = ListedTools::new();
    let refused = listed.read_page_remembered(br#"{"tools": [], "tools": []}"#, &memo);
    assert!(
        matches!(refused, Err(ToolsPageError::NotStrict(ref e)) if matches!(e.kind(), StrictJsonErrorKind::DuplicateMember { .. })),
        "{refused:?}"
    );
    assert!(listed.is_empty());
    assert_eq!((memo.pages_reused(), memo.len()), (1, 1));
    assert_eq!(digest_through(&memo, &[&second], "ask"), (ask, None));
    assert_eq!((memo.pages_reused(), memo.len()), (2, 1));
}

/// A page read through the memo after pages that were not (added with `push_page`) has no
/// place to be held at: it is read, and the memo stays empty.
#[test]
fn a_page_after_pages_not_read_through_the_memo_is_not_held() {
    let memo = PageMemo::new();
    let mut listed = ListedTools::new();
    listed.push_page(ToolsPage::read(br#"{"tools": []}"#).unwrap());
    let result = format!(r#"{{"tools": [{READ}]}}"#);
    assert_eq!(
        listed.read_page_remembered(result.as_bytes(), &memo),
        Ok(None)
    );
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (memo.len(), memo.is_empty(), memo.pages_reused()),
        (0, true, 0)
    );
}
