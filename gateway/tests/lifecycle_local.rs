//! The catalog's life cycle for a local (stdio) server, as processes: `toolgate pin … --
//! COMMAND` on the testkit's stdio server (`toolgate demo-upstream --stdio --tools FILE`), then
//! `catalog check`, `toolgate serve`, `catalog verify` and `catalog approve` on what it wrote.

use std::path::Path;

use serde_json::{Value, json};
use server_identity::digest_file;
use toolgate::mcp::ProtocolVersion;

use crate::e2e_local::Files;
use crate::e2e_support::{ServeProcess, TOOLGATE, run};
use crate::util::{Run, toolgate};

fn path(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn digest(path: &Path) -> String {
    digest_file(path).unwrap().to_string()
}

/// `toolgate pin --prefix demo. --approved-by alice@example.com --cwd DIR EXTRA… -- TOOLGATE
/// demo-upstream --stdio TOOLS…`, run from the crate directory (not DIR: relative arguments
/// are looked up in `--cwd`).
fn pin(files: &Files, extra: &[&str], tools: &[&str]) -> Run {
    let mut args = vec![
        "pin",
        "--prefix",
        "demo.",
        "--approved-by",
        "alice@example.com",
        "--cwd",
        path(&files.dir),
    ];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--", TOOLGATE, "demo-upstream", "--stdio"]);
    args.extend_from_slice(tools);
    toolgate(&args)
}

/// `toolgate catalog approve CATALOG demo.echo --approved-by WHO`.
fn approve_echo(catalog: &Path, who: &str) -> Run {
    toolgate(&[
        "catalog",
        "approve",
        path(catalog),
        "demo.echo",
        "--approved-by",
        who,
    ])
}

/// The `tools/list` entry of `name` in the tools file the stdio server serves now.
fn served(files: &Files, name: &str) -> Value {
    let tools: Value = serde_json::from_slice(&std::fs::read(&files.tools).unwrap()).unwrap();
    tools
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == name)
        .unwrap()
        .clone()
}

#[test]
fn pin_a_local_server_then_check_and_serve_it_with_exactly_its_settings() {
    let files = Files::new("pin-local");
    let pinned = pin(
        &files,
        &["--env", "DEMO_MODE=test"],
        &["--tools", "tools.json"],
    );
    assert_eq!(pinned.code, 0, "{}", pinned.stderr);
    let dir = files.dir.display().to_string();
    let tools_path = format!("{dir}/tools.json");
    assert_eq!(
        pinned.stderr,
        format!(
            "toolgate pin: trusting stdio:{TOOLGATE} demo-upstream --stdio --tools tools.json on \
             first use. Nothing here proves these files are the ones you mean: compare the \
             digests below with ones their publisher gives you another way before you rely on \
             this catalog.\n\
             \x20 program      {TOOLGATE}\n\
             \x20 cwd          {dir}\n\
             \x20 entrypoint   {}  {TOOLGATE}  (the program)\n\
             \x20 entrypoint   {}  {tools_path}  (argument 4, an existing file)\n\
             \x20 arguments    \"demo-upstream\", \"--stdio\", \"--tools\"  (not existing files, so \
             not pinned)\n\
             \x20 env          DEMO_MODE  (set as given)\n\
             \x20 inherit_env  PATH, HOME  (nothing else of the gateway's environment)\n\
             \x20 not seen     a file the program loads by itself (a module it imports) is not \
             pinned: add its path to entrypoint_digests\n\
             \x20 tools        3 pinned: \"demo.echo\" (\"echo\"), \"demo.add\" (\"add\"), \
             \"demo.environment\" (\"environment\")\n",
            digest(Path::new(TOOLGATE)),
            digest(&files.tools),
        )
    );

    // Complete entries, every one bound to the command as it was started.
    let catalog: Value = serde_json::from_str(&pinned.stdout).unwrap();
    let entries = catalog.as_array().unwrap();
    assert_eq!(entries.len(), 3);
    for entry in entries {
        assert_eq!(
            entry["server"],
            json!({
                "command": [TOOLGATE, "demo-upstream", "--stdio", "--tools", "tools.json"],
                "cwd": dir,
                "env": {"DEMO_MODE": "test"},
                "inherit_env": ["PATH", "HOME"],
                "entrypoint_digests": {
                    TOOLGATE: digest(Path::new(TOOLGATE)),
                    tools_path.as_str(): digest(&files.tools),
                },
            })
        );
        assert_eq!(entry["approved_by"], "alice@example.com");
    }
    assert_eq!(entries[0]["tool_name"], "demo.echo");
    assert_eq!(entries[0]["upstream_name"], "echo");
    assert_eq!(entries[0]["approved_definition"], served(&files, "echo"));
    assert_eq!(
        entries[0]["definition_hash"],
        jcs_digest::tool_definition_digest(&served(&files, "echo"), jcs_digest::Profile::Trace)
            .unwrap()
            .to_string()
    );

    // `catalog check` accepts stdout as it is; the gateway serves it, and starts the server
    // with exactly the pinned directory and environment.
    let file = files.dir.join("catalog.json");
    std::fs::write(&file, &pinned.stdout).unwrap();
    let check = toolgate(&["catalog", "check", path(&file)]);
    assert_eq!(check.code, 0, "{}", check.stderr);
    run(async {
        let mut serve = ServeProcess::spawn(&file, &files.dir.join("audit.jsonl"), &[]);
        let mut client = serve.connect(ProtocolVersion::V2025_11_25).await;
        let echoed = client
            .call_tool("demo.echo", json!({"text": "pinned locally"}))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(echoed["content"][0]["text"], "pinned locally");
        let environment = client
            .call_tool("demo.environment", json!({}))
            .await
            .unwrap()
            .unwrap();
        let mut expected_env = json!({"DEMO_MODE": "test"});
        for name in ["PATH", "HOME"] {
            if let Some(value) = std::env::var_os(name) {
                expected_env[name] = value.to_string_lossy().into_owned().into();
            }
        }
        assert_eq!(
            environment["structuredContent"],
            json!({"env": expected_env, "cwd": dir})
        );
        let (code, stderr) = serve.terminate().await;
        assert_eq!(code, 0, "{stderr}");
    });
}

#[test]
fn a_changed_description_is_named_by_verify_and_approve_takes_it() {
    let files = Files::new("pin-local-drift");
    let catalog = files.dir.join("catalog.json");
    // `--tools=tools.json` names no existing file, so the tools file is served but not pinned:
    // its definitions can change under the same identity (a rug-pull by the server itself).
    let pinned = pin(
        &files,
        &["--catalog", path(&catalog), "--tool", "echo", "--json"],
        &["--tools=tools.json"],
    );
    assert_eq!(pinned.code, 0, "{}", pinned.stderr);
    let summary: Value = serde_json::from_str(&pinned.stdout).unwrap();
    let echo_hash =
        jcs_digest::tool_definition_digest(&served(&files, "echo"), jcs_digest::Profile::Trace)
            .unwrap()
            .to_string();
    assert_eq!(
        summary,
        json!({
            "catalog": catalog.display().to_string(),
            "command": [TOOLGATE, "demo-upstream", "--stdio", "--tools=tools.json"],
            "program": TOOLGATE,
            "cwd": files.dir.display().to_string(),
            "entrypoint_digests": {TOOLGATE: digest(Path::new(TOOLGATE))},
            "tools": [{"tool_name": "demo.echo", "upstream_name": "echo", "definition_hash": echo_hash}],
            "not_pinned": ["add", "environment"],
            "warnings": [],
        })
    );
    assert!(
        pinned
            .stderr
            .contains("\n  not pinned   \"add\", \"environment\"\n"),
        "{}",
        pinned.stderr
    );
    let approved_hash = {
        let written: Value = serde_json::from_slice(&std::fs::read(&catalog).unwrap()).unwrap();
        written[0]["definition_hash"].as_str().unwrap().to_owned()
    };
    let ok = toolgate(&["catalog", "verify", path(&catalog)]);
    assert_eq!(ok.code, 0, "{}{}", ok.stdout, ok.stderr);

    files.change_tools_file();
    let live_hash =
        jcs_digest::tool_definition_digest(&served(&files, "echo"), jcs_digest::Profile::Trace)
            .unwrap()
            .to_string();
    let verify = toolgate(&["catalog", "verify", path(&catalog)]);
    assert_eq!(verify.code, 1, "{}{}", verify.stdout, verify.stderr);
    let label = format!(
        "command [{TOOLGATE:?}, \"demo-upstream\", \"--stdio\", \"--tools=tools.json\"] (program \
         {TOOLGATE}) in {}",
        files.dir.display()
    );
    let listed: Value = serde_json::from_slice(&std::fs::read(&files.tools).unwrap()).unwrap();
    let observed = catalog_fold::CatalogDigest::compute(
        listed.as_array().unwrap(),
        jcs_digest::Profile::Trace,
    )
    .unwrap();
    let body = verify.stdout.lines().collect::<Vec<_>>();
    assert_eq!(body[0], format!("{label}: identity ok"));
    assert_eq!(
        body[1],
        format!(
            "  observed tools/list digest {} (trace.mcp-tool-definition.v1)",
            observed.catalog()
        )
    );
    assert_eq!(
        body[2..],
        [
            format!("  changed   \"demo.echo\" (\"echo\")  {approved_hash} -> {live_hash}")
                .as_str(),
            "      changed  /description (text): Returns the [-given text unchanged.-]{+text, and \
             mails it out.+}",
            "  unpinned  \"add\": served, not in the catalog",
            "  unpinned  \"environment\": served, not in the catalog",
            "verify: 0 ok, 1 changed, 0 missing, 0 doubled, 2 unpinned; 1 server, 0 identity \
             mismatches, 0 unreachable",
        ]
    );

    let approve = approve_echo(&catalog, "bob");
    assert_eq!(approve.code, 0, "{}{}", approve.stdout, approve.stderr);
    let verify = toolgate(&["catalog", "verify", path(&catalog)]);
    assert_eq!(verify.code, 0, "{}{}", verify.stdout, verify.stderr);
    let written: Value = serde_json::from_slice(&std::fs::read(&catalog).unwrap()).unwrap();
    assert_eq!(written[0]["definition_hash"], live_hash);
    assert_eq!(written[0]["approved_by"], "bob");

    // The gateway serves the newly approved definition.
    run(async {
        let mut serve = ServeProcess::spawn(&catalog, &files.dir.join("audit.jsonl"), &[]);
        let mut client = serve.connect(ProtocolVersion::V2025_11_25).await;
        let tools = client.list_tools().await.unwrap();
        assert_eq!(
            tools[0]["description"],
            "Returns the text, and mails it out."
        );
        let echoed = client
            .call_tool("demo.echo", json!({"text": "re-approved"}))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(echoed["content"][0]["text"], "re-approved");
        let (code, stderr) = serve.terminate().await;
        assert_eq!(code, 0, "{stderr}");
    });
}

#[test]
fn a_changed_entrypoint_is_an_identity_mismatch_and_approve_refuses_it() {
    let files = Files::new("pin-local-mismatch");
    let catalog = files.dir.join("catalog.json");
    let pinned = pin(
        &files,
        &["--catalog", path(&catalog)],
        &["--tools", "tools.json"],
    );
    assert_eq!(pinned.code, 0, "{}", pinned.stderr);
    assert_eq!(
        pinned.stderr.lines().last().unwrap(),
        format!(
            "wrote 3 entries to {} (0 existing entries untouched)",
            catalog.display()
        )
    );
    let pinned_digest = digest(&files.tools);

    // Pinning the same tools again collides, and leaves the file byte-identical.
    let before = std::fs::read(&catalog).unwrap();
    let again = pin(
        &files,
        &["--catalog", path(&catalog), "--tool", "echo"],
        &["--tools", "tools.json"],
    );
    assert_eq!(again.code, 1, "{}", again.stderr);
    assert!(
        again
            .stderr
            .contains("nothing was merged, because these tool names are already in the catalog"),
        "{}",
        again.stderr
    );
    assert_eq!(std::fs::read(&catalog).unwrap(), before);

    files.change_tools_file();
    let observed = digest(&files.tools);
    let tools_path = files.tools.display().to_string();
    let verify = toolgate(&["catalog", "verify", path(&catalog)]);
    assert_eq!(verify.code, 1, "{}{}", verify.stdout, verify.stderr);
    let reason = format!(
        "identity mismatch (entrypoint): {tools_path} has digest {observed}, expected \
         {pinned_digest}; the server was not started; if the change was intended (an upgrade), \
         re-pin with `toolgate identity --command -- CMD ARGS…` and update entrypoint_digests \
         in the catalog; otherwise find out who changed it"
    );
    let label = format!(
        "command [{TOOLGATE:?}, \"demo-upstream\", \"--stdio\", \"--tools\", \"tools.json\"] \
         (program {TOOLGATE}) in {}",
        files.dir.display()
    );
    assert_eq!(
        verify.stdout,
        format!(
            "{label}\n\
             \x20 identity_mismatch (entrypoint): {reason}\n\
             \x20 expected   {pinned_digest}  {tools_path}\n\
             \x20 observed   {observed}  {tools_path}\n\
             \x20 not checked  demo.echo, demo.add, demo.environment\n\
             verify: 0 ok, 0 changed, 0 missing, 0 doubled, 0 unpinned; 1 server, 1 identity \
             mismatch, 0 unreachable\n"
        )
    );
    let json = toolgate(&["catalog", "verify", path(&catalog), "--json"]);
    assert_eq!(json.code, 1);
    let report: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(report["servers"][0]["identity"], "identity_mismatch");
    assert_eq!(
        report["servers"][0]["identity_mismatch"],
        json!({
            "anchor": "entrypoint",
            "message": reason,
            "path": tools_path,
            "expected": {"digest": pinned_digest},
            "presented": {"digest": observed},
        })
    );

    let approve = approve_echo(&catalog, "mallory");
    assert_eq!(approve.code, 1, "{}{}", approve.stdout, approve.stderr);
    assert_eq!(approve.stdout, "");
    assert_eq!(
        approve.stderr,
        format!(
            "toolgate: nothing approved, {} is unchanged:\n\
             \x20 \"demo.echo\": refused, {label} is not the pinned server:\n\
             \x20   identity_mismatch (entrypoint): {reason}\n\
             \x20   expected   {pinned_digest}  {tools_path}\n\
             \x20   observed   {observed}  {tools_path}\n",
            catalog.display()
        )
    );
    assert_eq!(std::fs::read(&catalog).unwrap(), before);

    // A pinned file gone: the same mismatch, with why it could not be read.
    std::fs::remove_file(&files.tools).unwrap();
    let gone = toolgate(&["catalog", "verify", path(&catalog)]);
    assert_eq!(gone.code, 1, "{}{}", gone.stdout, gone.stderr);
    let lines: Vec<&str> = gone.stdout.lines().collect();
    assert_eq!(
        lines[1],
        format!(
            "  identity_mismatch (entrypoint): identity mismatch (entrypoint): cannot read \
             {tools_path} to check its digest: No such file or directory (os error 2); the server \
             was not started; check the path and its permissions, or if the change was intended \
             (an upgrade), re-pin with `toolgate identity --command -- CMD ARGS…` and update \
             entrypoint_digests in the catalog; otherwise find out who changed it"
        )
    );
    assert_eq!(
        lines[2..4],
        [
            format!("  expected   {pinned_digest}  {tools_path}"),
            "  observed   unreadable: No such file or directory (os error 2)".to_owned(),
        ]
    );
    let json = toolgate(&["catalog", "verify", path(&catalog), "--json"]);
    let report: Value = serde_json::from_str(&json.stdout).unwrap();
    let mismatch = &report["servers"][0]["identity_mismatch"];
    assert_eq!(mismatch["expected"], json!({"digest": pinned_digest}));
    assert_eq!(
        mismatch["presented"],
        json!({"error": "No such file or directory (os error 2)"})
    );
    let approve = approve_echo(&catalog, "mallory");
    assert_eq!(approve.code, 1, "{}{}", approve.stdout, approve.stderr);
    assert_eq!(std::fs::read(&catalog).unwrap(), before);
}

#[test]
fn pin_refuses_bad_local_options_and_writes_nothing() {
    let files = Files::new("pin-local-refusals");
    let cases: [(&[&str], String); 5] = [
        (
            &[
                "pin",
                "https://mcp.example/mcp",
                "--approved-by",
                "me",
                "--",
                TOOLGATE,
            ],
            format!(
                "toolgate: pin https://mcp.example/mcp -- {TOOLGATE}: give a URL or a command, \
                 not both\n"
            ),
        ),
        (
            &[
                "pin",
                "https://mcp.example/mcp",
                "--approved-by",
                "me",
                "--env",
                "A=1",
            ],
            "toolgate: pin: --cwd, --env and --inherit-env are for a local server (`toolgate \
             pin … -- COMMAND ARGS…`)\n"
                .to_owned(),
        ),
        (
            &["pin", "--approved-by", "me", "--env", "=1", "--", TOOLGATE],
            "toolgate: --env \"=1\": write NAME=VALUE (a variable set for the server)\n".to_owned(),
        ),
        (
            &[
                "pin",
                "--approved-by",
                "me",
                "--env",
                "HOME=/x",
                "--inherit-env",
                "HOME",
                "--",
                TOOLGATE,
            ],
            "toolgate: --inherit-env HOME and --env HOME=…: a variable is either set or \
             inherited\n"
                .to_owned(),
        ),
        (
            &["pin", "--approved-by", "me", "--", "bin/server"],
            "toolgate: \"bin/server\" is a relative path: write the program as an absolute \
             path, or as a bare name to look up on PATH (the catalog resolves command[0] the \
             same way)\n"
                .to_owned(),
        ),
    ];
    for (args, stderr) in cases {
        let refused = toolgate(args);
        assert_eq!(
            (refused.code, refused.stderr.as_str()),
            (2, stderr.as_str())
        );
        assert_eq!(refused.stdout, "");
    }
    // A server that exits before its handshake: exit 2, nothing written.
    let catalog = files.dir.join("catalog.json");
    let failed = pin(
        &files,
        &["--catalog", path(&catalog), "--timeout", "5s"],
        &["--misbehave", "exit-at-once"],
    );
    assert_eq!(failed.code, 2, "{}", failed.stderr);
    assert!(
        failed.stderr.starts_with(&format!(
            "toolgate: cannot list the tools of stdio:{TOOLGATE}"
        )),
        "{}",
        failed.stderr
    );
    assert!(!catalog.exists());
}
