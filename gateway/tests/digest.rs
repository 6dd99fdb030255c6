use crate::util::{material, temp_file, toolgate, toolgate_with_stdin};

// Expected values computed independently by bench/py_digest.py (Python, rfc8785 0.1.4):
//   python3 bench/py_digest.py corpus/catalogs/deepwiki-tools-list.json
const DEEPWIKI_JSON: &str = concat!(
    r#"{"label":"trace.mcp-tool-definition.v1","tools":{"#,
    r#""tool:ask_wiki_question":"sha256:7b433df44e34a9356d6481fc370283840a598c47b879d0f663952e91d8b3e729","#,
    r#""tool:read_wiki_contents":"sha256:60d4ddd7838f28963920e8687ef644096fb38e8602cb25b8a53149fe87fc72d5","#,
    r#""tool:read_wiki_structure":"sha256:9b1330cf1cf19a6b003fc093dc0d92bdea53a47de4cf4efd17b7a0add7945c50"},"#,
    r#""catalog":"sha256:b3d3955a3da0c0eb95a263ac53e4df2efcb0634193b7cbee92337144f4146cbd"}"#,
    "\n"
);

#[test]
fn json_output_matches_the_python_reference() {
    let run = toolgate(&[
        "digest",
        "--json",
        &material("catalogs/deepwiki-tools-list.json"),
    ]);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""));
    assert_eq!(run.stdout, DEEPWIKI_JSON);
}

#[test]
fn agentavow_label_is_selectable_by_name() {
    // Same Python script with LABEL = "agentavow.mcp-tool-definition.v1".
    let run = toolgate(&[
        "digest",
        "--json",
        "--label",
        "agentavow.mcp-tool-definition.v1",
        &material("catalogs/deepwiki-tools-list.json"),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let out: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(out["label"], "agentavow.mcp-tool-definition.v1");
    assert_eq!(
        out["tools"]["tool:ask_wiki_question"],
        "sha256:171a53c9725874258b0b1125bc1d1c517e1b02f91a236096a37f53cc3a763dc9"
    );
    assert_eq!(
        out["catalog"],
        "sha256:9d4a7d42e2b6c025099570b6dfff977f9e58ea3fce98f727c58454e936025e84"
    );
}

#[test]
fn text_output_lists_each_key_then_the_catalog() {
    let run = toolgate(&["digest", &material("catalogs/deepwiki-tools-list.json")]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "sha256:7b433df44e34a9356d6481fc370283840a598c47b879d0f663952e91d8b3e729  tool:ask_wiki_question\n\
         sha256:60d4ddd7838f28963920e8687ef644096fb38e8602cb25b8a53149fe87fc72d5  tool:read_wiki_contents\n\
         sha256:9b1330cf1cf19a6b003fc093dc0d92bdea53a47de4cf4efd17b7a0add7945c50  tool:read_wiki_structure\n\
         sha256:b3d3955a3da0c0eb95a263ac53e4df2efcb0634193b7cbee92337144f4146cbd  catalog (3 keys, label trace.mcp-tool-definition.v1)\n"
    );
}

// A name with a quote, a backslash and spaces, and a name given to two definitions. Expected
// values from bench/py_digest.py (Python, rfc8785 0.1.4) on the same bytes.
const QUOTED_AND_DUPLICATED: &[u8] =
    br#"[{"name":"say \"hi\" \\ now"},{"name":"dup","description":"b"},{"name":"dup","description":"a"}]"#;
const DUP_DIGEST: &str = "sha256:f83fe240b58fcd52cc6b635b041f9531854afa2763fd3bd79c3ca197ff15fd5b";
const QUOTED_DIGEST: &str =
    "sha256:81567ef50c3e6c64584b0a9af282d6bf2d5335ef4fb018499eb5120754f42c95";
const QUOTED_AND_DUPLICATED_CATALOG: &str =
    "sha256:84bee1e73ed3b2f9c0e36277b22493818da8b1bbbadd92d1d7f21d8479bedfe6";

#[test]
fn a_key_with_a_quote_is_escaped_and_a_shared_key_is_folded_in_both_outputs() {
    let path = temp_file("quoted.json", QUOTED_AND_DUPLICATED);
    let run = toolgate(&["digest", "--json", &path]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        format!(
            "{{\"label\":\"trace.mcp-tool-definition.v1\",\"tools\":{{\"tool:dup\":\"{DUP_DIGEST}\",\
             \"tool:say%20\\\"hi\\\"%20\\\\%20now\":\"{QUOTED_DIGEST}\"}},\
             \"catalog\":\"{QUOTED_AND_DUPLICATED_CATALOG}\"}}\n"
        )
    );
    let run = toolgate(&["digest", &path]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        format!(
            "{DUP_DIGEST}  tool:dup\n\
             {QUOTED_DIGEST}  tool:say%20\"hi\"%20\\%20now\n\
             note: several definitions share a key and were folded together: tool:dup\n\
             {QUOTED_AND_DUPLICATED_CATALOG}  catalog (2 keys, label trace.mcp-tool-definition.v1)\n"
        )
    );
}

#[test]
fn the_three_document_shapes_and_stdin_give_one_digest() {
    let tools = std::fs::read_to_string(material("catalogs/deepwiki-tools-list.json")).unwrap();
    let result = format!(r#"{{"tools": {tools}, "nextCursor": null}}"#);
    let response = format!(r#"{{"jsonrpc": "2.0", "id": 7, "result": {{"tools": {tools}}}}}"#);
    for (name, bytes) in [("result.json", result), ("response.json", response)] {
        let path = temp_file(name, bytes.as_bytes());
        let run = toolgate(&["digest", "--json", &path]);
        assert_eq!(
            (run.code, run.stdout.as_str()),
            (0, DEEPWIKI_JSON),
            "{name}: {}",
            run.stderr
        );
    }
    let run = toolgate_with_stdin(&["digest", "--json", "-"], tools.as_bytes());
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, DEEPWIKI_JSON),
        "{}",
        run.stderr
    );
}

#[test]
fn a_document_nested_too_deep_is_refused_without_naming_a_library_setter_exit_1() {
    let deep = format!("[{}{}]", "[".repeat(128), "]".repeat(128));
    let path = temp_file("deep.json", deep.as_bytes());
    let run = toolgate(&["digest", &path]);
    assert_eq!((run.code, run.stdout.as_str()), (1, ""));
    assert_eq!(
        run.stderr,
        format!(
            "toolgate: {path}: the tools/list document is not strict JSON: arrays and objects nested \
             deeper than the limit of 128 at line 1 column 129 (byte 128): flatten the document: \
             deeper nesting is refused so that no reader of it can be driven to exhaust its stack\n"
        )
    );
}

#[test]
fn a_duplicate_member_is_an_invalid_document_exit_1() {
    let path = temp_file("dup.json", br#"[{"name": "a", "name": "b"}]"#);
    let run = toolgate(&["digest", &path]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        format!(
            "toolgate: {path}: the tools/list document is not strict JSON: duplicate member name \"name\" \
             in the object at JSON Pointer \"/0\" at line 1 column 16 (byte 15): a member name may appear \
             once per object; remove or rename one of them\n"
        )
    );
}

#[test]
fn a_tool_without_a_digest_is_named_exit_1() {
    let path = temp_file(
        "bad-name.json",
        br#"[{"name": "ok"}, {"name": 42, "description": "x"}]"#,
    );
    let run = toolgate(&["digest", "--json", &path]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        format!(
            "toolgate: {path}: the catalog has no digest because 1 tool has none; fix or remove them and digest again:\n  \
             tool #1 (no key) has no digest: its \"name\" is a number, not a string; a tool name must be a string \
             (absent, null or \"\" is keyed tool:unnamed)\n"
        )
    );
}

#[test]
fn a_missing_file_is_an_io_error_exit_2() {
    let run = toolgate(&["digest", "/nonexistent/tools.json"]);
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr,
        "toolgate: cannot read /nonexistent/tools.json (check the path and its permissions): \
         No such file or directory (os error 2)\n"
    );
}

#[test]
fn a_directory_is_an_io_error_exit_2() {
    let path = temp_file("dir-probe.json", b"[]");
    let dir = std::path::Path::new(&path)
        .parent()
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    let run = toolgate(&["digest", &dir]);
    assert_eq!((run.code, run.stdout.as_str()), (2, ""));
    assert_eq!(
        run.stderr,
        format!(
            "toolgate: cannot read {dir} (check the path and its permissions): Is a directory \
             (os error 21)\n"
        )
    );
}

/// A file of several megabytes is read in chunks on two threads; its output is the one reading
/// the same bytes whole from standard input gives.
#[test]
fn a_large_file_read_in_chunks_gives_what_reading_it_whole_gives() {
    let tools: Vec<String> = (0..20_000)
        .map(|i| {
            format!(
                r#"{{"name":"tool_{i}","description":"caf\u00e9 {i} \u65e5\u672c","inputSchema":{{"type":"object","properties":{{"q":{{"type":"string","maxLength":{i}}},"n":{{"type":"number","minimum":1e-3}}}},"required":["q"]}},"_meta":{{"k":[1,2,3]}}}}"#
            )
        })
        .collect();
    let text = format!(
        "{{\"tools\": [\n  {}\n], \"nextCursor\": \"page-2\"}}",
        tools.join(",\n  ")
    );
    assert!(text.len() > 4 << 20, "{} bytes", text.len());
    let path = temp_file("large.json", text.as_bytes());
    let from_file = toolgate(&["digest", "--json", &path]);
    let from_stdin = toolgate_with_stdin(&["digest", "--json", "-"], text.as_bytes());
    assert_eq!(from_file.code, 0, "{}", from_file.stderr);
    assert_eq!(from_stdin.code, 0, "{}", from_stdin.stderr);
    assert_eq!(from_file.stdout, from_stdin.stdout);
    assert!(from_file.stdout.contains("\"tool:tool_19999\":\"sha256:"));
}

/// The `--json` output of a large catalog is written as it is made, through a buffer: a device
/// that is full is an I/O error (exit 2) that says so, and a reader that closes the pipe after
/// the first bytes ends the run quietly (exit 0), as before.
#[test]
fn a_streamed_output_that_cannot_be_written_is_exit_2_and_a_closed_pipe_is_quiet() {
    use std::io::Read;
    use std::process::{Command, Stdio};

    let tools: Vec<String> = (0..5_000)
        .map(|i| format!(r#"{{"name":"tool_{i}","description":"d"}}"#))
        .collect();
    let path = temp_file(
        "streamed-output.json",
        format!("[{}]", tools.join(",")).as_bytes(),
    );

    let full = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["digest", "--json", &path])
        .stdout(
            std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap(),
        )
        .output()
        .unwrap();
    assert_eq!(full.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&full.stderr),
        "toolgate: cannot write to standard output: No space left on device (os error 28)\n"
    );

    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["digest", "--json", &path])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut head = [0u8; 10];
    child.stdout.take().unwrap().read_exact(&mut head).unwrap();
    // The read end is closed here, with about 400 KB of output still to come.
    let closed = child.wait_with_output().unwrap();
    assert_eq!(&head, br#"{"label":""#);
    assert_eq!(closed.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&closed.stderr), "");
}

#[test]
fn an_unknown_label_is_a_usage_error_exit_2() {
    let run = toolgate(&[
        "digest",
        "--label",
        "sha1",
        &material("catalogs/deepwiki-tools-list.json"),
    ]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.starts_with("toolgate: --label: "),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("trace.mcp-tool-definition.v1"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("agentavow.mcp-tool-definition.v1"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_missing_argument_is_a_usage_error_exit_2() {
    let run = toolgate(&["digest"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("Usage: toolgate digest"),
        "{}",
        run.stderr
    );
}
