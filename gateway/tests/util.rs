use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// What one run of `toolgate` produced.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `toolgate ARGS` with `stdin` on its standard input.
pub fn toolgate_with_stdin(args: &[&str], stdin: &[u8]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code().unwrap(),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

pub fn toolgate(args: &[&str]) -> Run {
    toolgate_with_stdin(args, b"")
}

/// A file of the committed test material in `corpus/`, with a clear failure when it is missing.
pub fn material(relative: &str) -> String {
    let path = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus")).join(relative);
    assert!(
        path.exists(),
        "{} is missing: these tests read the test material committed under corpus/",
        path.display()
    );
    path.to_str().unwrap().to_owned()
}

/// Writes `bytes` to a file under cargo's per-test temporary directory. The file appears whole
/// (written aside, then renamed): tests running at once may write the same name, and a reader
/// must never see it half written.
pub fn temp_file(name: &str, bytes: &[u8]) -> String {
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("toolgate-cli");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let aside = dir.join(format!(".{name}.{}.{n}", std::process::id()));
    std::fs::write(&aside, bytes).unwrap();
    std::fs::rename(&aside, &path).unwrap();
    path.to_str().unwrap().to_owned()
}

/// The deepwiki catalog with one sentence appended to `ask_wiki_question`'s description.
pub fn drifted_deepwiki() -> String {
    let bytes = std::fs::read(material("catalogs/deepwiki-tools-list.json")).unwrap();
    let mut tools: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    for tool in tools.as_array_mut().unwrap() {
        if tool["name"] == "ask_wiki_question" {
            let description = tool["description"].as_str().unwrap().to_owned();
            tool["description"] = format!("{description} It answers in English.").into();
        }
    }
    temp_file(
        "deepwiki-drifted.json",
        serde_json::to_string_pretty(&tools).unwrap().as_bytes(),
    )
}

/// The measurement of a one-entry catalog (catalog-store's crate example) whose tool is named
/// `tool_name`: distinct names give distinct measurements.
pub fn example_measurement(tool_name: &str) -> catalog_store::CatalogMeasurement {
    let catalog = EXAMPLE_CATALOG.replace("crm.query", tool_name);
    catalog_store::Catalog::from_slice(catalog.as_bytes())
        .unwrap()
        .measurement()
        .clone()
}

/// The catalog of catalog-store's crate example: one valid entry.
pub const EXAMPLE_CATALOG: &str = r#"[{
    "tool_name": "crm.query",
    "upstream_name": "query",
    "server": {
        "url": "https://crm.example.com/mcp",
        "tls_fingerprint": "SHA256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"
    },
    "approved_definition": {"description": "Query CRM records", "input_schema": {"type": "object"}},
    "definition_hash": "sha256:d27e33c778705256484428f8af088870389f4e23b9cd2265971c03d9142f38d8",
    "added_at": "2026-06-01T00:00:00Z",
    "approved_by": "security@example.com"
}]"#;
