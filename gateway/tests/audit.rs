//! `toolgate::audit`: the hash chain across records and restarts, tampering caught with its exact
//! message, no argument value in the file, group commit under concurrency.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::util::example_measurement;
use catalog_store::CatalogMeasurement;
use jcs_digest::{Digest, canonicalize, parse_strict};
use serde_json::{Value, json};
use toolgate::audit::{
    ArgumentKey, AuditError, AuditLog, AuditOptions, BrokenEntry, CallRecord, ChainProblem,
    Decision, DenialReason, ObservedIdentity, VerifyError, arguments_digest, verify_file,
};

/// A fresh path under cargo's per-test temporary directory.
pub fn log_path(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("toolgate-audit");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    path
}

/// The measurement of catalog A, which the logs here are started with.
pub fn measurement_a() -> CatalogMeasurement {
    example_measurement("catalog.a")
}

fn measurement_b() -> CatalogMeasurement {
    example_measurement("catalog.b")
}

pub fn catalog_a() -> Digest {
    measurement_a().digest()
}

fn catalog_b() -> Digest {
    measurement_b().digest()
}

/// Runs `future` on a two-thread runtime, failing the test after 60 s instead of hanging.
pub fn run<T>(future: impl std::future::Future<Output = T>) -> T {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        tokio::time::timeout(Duration::from_secs(60), future)
            .await
            .expect("test timed out")
    })
}

/// The `i`-th record of a varied run: every decision appears.
pub fn sample(i: usize) -> CallRecord {
    let decisions = [
        Decision::Allowed,
        Decision::Denied(DenialReason::DefinitionMismatch),
        Decision::Allowed,
        Decision::Denied(DenialReason::ToolNotInCatalog),
        Decision::Denied(DenialReason::IdentityMismatch),
        Decision::Denied(DenialReason::UpstreamUnavailable),
        Decision::Denied(DenialReason::UpstreamError),
    ];
    CallRecord {
        upstream_name: Some("ask_wiki_question".into()),
        upstream_url: Some("https://127.0.0.1:8443/mcp".into()),
        detail: format!("call {i}"),
        arguments: Some(
            arguments_digest(&json!({"question": format!("q{i}")}))
                .unwrap()
                .into(),
        ),
        request_id: Some(json!(i)),
        latency: Duration::from_micros(100 + i as u64),
        ..CallRecord::new("wiki.ask", decisions[i % decisions.len()])
    }
}

/// Writes a log of one `gateway_started` entry and `calls` decisions; returns its lines.
pub fn write_log(path: &Path, calls: usize) -> Vec<String> {
    let _ = std::fs::remove_file(path);
    run(async {
        let log = AuditLog::open(path, &measurement_a()).unwrap();
        for i in 0..calls {
            log.record(sample(i)).await.unwrap();
        }
        log.shutdown().await;
    });
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The hash a line's contents recompute to, computed here from the definition (RFC 8785 of the
/// entry without `hash`, SHA-256) rather than through the crate's verifier.
fn recomputed_hash(line: &str) -> Digest {
    let mut entry = parse_strict(line.as_bytes()).unwrap();
    entry.as_object_mut().unwrap().remove("hash");
    Digest::of(&canonicalize(&entry).unwrap())
}

fn stated(line: &str, member: &str) -> Digest {
    let entry: Value = serde_json::from_str(line).unwrap();
    entry[member].as_str().unwrap().parse().unwrap()
}

fn broken(path: &Path) -> BrokenEntry {
    match verify_file(path, None) {
        Err(VerifyError::Broken(entry)) => entry,
        other => panic!("expected a broken chain, got {other:?}"),
    }
}

fn write_lines(path: &Path, lines: &[String]) {
    std::fs::write(
        path,
        lines
            .iter()
            .map(|line| format!("{line}\n"))
            .collect::<String>(),
    )
    .unwrap();
}

#[test]
fn a_run_of_records_verifies_and_is_counted() {
    let path = log_path("run.jsonl");
    let lines = write_log(&path, 14);
    let summary = verify_file(&path, Some(&catalog_a())).unwrap();
    assert_eq!(summary.entries(), 15);
    assert_eq!(summary.first_prev(), Some(catalog_a()));
    assert_eq!(summary.last_hash(), Some(stated(&lines[14], "hash")));
    let counts: Vec<(String, u64)> = summary
        .decisions()
        .iter()
        .map(|(decision, count)| (decision.to_string(), *count))
        .collect();
    let expected = [
        ("allowed", 4),
        ("tool_not_in_catalog", 2),
        ("identity_mismatch", 2),
        ("definition_mismatch", 2),
        ("upstream_unavailable", 2),
        ("upstream_error", 2),
    ];
    assert_eq!(counts, expected.map(|(d, c)| (d.to_owned(), c)));
    assert_eq!(summary.starts().len(), 1);
    assert_eq!(
        (
            summary.starts()[0].line,
            summary.starts()[0].seq,
            summary.starts()[0].catalog
        ),
        (1, 0, catalog_a())
    );
    // Each line's prev is the hash of the line before; the first one's is the catalog's.
    let mut prev = catalog_a();
    for (seq, line) in lines.iter().enumerate() {
        let entry: Value = serde_json::from_str(line).unwrap();
        assert_eq!(entry["seq"], json!(seq));
        assert_eq!(stated(line, "prev"), prev);
        assert_eq!(stated(line, "hash"), recomputed_hash(line));
        prev = stated(line, "hash");
    }
}

#[test]
fn a_decision_entry_records_every_member_in_reading_order() {
    let path = log_path("members.jsonl");
    let expected = Digest::of(b"approved");
    let observed = Digest::of(b"live");
    let arguments = arguments_digest(&json!({"q": 1})).unwrap();
    run(async {
        let log = AuditLog::open(&path, &measurement_a()).unwrap();
        let receipt = log
            .record(CallRecord {
                upstream_name: Some("ask_wiki_question".into()),
                upstream_url: Some("https://127.0.0.1:8443/mcp".into()),
                identity: Some(Arc::new(ObservedIdentity {
                    fingerprints: vec![format!("SHA256:{}", "ab".repeat(32))],
                    spiffe_id: Some("spiffe://example.org/wiki".to_owned()),
                    ..ObservedIdentity::default()
                })),
                expected_definition: Some(expected),
                observed_definition: Some(observed),
                detail: "the live definition changed".to_owned(),
                arguments: Some(arguments.into()),
                session_id: Some("session-1".to_owned()),
                request_id: Some(json!("req-7")),
                principal: r#"User::"alice""#.to_owned(),
                latency: Duration::from_micros(1234),
                ..CallRecord::new(
                    "wiki.ask",
                    Decision::Denied(DenialReason::DefinitionMismatch),
                )
            })
            .await
            .unwrap();
        assert_eq!(receipt.seq(), 1);
        log.shutdown().await;
    });
    let text = std::fs::read_to_string(&path).unwrap();
    let line = text.lines().nth(1).unwrap();
    let entry: Value = serde_json::from_str(line).unwrap();
    let time = entry["time"].as_str().unwrap();
    // RFC 3339, UTC, microseconds: 2026-11-30T08:40:50.123456Z
    assert_eq!(
        (time.len(), &time[10..11], &time[19..20], &time[26..]),
        (27, "T", ".", "Z")
    );
    let started: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let expected_line = json!({
        "seq": 1,
        "time": time,
        "event": "tools/call",
        "principal": r#"User::"alice""#,
        "tool": "wiki.ask",
        "upstream_name": "ask_wiki_question",
        "upstream_url": "https://127.0.0.1:8443/mcp",
        "identity": {"fingerprints": [format!("SHA256:{}", "ab".repeat(32))], "spiffe_id": "spiffe://example.org/wiki"},
        "expected_definition": expected.to_string(),
        "observed_definition": observed.to_string(),
        "decision": "definition_mismatch",
        "detail": "the live definition changed",
        "arguments_digest": arguments.to_string(),
        "session_id": "session-1",
        "request_id": "req-7",
        "latency_us": 1234,
        "prev": started["hash"],
        "hash": recomputed_hash(line).to_string(),
    });
    assert_eq!(entry, expected_line);
    // Reading order in the file: seq first, then time and event, prev and hash last.
    let order = [
        "\"seq\"",
        "\"time\"",
        "\"event\"",
        "\"principal\"",
        "\"tool\"",
        "\"decision\"",
        "\"latency_us\"",
        "\"prev\"",
        "\"hash\"",
    ];
    let positions: Vec<usize> = order.iter().map(|name| line.find(name).unwrap()).collect();
    assert!(positions.windows(2).all(|pair| pair[0] < pair[1]), "{line}");
    assert_eq!(
        started,
        json!({
            "seq": 0,
            "time": started["time"],
            "event": "gateway_started",
            "catalog": catalog_a().to_string(),
            "previous_catalog": null,
            "detail": "new audit log",
            "prev": catalog_a().to_string(),
            "hash": recomputed_hash(text.lines().next().unwrap()).to_string(),
        })
    );
}

#[test]
fn argument_values_never_reach_the_file() {
    let path = log_path("secret.jsonl");
    let secret = "hunter2-the-secret-argument-value";
    let arguments = json!({"password": secret, "nested": [{"token": secret}]});
    run(async {
        let log = AuditLog::open(&path, &measurement_a()).unwrap();
        let record = CallRecord {
            arguments: Some(arguments_digest(&arguments).unwrap().into()),
            ..CallRecord::new("vault.login", Decision::Allowed)
        };
        log.record(record).await.unwrap();
        log.shutdown().await;
    });
    let bytes = std::fs::read(&path).unwrap();
    assert!(
        !bytes
            .windows(secret.len())
            .any(|window| window == secret.as_bytes())
    );
    assert!(!bytes.windows(8).any(|window| window == b"password"));
    let entry: Value =
        serde_json::from_slice(bytes.split(|b| *b == b'\n').nth(1).unwrap()).unwrap();
    // The digest is the RFC 8785 one: members sorted, no whitespace.
    let canonical = format!(r#"{{"nested":[{{"token":"{secret}"}}],"password":"{secret}"}}"#);
    assert_eq!(
        entry["arguments_digest"],
        json!(Digest::of(canonical.as_bytes()).to_string())
    );
}

#[test]
fn a_restart_appends_and_continues_the_chain() {
    let path = log_path("restart.jsonl");
    let first = write_log(&path, 3);
    let second_hash = run(async {
        let log = AuditLog::open(&path, &measurement_a()).unwrap();
        let receipt = log.record(sample(3)).await.unwrap();
        assert_eq!(receipt.seq(), 5);
        log.shutdown().await;
        receipt.hash()
    });
    let lines: Vec<String> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(lines.len(), 6);
    assert_eq!(&lines[..4], &first[..]);
    let started: Value = serde_json::from_str(&lines[4]).unwrap();
    assert_eq!(started["event"], "gateway_started");
    assert_eq!(started["seq"], 4);
    assert_eq!(
        started["prev"],
        json!(stated(&first[3], "hash").to_string())
    );
    assert_eq!(started["catalog"], json!(catalog_a().to_string()));
    assert_eq!(started["previous_catalog"], json!(catalog_a().to_string()));
    assert_eq!(started["detail"], "appending after 4 entries; same catalog");
    let summary = verify_file(&path, Some(&catalog_a())).unwrap();
    assert_eq!(
        (summary.entries(), summary.last_hash()),
        (6, Some(second_hash))
    );
    assert_eq!(
        summary
            .starts()
            .iter()
            .map(|start| start.seq)
            .collect::<Vec<_>>(),
        [0, 4]
    );
}

#[test]
fn a_restart_with_another_catalog_is_recorded_and_the_first_prev_stays() {
    let path = log_path("recatalog.jsonl");
    write_log(&path, 2);
    run(async {
        let log = AuditLog::open(&path, &measurement_b()).unwrap();
        log.record(sample(0)).await.unwrap();
        log.shutdown().await;
    });
    let lines: Vec<String> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let started: Value = serde_json::from_str(&lines[3]).unwrap();
    assert_eq!(started["catalog"], json!(catalog_b().to_string()));
    assert_eq!(started["previous_catalog"], json!(catalog_a().to_string()));
    assert_eq!(
        started["detail"],
        "appending after 3 entries; the catalog changed"
    );
    let summary = verify_file(&path, Some(&catalog_a())).unwrap();
    assert_eq!(summary.first_prev(), Some(catalog_a()));
    assert_eq!(summary.catalog_in_force(), Some(catalog_b()));
    // The chain's origin is catalog A's measurement, not B's.
    match verify_file(&path, Some(&catalog_b())) {
        Err(VerifyError::Broken(entry)) => {
            assert_eq!(
                entry.problem,
                ChainProblem::FirstPrevNotCatalog {
                    expected: catalog_b(),
                    found: catalog_a()
                }
            );
            assert_eq!(
                entry.to_string(),
                format!(
                    "line 1 (seq 0): the first entry's prev is not the catalog's measurement: expected {}, \
                     found {}; the log was started with another catalog, or its first entries were removed",
                    catalog_b(),
                    catalog_a()
                )
            );
        }
        other => panic!("expected a first-prev mismatch, got {other:?}"),
    }
}

#[test]
fn an_edited_field_is_caught_with_both_hashes() {
    let path = log_path("edited.jsonl");
    let mut lines = write_log(&path, 4);
    let original = stated(&lines[2], "hash");
    assert!(lines[2].contains(r#""decision":"definition_mismatch""#));
    lines[2] = lines[2].replace(
        r#""decision":"definition_mismatch""#,
        r#""decision":"allowed""#,
    );
    write_lines(&path, &lines);
    let recomputed = recomputed_hash(&lines[2]);
    let entry = broken(&path);
    assert_eq!(
        entry.problem,
        ChainProblem::HashMismatch {
            expected: recomputed,
            found: original
        }
    );
    assert_eq!(
        entry.to_string(),
        format!(
            "line 3 (seq 2): hash does not recompute: expected {recomputed} (the SHA-256 of the entry's \
             RFC 8785 form without `hash`), found {original}; the entry was changed after it was written"
        )
    );
}

#[test]
fn an_edit_with_a_recomputed_hash_is_caught_at_the_next_entry() {
    let path = log_path("forged.jsonl");
    let mut lines = write_log(&path, 4);
    let original = stated(&lines[2], "hash");
    let mut entry: Value = serde_json::from_str(&lines[2]).unwrap();
    entry["decision"] = json!("allowed");
    entry.as_object_mut().unwrap().remove("hash");
    let forged = Digest::of(&canonicalize(&entry).unwrap());
    entry["hash"] = json!(forged.to_string());
    lines[2] = entry.to_string();
    write_lines(&path, &lines);
    let entry = broken(&path);
    assert_eq!(
        entry.problem,
        ChainProblem::PrevMismatch {
            expected: forged,
            found: original
        }
    );
    assert_eq!(
        entry.to_string(),
        format!(
            "line 4 (seq 3): prev does not match the previous entry's hash: expected {forged}, found \
             {original}; the entry before this one was removed, replaced or reordered"
        )
    );
}

#[test]
fn an_edited_hash_is_caught() {
    let path = log_path("edited-hash.jsonl");
    let mut lines = write_log(&path, 4);
    let real = stated(&lines[1], "hash");
    let fake = Digest::of(b"another hash");
    lines[1] = lines[1].replace(&real.to_string(), &fake.to_string());
    write_lines(&path, &lines);
    let entry = broken(&path);
    assert_eq!((entry.line, entry.seq), (2, Some(1)));
    assert_eq!(
        entry.problem,
        ChainProblem::HashMismatch {
            expected: real,
            found: fake
        }
    );
}

#[test]
fn a_removed_line_is_caught_as_a_seq_gap() {
    let path = log_path("removed.jsonl");
    let mut lines = write_log(&path, 4);
    let offset: usize = lines[..2].iter().map(|line| line.len() + 1).sum();
    lines.remove(2);
    write_lines(&path, &lines);
    let entry = broken(&path);
    assert_eq!((entry.line, entry.offset), (3, offset as u64));
    assert_eq!(
        entry.problem,
        ChainProblem::SeqMismatch {
            expected: 2,
            found: 3
        }
    );
    assert_eq!(
        entry.to_string(),
        "line 3 (seq 3): expected seq 2, found seq 3: an entry before this one is missing, or entries were reordered"
    );
    // The first line removed: the log no longer starts at seq 0.
    lines.remove(0);
    write_lines(&path, &lines);
    assert_eq!(
        broken(&path).to_string(),
        "line 1 (seq 1): expected seq 0, found seq 1: an entry before this one is missing, or entries were reordered"
    );
}

#[test]
fn swapped_lines_are_caught() {
    let path = log_path("swapped.jsonl");
    let mut lines = write_log(&path, 4);
    lines.swap(2, 3);
    write_lines(&path, &lines);
    let entry = broken(&path);
    assert_eq!(
        entry.problem,
        ChainProblem::SeqMismatch {
            expected: 2,
            found: 3
        }
    );
    assert_eq!(entry.line, 3);
    // Swapped and renumbered: the seq follows, the prev does not.
    let mut lines = write_log(&path, 4);
    lines.swap(2, 3);
    let renumber = |line: &str, from: u64, to: u64| {
        line.replacen(
            &format!("{{\"seq\":{from},"),
            &format!("{{\"seq\":{to},"),
            1,
        )
    };
    lines[2] = renumber(&lines[2], 3, 2);
    lines[3] = renumber(&lines[3], 2, 3);
    write_lines(&path, &lines);
    let entry = broken(&path);
    assert_eq!(entry.code_and_line(), ("hash_mismatch", 3));
}

/// `(problem code, line)`, to keep the assertions short.
trait CodeAndLine {
    fn code_and_line(&self) -> (&'static str, u64);
}

impl CodeAndLine for BrokenEntry {
    fn code_and_line(&self) -> (&'static str, u64) {
        (self.problem.code(), self.line)
    }
}

#[test]
fn a_truncated_last_line_is_reported_and_the_log_is_not_reopened() {
    let path = log_path("torn.jsonl");
    let lines = write_log(&path, 3);
    let bytes = std::fs::read(&path).unwrap();
    let torn_at = bytes.len() - 20;
    std::fs::write(&path, &bytes[..torn_at]).unwrap();
    let entry = broken(&path);
    let last_start: usize = lines[..3].iter().map(|line| line.len() + 1).sum();
    assert_eq!(
        (entry.line, entry.offset, entry.seq),
        (4, last_start as u64, None)
    );
    let torn_length = (torn_at - last_start) as u64;
    assert_eq!(
        entry.problem,
        ChainProblem::TornLine {
            length: torn_length
        }
    );
    assert_eq!(
        entry.to_string(),
        format!(
            "line 4: the last line is incomplete ({torn_length} bytes and no newline at the end of the file): \
             the writer stopped in the middle of an entry (a crash or a full disk); the entries before it verify"
        )
    );
    // The gateway refuses to append and says how to cut the tail; the file is left as it was.
    let error = AuditLog::open(&path, &measurement_a()).unwrap_err();
    assert!(
        matches!(
            error,
            AuditError::TornTail {
                line: 4,
                entries: 3,
                ..
            }
        ),
        "{error:?}"
    );
    let shown = path.display();
    assert_eq!(
        error.to_string(),
        format!(
            "the audit log {shown} ends in an incomplete line (line 4, {torn_length} bytes from byte {last_start}): \
             the gateway stopped while writing it, so no client was answered for that entry; the 3 entries \
             before it verify. The gateway does not cut a log by itself: save the tail (`tail -c {torn_length} \
             {shown}`), then cut it (`truncate -s {last_start} {shown}`) and start again"
        )
    );
    assert_eq!(std::fs::read(&path).unwrap(), &bytes[..torn_at]);
    // Cut as the message says, the log opens and continues.
    std::fs::write(&path, &bytes[..last_start]).unwrap();
    run(async {
        AuditLog::open(&path, &measurement_a())
            .unwrap()
            .shutdown()
            .await
    });
    assert_eq!(verify_file(&path, Some(&catalog_a())).unwrap().entries(), 4);
}

#[test]
fn a_broken_log_is_not_appended_to() {
    let path = log_path("broken-open.jsonl");
    let mut lines = write_log(&path, 2);
    lines.remove(1);
    write_lines(&path, &lines);
    let before = std::fs::read(&path).unwrap();
    let error = AuditLog::open(&path, &measurement_a()).unwrap_err();
    let shown = path.display();
    assert_eq!(
        error.to_string(),
        format!(
            "the audit log {shown} does not verify, so the gateway will not append to it: line 2 (seq 2): \
             expected seq 1, found seq 2: an entry before this one is missing, or entries were reordered; \
             run `toolgate audit verify {shown}`, keep the file as evidence, and start with a new log"
        )
    );
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn lines_that_are_not_entries_are_named() {
    let path = log_path("garbage.jsonl");
    let lines = write_log(&path, 2);
    let cases: [(&str, &str); 6] = [
        ("not json", "not_json"),
        (r#"{"seq":1,"seq":1}"#, "duplicate_member"),
        ("[1,2]", "not_an_entry"),
        (r#"{"seq":1,"prev":"x"}"#, "not_an_entry"),
        ("", "not_json"),
        (r#"{"seq":1,"hash":"sha256:00"}"#, "not_an_entry"),
    ];
    for (replacement, code) in cases {
        let mut edited = lines.clone();
        edited[1] = replacement.to_owned();
        write_lines(&path, &edited);
        assert_eq!(broken(&path).code_and_line(), (code, 2), "{replacement:?}");
    }
    let mut edited = lines.clone();
    edited[1] = r#"{"seq":1,"seq":1}"#.to_owned();
    write_lines(&path, &edited);
    assert_eq!(
        broken(&path).to_string(),
        "line 2: duplicate member \"seq\" in the object at JSON Pointer \"\": the gateway never writes one, \
         and two readers could see different entries"
    );
    edited[1] = r#"{"seq":1}"#.to_owned();
    write_lines(&path, &edited);
    assert_eq!(
        broken(&path).to_string(),
        "line 2 (seq 1): not an audit entry: member \"hash\" is missing"
    );
    edited[1] = r#"{"seq":1,}"#.to_owned();
    write_lines(&path, &edited);
    assert_eq!(
        broken(&path).to_string(),
        "line 2: not valid JSON at column 10: expected a member name (a string in double quotes), found '}'"
    );
}

#[test]
fn an_empty_log_verifies_as_empty() {
    let path = log_path("empty.jsonl");
    std::fs::write(&path, b"").unwrap();
    let summary = verify_file(&path, Some(&catalog_a())).unwrap();
    assert_eq!(
        (summary.entries(), summary.first_prev(), summary.last_hash()),
        (0, None, None)
    );
}

#[test]
fn concurrent_records_all_land_in_one_chain_with_group_commit() {
    let path = log_path("concurrent.jsonl");
    let tasks = 64;
    let per_task = 16;
    let (log_entries, syncs, mut seqs) = run(async {
        let log = Arc::new(AuditLog::open(&path, &measurement_a()).unwrap());
        let mut handles = Vec::new();
        for task in 0..tasks {
            let log = Arc::clone(&log);
            handles.push(tokio::spawn(async move {
                let mut seqs = Vec::new();
                for i in 0..per_task {
                    seqs.push(log.record(sample(task * per_task + i)).await.unwrap().seq());
                }
                seqs
            }));
        }
        let mut seqs = Vec::new();
        for handle in handles {
            seqs.extend(handle.await.unwrap());
        }
        log.shutdown().await;
        (log.entries_written(), log.syncs(), seqs)
    });
    let calls = (tasks * per_task) as u64;
    seqs.sort_unstable();
    assert_eq!(seqs, (1..=calls).collect::<Vec<_>>());
    assert_eq!(log_entries, calls + 1);
    assert!(
        syncs < log_entries,
        "{syncs} syncs for {log_entries} entries: no group commit"
    );
    let summary = verify_file(&path, Some(&catalog_a())).unwrap();
    assert_eq!(summary.entries(), calls + 1);
    assert_eq!(summary.decisions().values().sum::<u64>(), calls);
}

#[test]
fn records_after_shutdown_are_refused() {
    let path = log_path("closed.jsonl");
    run(async {
        let log = AuditLog::open(&path, &measurement_a()).unwrap();
        log.shutdown().await;
        log.shutdown().await;
        let error = log.record(sample(0)).await.unwrap_err();
        assert!(
            matches!(error, AuditError::Closed { reason: None, .. }),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            format!("the audit log {} is closed", path.display())
        );
    });
    assert_eq!(verify_file(&path, None).unwrap().entries(), 1);
}

#[test]
fn long_texts_are_cut_and_the_entry_still_verifies() {
    let path = log_path("long.jsonl");
    run(async {
        let log = AuditLog::open(&path, &measurement_a()).unwrap();
        let record = CallRecord {
            detail: "é".repeat(100_000),
            request_id: Some(json!({"not": "a valid id"})),
            ..CallRecord::new(
                "x".repeat(100_000),
                Decision::Denied(DenialReason::ToolNotInCatalog),
            )
        };
        log.record(record).await.unwrap();
        log.shutdown().await;
    });
    let text = std::fs::read_to_string(&path).unwrap();
    let entry: Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
    assert_eq!(
        entry["tool"],
        json!(format!("{}…[99488 more bytes]", "x".repeat(512)))
    );
    assert_eq!(
        entry["detail"],
        json!(format!("{}…[197952 more bytes]", "é".repeat(1024)))
    );
    assert_eq!(entry["request_id"], json!(r#"{"not":"a valid id"}"#));
    assert_eq!(verify_file(&path, None).unwrap().entries(), 2);
}

#[test]
fn an_overlong_line_is_refused_without_reading_it_whole() {
    let path = log_path("overlong.jsonl");
    let mut lines = write_log(&path, 1);
    lines.push(format!(
        "{{\"seq\":2,\"detail\":\"{}\"}}",
        "x".repeat(100_000)
    ));
    write_lines(&path, &lines);
    let entry = broken(&path);
    assert_eq!(entry.problem, ChainProblem::LineTooLong { limit: 65_536 });
    assert_eq!(
        entry.to_string(),
        "line 3: the line is longer than 65536 bytes, which no audit entry is"
    );
}

#[test]
fn a_log_that_cannot_be_opened_or_read_is_an_io_error() {
    let path = log_path("no-such-directory").join("audit.jsonl");
    let error = AuditLog::open(&path, &measurement_a()).unwrap_err();
    assert!(
        matches!(error, AuditError::Io { action: "open", .. }),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        format!(
            "cannot open the audit log {}: No such file or directory (os error 2); check the disk and the \
             file's permissions",
            path.display()
        )
    );
    let directory = log_path("a-directory");
    std::fs::create_dir_all(&directory).unwrap();
    match verify_file(&directory, None) {
        Err(error @ VerifyError::Io { .. }) => assert_eq!(
            error.to_string(),
            format!(
                "cannot read the audit log {}: Is a directory (os error 21)",
                directory.display()
            )
        ),
        other => panic!("expected an I/O error, got {other:?}"),
    }
}

#[test]
fn an_entry_is_in_the_file_when_record_returns() {
    let path = log_path("durable.jsonl");
    run(async {
        let log = AuditLog::open(&path, &measurement_a()).unwrap();
        for i in 0..3 {
            let receipt = log.record(sample(i)).await.unwrap();
            // Before shutdown, before any other record: the file already verifies up to it.
            let summary = verify_file(&path, Some(&catalog_a())).unwrap();
            assert_eq!(
                (summary.entries(), summary.last_hash()),
                (receipt.seq() + 1, Some(receipt.hash()))
            );
        }
        assert_eq!((log.entries_written(), log.syncs()), (4, 4));
        log.shutdown().await;
    });
}

#[test]
fn a_second_writer_on_one_log_is_refused_naming_the_holder() {
    let path = log_path("locked.jsonl");
    run(async {
        let first = AuditLog::open(&path, &measurement_a()).unwrap();
        let error = AuditLog::open(&path, &measurement_a()).unwrap_err();
        // Both writers are this process: /proc/locks names it.
        let pid = std::process::id();
        assert!(
            matches!(error, AuditError::Locked { holder: Some(holder), .. } if holder == pid),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            format!(
                "the audit log {} is in use by process {pid} (it holds the file's lock, per \
                 /proc/locks): one gateway writes a log (two would break its chain); stop that \
                 gateway, or give this one another --audit file",
                path.display()
            )
        );
        // The refused writer wrote nothing; after a shutdown the lock is free at once.
        first.shutdown().await;
        AuditLog::open(&path, &measurement_a())
            .unwrap()
            .shutdown()
            .await;
    });
    assert_eq!(verify_file(&path, Some(&catalog_a())).unwrap().entries(), 2);
}

/// The holder is named even while other files are locked and unlocked all the time (other
/// gateways, other tests in this process). The kernel prints `/proc/locks` a page at a time
/// from a list those calls change, so a single read misses a held lock now and then (here 1
/// to 3 lookups in a hundred, when the lookup read it once); this makes the table span pages,
/// churns locks on two threads, and asks for the holder two thousand times.
#[test]
fn the_holder_is_named_while_other_files_are_locked_and_unlocked() {
    use std::sync::atomic::{AtomicBool, Ordering};

    /// Stops the churning threads however the counting ends, so that a failure does not hang.
    struct StopOnDrop<'a>(&'a AtomicBool);
    impl Drop for StopOnDrop<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }

    let path = log_path("locked-churn.jsonl");
    let dir = path.parent().unwrap().join("lock-churn");
    std::fs::create_dir_all(&dir).unwrap();
    let open = |name: String| std::fs::File::create(dir.join(name)).unwrap();
    // Held throughout, so that the table is longer than one page.
    let held: Vec<std::fs::File> = (0..1_000).map(|i| open(format!("held-{i}"))).collect();
    for file in &held {
        file.lock().unwrap();
    }
    let stop = AtomicBool::new(false);
    let pid = std::process::id();
    run(async {
        let first = AuditLog::open(&path, &measurement_a()).unwrap();
        let unnamed = std::thread::scope(|scope| {
            for thread in 0..2 {
                let files: Vec<std::fs::File> = (0..50)
                    .map(|i| open(format!("churn-{thread}-{i}")))
                    .collect();
                let stop = &stop;
                scope.spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        for file in &files {
                            file.lock().unwrap();
                        }
                        for file in &files {
                            file.unlock().unwrap();
                        }
                    }
                });
            }
            let _stop = StopOnDrop(&stop);
            (0..2_000)
                .filter(|_| {
                    let error = AuditLog::open(&path, &measurement_a()).unwrap_err();
                    !matches!(error, AuditError::Locked { holder: Some(holder), .. } if holder == pid)
                })
                .count()
        });
        assert_eq!(unnamed, 0, "refusals that did not name this process");
        first.shutdown().await;
    });
}

#[test]
fn a_write_past_its_deadline_fails_closed_and_is_cut_from_the_log() {
    let path = log_path("deadline.jsonl");
    let answered = run(async {
        let mut options = AuditOptions::new();
        // A nanosecond: the timer fires at its next tick (a millisecond), which a write and
        // sync beats now and then; the first record that does not is the one under test.
        options.write_deadline(Duration::from_nanos(1));
        let log = AuditLog::open_with(&path, &measurement_a(), &options).unwrap();
        let mut answered = 0;
        let error = loop {
            match log.record(sample(answered)).await {
                Ok(_) => answered += 1,
                Err(error) => break error,
            }
            assert!(answered < 10_000, "no write ever missed a 1 ns deadline");
        };
        let shown = path.display();
        assert_eq!(
            error.to_string(),
            format!(
                "the audit log {shown} did not write and sync the entry within 1ns (check the \
                 disk); the call was refused, and the log refuses every later call"
            )
        );
        // Every later record is refused at once, with the reason.
        let later = log.record(sample(0)).await.unwrap_err();
        assert_eq!(
            later.to_string(),
            format!("the audit log {shown} is closed: {error}")
        );
        log.shutdown().await;
        answered
    });
    // The late entry was cut when its write finished: the log holds its start and the
    // records that were answered, and verifies.
    let summary = verify_file(&path, Some(&catalog_a())).unwrap();
    assert_eq!(summary.entries(), 1 + answered as u64);
}

#[test]
fn keyed_argument_digests_are_hmac_sha256_of_the_canonical_form() {
    let path = log_path("keyed.jsonl");
    let key = b"0123456789abcdef0123456789abcdef";
    run(async {
        let mut options = AuditOptions::new();
        options.argument_key(ArgumentKey::from_bytes(key).unwrap());
        let log = AuditLog::open_with(&path, &measurement_a(), &options).unwrap();
        let arguments = log.arguments_digest(&json!({"q": "x"}));
        log.record(CallRecord {
            arguments: Some(arguments),
            ..CallRecord::new("wiki.ask", Decision::Allowed)
        })
        .await
        .unwrap();
        // An integer beyond 2^53 has no RFC 8785 form: no digest, and the reason.
        let huge: Value = serde_json::from_str(r#"{"n": 9007199254740993}"#).unwrap();
        let arguments = log.arguments_digest(&huge);
        log.record(CallRecord {
            arguments: Some(arguments),
            ..CallRecord::new("wiki.ask", Decision::Allowed)
        })
        .await
        .unwrap();
        log.shutdown().await;
    });
    let text = std::fs::read_to_string(&path).unwrap();
    let entries: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    // Computed independently: Python `hmac.new(key, b'{"q":"x"}', hashlib.sha256).hexdigest()`.
    assert_eq!(
        entries[1]["arguments_digest"],
        "hmac-sha256:848d215a9827f4e9192798b23b270f2d2727546777435b3b92398ee045f1f294"
    );
    assert_eq!(entries[1].get("arguments_not_digested"), None);
    assert_eq!(entries[2]["arguments_digest"], Value::Null);
    assert_eq!(
        entries[2]["arguments_not_digested"],
        "integer 9007199254740993 at JSON Pointer \"/n\" is outside ±(2^53−1), so the \
         arguments have no RFC 8785 form to digest; they were carried as sent"
    );
    assert_eq!(verify_file(&path, Some(&catalog_a())).unwrap().entries(), 3);
}

#[test]
fn a_reload_entry_continues_the_chain_and_must_name_the_catalog_in_force() {
    run(async {
        let path = log_path("reload-chain");
        let log = AuditLog::open(&path, &measurement_a()).unwrap();
        log.record(sample(0)).await.unwrap();
        log.record_catalog_loaded(catalog_a(), catalog_b())
            .await
            .unwrap();
        log.record(sample(1)).await.unwrap();
        log.shutdown().await;
        drop(log);
        let summary = verify_file(&path, Some(&catalog_a())).unwrap();
        assert_eq!(summary.entries(), 4);
        assert_eq!(summary.catalog_loads().len(), 1);
        assert_eq!(summary.catalog_loads()[0].seq, 2);
        assert_eq!(summary.catalog_in_force(), Some(catalog_b()));
        // A restart under B appends after the reload: "same catalog".
        let log = AuditLog::open(&path, &measurement_b()).unwrap();
        log.shutdown().await;
        drop(log);
        let entries: Vec<Value> = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        assert_eq!(
            entries[4]["detail"],
            "appending after 4 entries; same catalog"
        );

        // A reload that names another catalog than the one in force does not verify.
        let path = log_path("reload-wrong-previous");
        let log = AuditLog::open(&path, &measurement_a()).unwrap();
        log.record_catalog_loaded(catalog_b(), catalog_b())
            .await
            .unwrap();
        log.shutdown().await;
        drop(log);
        let entry = broken(&path);
        assert_eq!(entry.line, 2);
        assert_eq!(
            entry.problem,
            ChainProblem::NotAnEntry {
                reason: format!(
                    "a reload from catalog {}, but {} was in force",
                    catalog_b(),
                    catalog_a()
                )
            }
        );
    });
}

/// `line` with its member `name` set to `value` (removed when `None`) and its hash recomputed.
fn rewritten(line: &str, name: &str, value: Option<Value>) -> String {
    let mut entry: Value = serde_json::from_str(line).unwrap();
    let object = entry.as_object_mut().unwrap();
    match value {
        Some(value) => object.insert(name.to_owned(), value),
        None => object.remove(name),
    };
    object.remove("hash");
    let hash = Digest::of(&canonicalize(&entry).unwrap()).to_string();
    entry["hash"] = json!(hash);
    entry.to_string()
}

#[test]
fn entries_written_before_principals_still_verify_and_a_principal_must_be_text() {
    let path = log_path("principal.jsonl");
    let lines = write_log(&path, 1);
    assert_eq!(
        serde_json::from_str::<Value>(&lines[1]).unwrap()["principal"],
        "anonymous"
    );
    // A log from before docs/design.md §7: no `principal` member.
    let old = rewritten(&lines[1], "principal", None);
    write_lines(&path, &[lines[0].clone(), old]);
    assert_eq!(verify_file(&path, Some(&catalog_a())).unwrap().entries(), 2);
    let numbered = rewritten(&lines[1], "principal", Some(json!(7)));
    write_lines(&path, &[lines[0].clone(), numbered]);
    let entry = broken(&path);
    assert_eq!(
        entry.problem,
        ChainProblem::NotAnEntry {
            reason: "member \"principal\" is not a string".to_owned()
        }
    );
}
