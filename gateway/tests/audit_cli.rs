//! `toolgate audit verify`: the real binary on logs written by `toolgate::audit`; exit codes 0,
//! 1 and 2, text and JSON output, and `--catalog`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use catalog_store::{Catalog, CatalogMeasurement};
use serde_json::{Value, json};
use toolgate::audit::{AuditLog, CallRecord, Decision, DenialReason, verify_file};

use crate::util::{EXAMPLE_CATALOG, example_measurement, temp_file, toolgate, toolgate_with_stdin};

fn catalog_file() -> (String, CatalogMeasurement) {
    let path = temp_file("audit-cli-catalog.json", EXAMPLE_CATALOG.as_bytes());
    let measurement = Catalog::from_slice(EXAMPLE_CATALOG.as_bytes())
        .unwrap()
        .measurement()
        .clone();
    (path, measurement)
}

/// A log started under `catalog` with one `gateway_started` entry and four decisions.
fn write_log(name: &str, catalog: &CatalogMeasurement) -> PathBuf {
    let path = PathBuf::from(temp_file(name, b""));
    std::fs::remove_file(&path).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        tokio::time::timeout(Duration::from_secs(60), async {
            let log = AuditLog::open(&path, catalog).unwrap();
            for decision in [
                Decision::Allowed,
                Decision::Denied(DenialReason::DefinitionMismatch),
                Decision::Allowed,
                Decision::Denied(DenialReason::ToolNotInCatalog),
            ] {
                log.record(CallRecord::new("crm.query", decision))
                    .await
                    .unwrap();
            }
            log.shutdown().await;
        })
        .await
        .unwrap();
    });
    path
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn hash_of(line: &str) -> String {
    serde_json::from_str::<Value>(line).unwrap()["hash"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn a_valid_log_verifies_with_a_summary() {
    let (catalog_path, measurement) = catalog_file();
    let path = write_log("cli-valid.jsonl", &measurement);
    let measurement = measurement.digest();
    let file = path.to_str().unwrap();
    let last = hash_of(&lines(&path)[4]);
    let run = toolgate(&["audit", "verify", file]);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""));
    assert_eq!(
        run.stdout,
        format!(
            "audit log verified: {file}\n\
             entries     5 (seq 0 to 4)\n\
             first prev  {measurement} (the catalog measurement)\n\
             last hash   {last}\n\
             decisions   allowed 2, tool_not_in_catalog 1, definition_mismatch 1\n\
             started     seq 0 (line 1) with catalog {measurement}\n"
        )
    );
    let run = toolgate(&["audit", "verify", "--catalog", &catalog_path, file]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(run.stdout.contains(&format!(
        "first prev  {measurement} (the measurement of --catalog)\n"
    )));

    let run = toolgate(&[
        "audit",
        "verify",
        "--json",
        "--catalog",
        &catalog_path,
        file,
    ]);
    assert_eq!(run.code, 0);
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        out,
        json!({
            "file": file,
            "verified": true,
            "entries": 5,
            "first_prev": measurement.to_string(),
            "last_hash": last,
            "catalog": measurement.to_string(),
            "decisions": {"allowed": 2, "tool_not_in_catalog": 1, "definition_mismatch": 1},
            "starts": [{"line": 1, "seq": 0, "catalog": measurement.to_string()}],
            "catalog_loads": [],
            "preallocated_bytes": 0,
        })
    );
}

#[test]
fn an_edited_entry_exits_1_naming_it() {
    let (_, measurement) = catalog_file();
    let path = write_log("cli-edited.jsonl", &measurement);
    let mut text = lines(&path);
    let found = hash_of(&text[2]);
    text[2] = text[2].replace(
        r#""decision":"definition_mismatch""#,
        r#""decision":"allowed""#,
    );
    std::fs::write(
        &path,
        text.iter()
            .map(|line| format!("{line}\n"))
            .collect::<String>(),
    )
    .unwrap();
    let offset: usize = text[..2].iter().map(|line| line.len() + 1).sum();
    let expected = match verify_file(&path, None) {
        Err(toolgate::audit::VerifyError::Broken(entry)) => match entry.problem {
            toolgate::audit::ChainProblem::HashMismatch { expected, .. } => expected,
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    };
    let file = path.to_str().unwrap();
    let run = toolgate(&["audit", "verify", file]);
    assert_eq!((run.code, run.stderr.as_str()), (1, ""));
    assert_eq!(
        run.stdout,
        format!(
            "audit log broken: {file}\n\
             line 3 (seq 2): hash does not recompute: expected {expected} (the SHA-256 of the entry's RFC 8785 \
             form without `hash`), found {found}; the entry was changed after it was written\n\
             the 2 entries before line 3 verify (bytes 0 to {offset})\n"
        )
    );
    let run = toolgate(&["audit", "verify", "--json", file]);
    assert_eq!(run.code, 1);
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(out["verified"], false);
    assert_eq!(
        out["broken"],
        json!({
            "line": 3,
            "seq": 2,
            "offset": offset,
            "problem": "hash_mismatch",
            "message": out["broken"]["message"],
            "expected": expected.to_string(),
            "found": found,
        })
    );
}

#[test]
fn a_removed_and_a_reordered_entry_exit_1() {
    let (_, measurement) = catalog_file();
    let path = write_log("cli-removed.jsonl", &measurement);
    let original = lines(&path);
    let file = path.to_str().unwrap().to_owned();
    let write = |text: &[String]| {
        std::fs::write(
            &path,
            text.iter().map(|l| format!("{l}\n")).collect::<String>(),
        )
        .unwrap()
    };

    let mut removed = original.clone();
    removed.remove(3);
    write(&removed);
    let run = toolgate(&["audit", "verify", &file]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stdout.lines().nth(1).unwrap(),
        "line 4 (seq 4): expected seq 3, found seq 4: an entry before this one is missing, or entries were reordered"
    );

    let mut swapped = original.clone();
    swapped.swap(1, 2);
    write(&swapped);
    let run = toolgate(&["audit", "verify", "--json", &file]);
    assert_eq!(run.code, 1);
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        (
            &out["broken"]["problem"],
            &out["broken"]["line"],
            &out["broken"]["expected"],
            &out["broken"]["found"]
        ),
        (&json!("seq_mismatch"), &json!(2), &json!(1), &json!(2))
    );

    let bytes = original
        .iter()
        .map(|l| format!("{l}\n"))
        .collect::<String>();
    std::fs::write(&path, &bytes.as_bytes()[..bytes.len() - 5]).unwrap();
    let run = toolgate(&["audit", "verify", &file]);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("line 5: the last line is incomplete ("),
        "{}",
        run.stdout
    );
}

#[test]
fn another_catalog_exits_1() {
    let (catalog_path, measurement) = catalog_file();
    let measurement = measurement.digest();
    let other_measurement = example_measurement("another.catalog");
    let other = other_measurement.digest();
    let path = write_log("cli-other-catalog.jsonl", &other_measurement);
    let run = toolgate(&[
        "audit",
        "verify",
        "--catalog",
        &catalog_path,
        path.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stdout.lines().nth(1).unwrap(),
        format!(
            "line 1 (seq 0): the first entry's prev is not the catalog's measurement: expected {measurement}, \
             found {other}; the log was started with another catalog, or its first entries were removed"
        )
    );
}

#[test]
fn unreadable_inputs_exit_2() {
    let missing = temp_file("cli-missing-dir-marker", b"");
    let missing = format!("{missing}.does-not-exist.jsonl");
    let run = toolgate(&["audit", "verify", &missing]);
    assert_eq!((run.code, run.stdout.as_str()), (2, ""));
    assert!(
        run.stderr
            .starts_with(&format!("toolgate: cannot read the audit log {missing}: ")),
        "{}",
        run.stderr
    );

    let (_, measurement) = catalog_file();
    let path = write_log("cli-missing-catalog.jsonl", &measurement);
    let run = toolgate(&[
        "audit",
        "verify",
        "--catalog",
        &missing,
        path.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .starts_with("toolgate: --catalog: cannot read the catalog "),
        "{}",
        run.stderr
    );

    let run = toolgate(&["audit", "verify"]);
    assert_eq!(run.code, 2);
}

#[test]
fn a_log_on_standard_input_verifies_and_broken_input_exits_1() {
    let (_, measurement) = catalog_file();
    let path = write_log("cli-stdin.jsonl", &measurement);
    let bytes = std::fs::read(&path).unwrap();
    let last = hash_of(&lines(&path)[4]);
    let run = toolgate_with_stdin(&["audit", "verify", "-"], &bytes);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""));
    assert!(
        run.stdout
            .starts_with("audit log verified: <standard input>\nentries     5 (seq 0 to 4)\n"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains(&format!("last hash   {last}\n")));

    // Cut in the middle of the last line: torn, exit 1, named as standard input.
    let torn = &bytes[..bytes.len() - 10];
    let run = toolgate_with_stdin(&["audit", "verify", "--json", "-"], torn);
    assert_eq!(run.code, 1);
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(out["file"], "<standard input>");
    assert_eq!(out["broken"]["problem"], "torn_line");
}

#[test]
fn expect_head_passes_at_the_head_and_exits_1_naming_both_otherwise() {
    let (_, measurement) = catalog_file();
    let path = write_log("cli-head.jsonl", &measurement);
    let file = path.to_str().unwrap();
    let all = lines(&path);
    let last = hash_of(&all[4]);
    let run = toolgate(&["audit", "verify", "--expect-head", &last, file]);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{}", run.stdout);

    // The last entry removed: the chain still verifies, but it no longer ends at the head.
    let cut: String = all[..4].iter().map(|line| format!("{line}\n")).collect();
    let earlier = hash_of(&all[3]);
    let run = toolgate_with_stdin(
        &["audit", "verify", "--expect-head", &last, "-"],
        cut.as_bytes(),
    );
    assert_eq!((run.code, run.stderr.as_str()), (1, ""));
    assert_eq!(
        run.stdout,
        format!(
            "audit log head mismatch: <standard input>\nthe chain verifies but ends at {earlier} \
             (after 4 entries), not at the expected head {last}: entries after that head were \
             removed or rewritten, or the head was recorded from another log\n"
        )
    );
    let run = toolgate_with_stdin(
        &["audit", "verify", "--json", "--expect-head", &last, "-"],
        cut.as_bytes(),
    );
    assert_eq!(run.code, 1);
    assert_eq!(
        serde_json::from_str::<Value>(&run.stdout).unwrap(),
        json!({
            "file": "<standard input>",
            "verified": false,
            "entries": 4,
            "head_mismatch": {"expected": last, "found": earlier},
        })
    );
    // An empty log ends nowhere.
    let run = toolgate_with_stdin(&["audit", "verify", "--expect-head", &last, "-"], b"");
    assert_eq!(run.code, 1);
    assert!(
        run.stdout
            .contains("ends at (no entries) (after 0 entries)"),
        "{}",
        run.stdout
    );

    // A head that is not a hash is a usage error.
    let run = toolgate(&["audit", "verify", "--expect-head", "latest", file]);
    assert_eq!((run.code, run.stdout.as_str()), (2, ""));
    assert!(
        run.stderr
            .starts_with("toolgate: --expect-head \"latest\" is not a hash: "),
        "{}",
        run.stderr
    );
}
