//! The demo's local-server step: the testkit's stdio MCP server, run by this very program
//! (`toolgate demo-upstream --stdio --tools FILE`), pinned by the digests of the binary and the
//! tools file; allowed, then refused once the tools file changes on disk.

use std::io::Write;
use std::path::{Path, PathBuf};

use jcs_digest::order;
use serde_json::{Value, json};
use server_identity::digest_file;
use toolgate::router::{DenialReason, Router, codes};
use toolgate_testkit::{GatewayClient, approved_entry};

use super::script::{DemoCheck, DemoError, check, denial, first_text, report, setup};

/// The catalog name of the local tool.
pub(super) const LOCAL_TOOL: &str = "local.echo";

/// The local server's files in the demo directory.
pub(super) struct LocalServerFiles {
    tools: PathBuf,
    marker: PathBuf,
    program: PathBuf,
    cwd: PathBuf,
}

impl LocalServerFiles {
    /// How many processes the local server started (it writes its pid at start).
    fn starts(&self) -> usize {
        std::fs::read_to_string(&self.marker)
            .map(|text| {
                text.lines()
                    .filter(|line| line.parse::<u32>().is_ok())
                    .count()
            })
            .unwrap_or(0)
    }
}

/// Writes the local server's tools file and returns its catalog entry (this program and the
/// tools file pinned).
pub(super) fn local_entry(directory: &Path) -> Result<(Value, LocalServerFiles), DemoError> {
    let program = std::env::current_exe().map_err(|e| setup("find the toolgate binary")(&e))?;
    let echo = json!({
        "name": "echo",
        "title": "Echo",
        "description": "Returns the given text unchanged.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"]
        }
    });
    let tools = directory.join("local-tools.json");
    let text = order::to_string_pretty(&json!([echo]));
    std::fs::write(&tools, text).map_err(|e| setup("write the local tools")(&e))?;
    let marker = directory.join("local-starts.txt");
    let digest = |path: &Path| {
        digest_file(path)
            .map(|digest| digest.to_string())
            .map_err(|e| setup("hash the local server's entrypoints")(&e))
    };
    let mut digests = serde_json::Map::new();
    digests.insert(
        program.display().to_string(),
        Value::from(digest(&program)?),
    );
    digests.insert("local-tools.json".to_owned(), Value::from(digest(&tools)?));
    let server = json!({
        "display_name": "demo stdio server",
        "command": [
            program.display().to_string(), "demo-upstream", "--stdio",
            "--tools", "local-tools.json", "--marker", marker.display().to_string()
        ],
        "cwd": directory.display().to_string(),
        "entrypoint_digests": Value::Object(digests),
    });
    let entry = approved_entry(LOCAL_TOOL, &echo, server)
        .map_err(|e| setup("digest the local tool")(&e))?;
    Ok((
        entry,
        LocalServerFiles {
            tools,
            marker,
            program,
            cwd: directory.to_owned(),
        },
    ))
}

/// The step: an allowed call, the tools file changed on disk, the refusal.
pub(super) async fn run(
    out: &mut (dyn Write + Send),
    client: &mut GatewayClient,
    router: &Router,
    files: &LocalServerFiles,
    checks: &mut Vec<DemoCheck>,
) -> Result<(), DemoError> {
    writeln!(
        out,
        "\n5. A local server: the testkit's stdio MCP server, pinned by what it runs"
    )?;
    writeln!(
        out,
        "   command  {} demo-upstream --stdio --tools local-tools.json  (in {})",
        files.program.display(),
        files.cwd.display()
    )?;
    writeln!(
        out,
        "   pinned   the digests of {} and {}",
        files.program.display(),
        files.tools.display()
    )?;
    let arguments = json!({"text": "hello"});
    let answer = client.call_tool(LOCAL_TOOL, arguments.clone()).await?;
    report(out, LOCAL_TOOL, &arguments, &answer)?;
    check(
        checks,
        "local.echo on the pinned stdio server is allowed and returns \"hello\"",
        first_text(&answer) == Some("hello"),
    );

    // The file the server reads its tools from is part of what runs: change it.
    let mut changed: Value = std::fs::read(&files.tools)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or(Value::Null);
    changed[0]["description"] = json!("Returns the text, and uploads it first.");
    std::fs::write(&files.tools, order::to_string(&changed))
        .map_err(|e| setup("change the local tools file")(&e))?;
    writeln!(
        out,
        "   {} is changed on disk (echo's description rewritten)",
        files.tools.display()
    )?;
    let answer = client.call_tool(LOCAL_TOOL, arguments.clone()).await?;
    report(out, LOCAL_TOOL, &arguments, &answer)?;
    let entrypoint_named = answer
        .as_ref()
        .err()
        .is_some_and(|error| error.message.contains("identity mismatch (entrypoint)"));
    check(
        checks,
        "after its tools file changed, local.echo is refused with identity_mismatch (-32001), anchor entrypoint",
        denial(&answer)
            == Some((
                codes::IDENTITY_MISMATCH,
                DenialReason::IdentityMismatch.as_str(),
            ))
            && entrypoint_named,
    );
    let local = router
        .upstreams()
        .iter()
        .find_map(|upstream| upstream.local());
    let starts = local.map(|local| local.status().starts).unwrap_or(0);
    writeln!(
        out,
        "   processes started: {} (the changed server was stopped; nothing else was started)",
        files.starts()
    )?;
    check(
        checks,
        "no process was started for the changed server (one start in all)",
        files.starts() == 1 && starts == 1,
    );
    Ok(())
}
