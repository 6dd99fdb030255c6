//! `toolgate identity --command -- CMD ARGS…` as a process: the resolved program, the digests to
//! pin (the program and every argument naming an existing file), and its usage errors.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use server_identity::digest_file;

use crate::e2e_support::{TOOLGATE, temp_dir};

struct Output {
    code: i32,
    stdout: String,
    stderr: String,
}

/// `toolgate identity --command ARGS…` in `cwd` with `PATH` = `path`.
fn identity(cwd: &Path, path: &str, args: &[&str]) -> Output {
    let out = Command::new(TOOLGATE)
        .args(["identity", "--command"])
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", path)
        .output()
        .unwrap();
    Output {
        code: out.status.code().unwrap(),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

fn digest(path: &Path) -> String {
    digest_file(path).unwrap().to_string()
}

#[test]
fn the_program_and_every_argument_naming_a_file_are_pinned() {
    let dir = temp_dir("identity-command");
    std::fs::write(dir.join("tools.json"), b"[]").unwrap();
    std::fs::create_dir(dir.join("a-directory")).unwrap();
    let run = identity(
        &dir,
        "/nonexistent",
        &[
            "--json",
            "--",
            TOOLGATE,
            "demo-upstream",
            "--stdio",
            "--tools",
            "tools.json",
            "a-directory",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let tools = dir.join("tools.json");
    let value: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        value,
        json!({
            "command": [TOOLGATE, "demo-upstream", "--stdio", "--tools", "tools.json", "a-directory"],
            "program": TOOLGATE,
            "cwd": dir.display().to_string(),
            "entrypoint_digests": {
                TOOLGATE: digest(Path::new(TOOLGATE)),
                tools.display().to_string(): digest(&tools),
            },
            "files": [
                {"argument": 0, "path": TOOLGATE, "digest": digest(Path::new(TOOLGATE))},
                {"argument": 4, "path": tools.display().to_string(), "digest": digest(&tools)},
            ],
            "not_files": ["demo-upstream", "--stdio", "--tools", "a-directory"],
        })
    );

    let run = identity(&dir, "/nonexistent", &["--", TOOLGATE, "tools.json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.starts_with(&format!(
            "program  {TOOLGATE}\ncwd      {}\npin      {}  {TOOLGATE}  (the program)\npin      {}  {}  \
             (argument 1, an existing file)\n",
            dir.display(),
            digest(Path::new(TOOLGATE)),
            digest(&tools),
            tools.display()
        )),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("  \"server\": {\n"), "{}", run.stdout);
}

#[test]
fn a_bare_name_is_resolved_on_path_as_the_catalog_does() {
    let dir = temp_dir("identity-command-path");
    let bin = dir.join("bin");
    std::fs::create_dir(&bin).unwrap();
    let program = bin.join("my-server");
    std::fs::write(&program, b"#!/bin/sh\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    // A relative PATH entry is skipped (it would depend on where the gateway starts).
    let path = format!("relative/bin:{}", bin.display());
    let run = identity(&dir, &path, &["--json", "--", "my-server", "stdio"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let value: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(value["program"], json!(program.display().to_string()));
    assert_eq!(
        value["entrypoint_digests"],
        json!({program.display().to_string(): digest(&program)})
    );
    let run = identity(&dir, &path, &["--", "my-server"]);
    assert!(
        run.stdout.starts_with(&format!(
            "program  {}  (resolved on PATH from \"my-server\")\n",
            program.display()
        )),
        "{}",
        run.stdout
    );
}

#[test]
fn a_program_that_cannot_be_resolved_is_a_usage_error() {
    let dir = temp_dir("identity-command-errors");
    let run = identity(&dir, "/nonexistent:relative", &["--", "no-such-server"]);
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr,
        "toolgate: \"no-such-server\" is not an executable file in any absolute PATH directory \
         (searched: /nonexistent); give an absolute path\n"
    );
    let run = identity(&dir, "/nonexistent", &["--", "./server.js"]);
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr,
        "toolgate: \"./server.js\" is a relative path: write the program as an absolute path, or \
         as a bare name to look up on PATH (the catalog resolves command[0] the same way)\n"
    );
    let missing = dir.join("missing");
    let run = identity(&dir, "/nonexistent", &["--", missing.to_str().unwrap()]);
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr,
        format!(
            "toolgate: cannot hash {}: No such file or directory (os error 2)\n",
            missing.display()
        )
    );
    // No command after `--`: clap's usage error.
    let run = identity(&dir, "/nonexistent", &[]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("--command"), "{}", run.stderr);
}
