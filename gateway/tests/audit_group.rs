//! The audit log's group commit led by its callers, and its preallocated file: blocks reserved
//! ahead while a gateway runs and released at shutdown; zeros a crash leaves after the entries
//! accepted, and every way a crash can leave them torn.

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use toolgate::audit::{
    AuditError, AuditLog, AuditOptions, ChainProblem, DEFAULT_PREALLOCATE, VerifyError, verify_file,
};

use crate::audit::{catalog_a, log_path, measurement_a, run, sample, write_log};
use crate::audit_serve::SmallDisk;
use crate::util::toolgate;

fn file_length(path: &std::path::Path) -> u64 {
    std::fs::metadata(path).unwrap().len()
}

fn append(path: &std::path::Path, bytes: &[u8]) {
    let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    file.write_all(bytes).unwrap();
}

/// Bytes the file system has allocated to `path`.
fn allocated(path: &std::path::Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).unwrap().blocks() * 512
}

#[test]
fn blocks_are_reserved_ahead_while_open_and_released_at_shutdown() {
    let path = log_path("preallocated.jsonl");
    run(async {
        let log = AuditLog::open(&path, &measurement_a()).unwrap();
        for i in 0..3 {
            log.record(sample(i)).await.unwrap();
        }
        // The file is the entries, nothing after them; the blocks of one step are reserved
        // past them (whole blocks: at least the step).
        let open = verify_file(&path, Some(&catalog_a())).unwrap();
        assert_eq!((open.entries(), open.preallocated_bytes()), (4, 0));
        assert_eq!(file_length(&path), open.bytes());
        assert!(
            allocated(&path) >= DEFAULT_PREALLOCATE,
            "{} bytes allocated",
            allocated(&path)
        );
        log.shutdown().await;
        let closed = verify_file(&path, Some(&catalog_a())).unwrap();
        assert_eq!((closed.entries(), closed.bytes()), (4, file_length(&path)));
        assert!(
            allocated(&path) < DEFAULT_PREALLOCATE,
            "{} bytes still allocated",
            allocated(&path)
        );
    });
}

#[test]
fn preallocation_off_reserves_nothing() {
    let path = log_path("not-preallocated.jsonl");
    run(async {
        let mut options = AuditOptions::new();
        options.preallocate(0);
        let log = AuditLog::open_with(&path, &measurement_a(), &options).unwrap();
        log.record(sample(0)).await.unwrap();
        let summary = verify_file(&path, Some(&catalog_a())).unwrap();
        assert_eq!(
            (summary.entries(), summary.bytes()),
            (2, file_length(&path))
        );
        assert!(
            allocated(&path) < DEFAULT_PREALLOCATE,
            "{}",
            allocated(&path)
        );
        log.shutdown().await;
    });
}

#[test]
fn a_disk_without_room_to_reserve_is_written_without_it() {
    let disk = SmallDisk::mount("64k");
    let path = disk.mount_point.join("audit.jsonl");
    run(async {
        // One step (1 MiB) does not fit on 64 KiB: preallocation is turned off and the log is
        // written as without it.
        let log = AuditLog::open(&path, &measurement_a()).unwrap();
        for i in 0..3 {
            log.record(sample(i)).await.unwrap();
        }
        let summary = verify_file(&path, Some(&catalog_a())).unwrap();
        assert_eq!(
            (summary.entries(), summary.bytes()),
            (4, file_length(&path))
        );
        assert!(allocated(&path) < 64 * 1024, "{}", allocated(&path));
        log.shutdown().await;
    });
}

#[test]
fn prewritten_zeros_end_the_file_while_it_runs_and_shutdown_cuts_them() {
    let path = log_path("prewritten-zeros.jsonl");
    run(async {
        let mut options = AuditOptions::new();
        options.prewritten_zeros(true);
        let log = AuditLog::open_with(&path, &measurement_a(), &options).unwrap();
        // The `gateway_started` line, then one step of zeros written past it.
        let started = verify_file(&path, Some(&catalog_a())).unwrap();
        let first_end = started.bytes();
        assert_eq!(
            (started.entries(), started.preallocated_bytes()),
            (1, DEFAULT_PREALLOCATE)
        );
        assert_eq!(file_length(&path), first_end + DEFAULT_PREALLOCATE);
        for i in 0..3 {
            log.record(sample(i)).await.unwrap();
        }
        // The entries were written over the zeros: the file's length did not change.
        let open = verify_file(&path, Some(&catalog_a())).unwrap();
        assert_eq!(file_length(&path), first_end + DEFAULT_PREALLOCATE);
        assert_eq!(
            (open.entries(), open.bytes() + open.preallocated_bytes()),
            (4, first_end + DEFAULT_PREALLOCATE)
        );
        assert!(open.bytes() > first_end, "{}", open.bytes());
        log.shutdown().await;
        let closed = verify_file(&path, Some(&catalog_a())).unwrap();
        assert_eq!(
            (
                closed.entries(),
                closed.bytes(),
                closed.preallocated_bytes()
            ),
            (4, open.bytes(), 0)
        );
        assert_eq!(file_length(&path), open.bytes());
    });
}

#[test]
fn a_step_of_zeros_that_does_not_fit_is_cut_and_the_log_written_without_it() {
    let disk = SmallDisk::mount("64k");
    let path = disk.mount_point.join("audit.jsonl");
    run(async {
        let mut options = AuditOptions::new();
        options.prewritten_zeros(true);
        // 1 MiB of zeros does not fit on 64 KiB: what was written of it is cut off again, and
        // the log goes on without preallocation.
        let log = AuditLog::open_with(&path, &measurement_a(), &options).unwrap();
        for i in 0..3 {
            log.record(sample(i)).await.unwrap();
        }
        let summary = verify_file(&path, Some(&catalog_a())).unwrap();
        assert_eq!(
            (
                summary.entries(),
                summary.bytes(),
                summary.preallocated_bytes()
            ),
            (4, file_length(&path), 0)
        );
        assert!(allocated(&path) < 64 * 1024, "{}", allocated(&path));
        log.shutdown().await;
        assert_eq!(file_length(&path), summary.bytes());
    });
}

#[test]
fn zeros_left_by_a_crash_verify_and_the_next_gateway_writes_over_them() {
    let path = log_path("crash-zeros.jsonl");
    write_log(&path, 2);
    let entries_end = file_length(&path);
    append(&path, &[0; 5000]);
    let summary = verify_file(&path, Some(&catalog_a())).unwrap();
    assert_eq!(
        (
            summary.entries(),
            summary.bytes(),
            summary.preallocated_bytes()
        ),
        (3, entries_end, 5000)
    );
    let shown = path.display().to_string();
    let verified = toolgate(&["audit", "verify", &shown]);
    assert_eq!(verified.code, 0, "{}", verified.stderr);
    assert!(
        verified.stdout.contains(
            "\nzeros       5000 bytes after the last entry (space reserved ahead of the \
             entries: a running gateway's --audit-prewrite-zeros, or allocated space a crash \
             left unwritten)\n"
        ),
        "{}",
        verified.stdout
    );
    run(async {
        let log = AuditLog::open(&path, &measurement_a()).unwrap();
        log.record(sample(0)).await.unwrap();
        log.shutdown().await;
    });
    let summary = verify_file(&path, Some(&catalog_a())).unwrap();
    assert_eq!((summary.entries(), summary.preallocated_bytes()), (5, 0));
    assert_eq!(summary.starts().len(), 2);
}

/// A gateway refuses to start on the log at `path`, whose three entries end at `valid` and
/// are followed by `length` torn bytes.
fn refused_as_torn(path: &std::path::Path, valid: u64, length: u64) {
    let error = AuditLog::open(path, &measurement_a()).unwrap_err();
    assert!(
        matches!(
            error,
            AuditError::TornTail { line: 4, valid_bytes, torn_bytes, entries: 3, .. }
                if valid_bytes == valid && torn_bytes == length
        ),
        "{error:?}"
    );
}

#[test]
fn part_of_a_line_then_zeros_is_a_torn_line() {
    let path = log_path("torn-zeros.jsonl");
    write_log(&path, 2);
    let valid = file_length(&path);
    let partial = br#"{"seq":3,"time":"2026"#;
    append(&path, partial);
    append(&path, &[0; 3000]);
    let length = partial.len() as u64 + 3000;
    match verify_file(&path, None) {
        Err(VerifyError::Broken(entry)) => {
            assert_eq!((entry.line, entry.offset, entry.seq), (4, valid, None));
            assert_eq!(entry.problem, ChainProblem::TornLine { length });
            assert_eq!(entry.problem.code(), "torn_line");
        }
        other => panic!("expected a torn line, got {other:?}"),
    }
    refused_as_torn(&path, valid, length);
}

#[test]
fn zeros_then_other_bytes_are_a_torn_preallocated_tail() {
    let path = log_path("torn-preallocated.jsonl");
    let lines = write_log(&path, 2);
    let valid = file_length(&path);
    // A crash after a later page of a group reached the disk and an earlier one did not.
    append(&path, &[0; 100]);
    append(&path, format!("{}\n", &lines[1][10..]).as_bytes());
    append(&path, &[0; 50]);
    let length = 100 + (lines[1].len() - 10 + 1) as u64 + 50;
    match verify_file(&path, None) {
        Err(VerifyError::Broken(entry)) => {
            assert_eq!((entry.line, entry.offset, entry.seq), (4, valid, None));
            assert_eq!(entry.problem, ChainProblem::TornPreallocatedTail { length });
            assert_eq!(entry.problem.code(), "torn_preallocated_tail");
            assert_eq!(
                entry.to_string(),
                format!(
                    "line 4: the last {length} bytes are neither complete entries nor zeros of \
                     allocated space: the writer stopped while writing into that space (a \
                     crash); the entries before them verify"
                )
            );
        }
        other => panic!("expected a torn preallocated tail, got {other:?}"),
    }
    refused_as_torn(&path, valid, length);
    let verified = toolgate(&["audit", "verify", path.to_str().unwrap()]);
    assert_eq!(verified.code, 1, "{}{}", verified.stdout, verified.stderr);
}

#[test]
fn a_nul_inside_a_complete_line_is_not_an_entry() {
    let path = log_path("nul-in-line.jsonl");
    let lines = write_log(&path, 1);
    let mut edited = lines[1].clone().into_bytes();
    edited[20] = 0;
    let mut bytes = format!("{}\n", lines[0]).into_bytes();
    bytes.extend_from_slice(&edited);
    bytes.push(b'\n');
    std::fs::write(&path, &bytes).unwrap();
    match verify_file(&path, None) {
        Err(VerifyError::Broken(entry)) => {
            assert_eq!((entry.line, entry.problem.code()), (2, "not_json"));
        }
        other => panic!("expected a broken line, got {other:?}"),
    }
}

#[test]
fn callers_that_go_away_while_queued_leave_a_chain_that_verifies() {
    let path = log_path("cancelled.jsonl");
    let (written, answered) = run(async {
        let log = Arc::new(AuditLog::open(&path, &measurement_a()).unwrap());
        let mut handles = Vec::new();
        for task in 0..32 {
            let log = Arc::clone(&log);
            handles.push(tokio::spawn(async move {
                let mut answered = 0u64;
                for i in 0..20 {
                    let record = log.record(sample(task * 20 + i));
                    if i % 3 == 0 {
                        // Dropped at its first wait: queued, perhaps handed the lead, gone.
                        let _ = tokio::time::timeout(Duration::ZERO, record).await;
                    } else {
                        record.await.unwrap();
                        answered += 1;
                    }
                }
                answered
            }));
        }
        let mut answered = 0;
        for handle in handles {
            answered += handle.await.unwrap();
        }
        log.shutdown().await;
        (log.entries_written(), answered)
    });
    let summary = verify_file(&path, Some(&catalog_a())).unwrap();
    // Every answered record is in the chain, and so is every queued one whose caller left
    // (written with a later group, or by the shutdown).
    assert_eq!(summary.entries(), written);
    assert!(
        summary.entries() > answered,
        "{written} written, {answered} answered"
    );
    assert_eq!(summary.preallocated_bytes(), 0);
}

#[test]
fn a_current_thread_runtime_leads_groups_on_its_one_thread() {
    let path = log_path("current-thread.jsonl");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let seqs = runtime.block_on(async {
        let log = Arc::new(AuditLog::open(&path, &measurement_a()).unwrap());
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let log = Arc::clone(&log);
                tokio::spawn(async move { log.record(sample(i)).await.unwrap().seq() })
            })
            .collect();
        let mut seqs = Vec::new();
        for handle in handles {
            seqs.push(handle.await.unwrap());
        }
        log.shutdown().await;
        seqs.sort_unstable();
        seqs
    });
    assert_eq!(seqs, (1..=8).collect::<Vec<_>>());
    assert_eq!(verify_file(&path, Some(&catalog_a())).unwrap().entries(), 9);
}
