//! The audit log under a real `toolgate serve` process: one writer per log, a full disk,
//! `--audit-key`, and arguments without an RFC 8785 form.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use toolgate::mcp::ProtocolVersion;

use crate::e2e_support::{
    ServeProcess, TOOLGATE, call_entries, denial, read_entries, run, temp_dir, wait_bounded,
};
use crate::util::{EXAMPLE_CATALOG, toolgate};

/// A catalog whose one upstream is never contacted: every call here names a tool outside it.
fn catalog(dir: &Path) -> PathBuf {
    let path = dir.join("catalog.json");
    std::fs::write(&path, EXAMPLE_CATALOG).unwrap();
    path
}

#[test]
fn a_second_serve_on_one_audit_file_exits_2_naming_the_lock_holder() {
    let dir = temp_dir("audit-lock");
    let catalog = catalog(&dir);
    let audit = dir.join("audit.jsonl");
    run(async move {
        let mut first = ServeProcess::spawn(&catalog, &audit, &[]);
        first.connect(ProtocolVersion::V2025_11_25).await;
        let second = Command::new(TOOLGATE)
            .args(["serve", "--catalog", catalog.to_str().unwrap()])
            .args([
                "--listen",
                "127.0.0.1:0",
                "--audit",
                audit.to_str().unwrap(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (code, stderr) = tokio::task::spawn_blocking(move || {
            let mut second = second;
            wait_bounded(&mut second, Duration::from_secs(20))
        })
        .await
        .unwrap();
        assert_eq!(code, 2, "{stderr}");
        assert!(
            stderr.contains(&format!(
                "toolgate: the audit log {} is in use by process {} (it holds the file's lock, \
                 per /proc/locks): one gateway writes a log",
                audit.display(),
                first.pid()
            )),
            "{stderr}"
        );
        let (code, _) = first.terminate().await;
        assert_eq!(code, 0);
        // The refused gateway wrote nothing: one run, one start.
        let summary = toolgate::audit::verify_file(&audit, None).unwrap();
        assert_eq!(summary.starts().len(), 1);
    });
}

#[test]
fn serve_with_prewritten_zeros_ends_the_log_in_zeros_until_it_stops() {
    let dir = temp_dir("audit-zeros");
    let catalog = catalog(&dir);
    let audit = dir.join("audit.jsonl");
    run(async move {
        let mut serve = ServeProcess::spawn(&catalog, &audit, &["--audit-prewrite-zeros"]);
        serve.connect(ProtocolVersion::V2025_11_25).await;
        let running = toolgate::audit::verify_file(&audit, None).unwrap();
        assert_eq!(
            (running.entries(), running.preallocated_bytes()),
            (1, toolgate::audit::DEFAULT_PREALLOCATE)
        );
        assert_eq!(
            std::fs::metadata(&audit).unwrap().len(),
            running.bytes() + toolgate::audit::DEFAULT_PREALLOCATE
        );
        let (code, _) = serve.terminate().await;
        assert_eq!(code, 0);
        let stopped = toolgate::audit::verify_file(&audit, None).unwrap();
        assert_eq!((stopped.entries(), stopped.preallocated_bytes()), (1, 0));
        assert_eq!(std::fs::metadata(&audit).unwrap().len(), stopped.bytes());
    });
}

/// A tmpfs mounted for one test, unmounted when dropped.
pub(crate) struct SmallDisk {
    pub(crate) mount_point: PathBuf,
}

impl SmallDisk {
    pub(crate) fn mount(size: &str) -> SmallDisk {
        let mount_point = temp_dir("small-disk");
        let output = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&mount_point)
            .output();
        match output {
            Ok(output) if output.status.success() => SmallDisk { mount_point },
            Ok(output) => panic!(
                "could not mount a {size} tmpfs at {} (`mount -t tmpfs -o size={size}` exited \
                 {:?}: {}); this test fills a real small disk and needs root, as CI runs it",
                mount_point.display(),
                output.status.code(),
                String::from_utf8_lossy(&output.stderr).trim()
            ),
            Err(error) => panic!(
                "could not mount a {size} tmpfs: cannot run `mount` ({error}); this test fills a \
                 real small disk and needs root, as CI runs it"
            ),
        }
    }

    /// Writes a file until the disk is full.
    pub(crate) fn fill(&self) {
        use std::io::Write;
        let mut filler = std::fs::File::create(self.mount_point.join("filler")).unwrap();
        let block = [0u8; 512];
        loop {
            match filler.write(&block) {
                Ok(0) => break,
                Ok(_) => {}
                Err(error) => {
                    assert_eq!(error.raw_os_error(), Some(28), "{error}"); // ENOSPC
                    break;
                }
            }
        }
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        // Lazily: a gateway left running by a failed assertion must not keep it mounted.
        let _ = Command::new("umount")
            .arg("-l")
            .arg(&self.mount_point)
            .status();
    }
}

#[test]
fn a_full_disk_refuses_calls_and_leaves_a_log_that_verifies() {
    let disk = SmallDisk::mount("64k");
    let dir = temp_dir("audit-full-disk");
    let catalog = catalog(&dir);
    let audit = disk.mount_point.join("audit.jsonl");
    let fill = &disk;
    run(async move {
        let mut serve = ServeProcess::spawn(&catalog, &audit, &[]);
        let mut client = serve.connect(ProtocolVersion::V2025_11_25).await;
        fill.fill();
        // The log's last page still has room for a few entries; then a write fails part way.
        let mut denied = 0;
        let refusal = loop {
            let answer = client
                .call_tool("no.such.tool", json!({"q": "x".repeat(200)}))
                .await
                .unwrap();
            match answer {
                Err(error) if error.code == -32603 => break error,
                answer => {
                    assert_eq!(denial(&answer), (-32602, "tool_not_in_catalog".to_owned()));
                    denied += 1;
                    assert!(denied < 100, "64 KiB never filled up");
                }
            }
        };
        assert!(
            refusal.message.starts_with(&format!(
                "Internal error: the audit log cannot record decisions (cannot write the audit \
                 log {}: No space left on device (os error 28)",
                audit.display()
            )),
            "{}",
            refusal.message
        );
        assert_eq!(refusal.data, None);
        // Every later call is refused too, naming the cut.
        let later = client
            .call_tool("no.such.tool", json!({}))
            .await
            .unwrap()
            .unwrap_err();
        assert_eq!(later.code, -32603);
        let length = std::fs::metadata(&audit).unwrap().len();
        let shown = audit.display();
        assert_eq!(
            later.message,
            format!(
                "Internal error: the audit log cannot record decisions (the audit log {shown} is \
                 closed: cannot write the audit log {shown}: No space left on device (os error \
                 28); check the disk and the file's permissions; the audit log was cut back to \
                 {length} bytes, the end of its last complete entry (seq {denied}), so it \
                 verifies); the call to \"no.such.tool\" was refused and not forwarded"
            )
        );
        let (code, stderr) = serve.terminate().await;
        assert_eq!(code, 0, "{stderr}");
        assert!(
            stderr.contains(&format!(
                "(seq {denied}), so it verifies; every later call will be refused"
            )),
            "{stderr}"
        );
        // The file ends at a complete entry: the verifier accepts it, with every answered call.
        let run = toolgate(&["audit", "verify", audit.to_str().unwrap()]);
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
        assert!(
            run.stdout
                .contains(&format!("tool_not_in_catalog {denied}\n")),
            "{}",
            run.stdout
        );
    });
}

#[test]
fn serve_with_an_audit_key_records_hmac_digests_and_carries_large_integers() {
    let dir = temp_dir("audit-key");
    let catalog = catalog(&dir);
    let audit = dir.join("audit.jsonl");
    let key = dir.join("audit.key");
    std::fs::write(&key, b"0123456789abcdef0123456789abcdef").unwrap();
    let short = dir.join("short.key");
    std::fs::write(&short, b"0123456789abcdef").unwrap();

    // A short key is a usage error, before anything is served.
    let refused = toolgate(&[
        "serve",
        "--catalog",
        catalog.to_str().unwrap(),
        "--audit",
        audit.to_str().unwrap(),
        "--audit-key",
        short.to_str().unwrap(),
    ]);
    assert_eq!(refused.code, 2);
    assert_eq!(
        refused.stderr.lines().last().unwrap(),
        format!(
            "toolgate: --audit-key {0}: the file has 16 bytes, fewer than the 32 an HMAC-SHA-256 \
             key needs; make one with `head -c 32 /dev/urandom > {0}`",
            short.display()
        )
    );

    run(async move {
        let mut serve =
            ServeProcess::spawn(&catalog, &audit, &["--audit-key", key.to_str().unwrap()]);
        for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
            let mut client = serve.connect(version).await;
            let answer = client
                .call_tool("no.such.tool", json!({"q": "x"}))
                .await
                .unwrap();
            assert_eq!(denial(&answer), (-32602, "tool_not_in_catalog".to_owned()));
            // 2^53 + 1 is carried, not refused: the call reaches its decision.
            let huge: Value = serde_json::from_str(r#"{"n": 9007199254740993}"#).unwrap();
            let answer = client.call_tool("no.such.tool", huge).await.unwrap();
            assert_eq!(denial(&answer), (-32602, "tool_not_in_catalog".to_owned()));
        }
        let (code, stderr) = serve.terminate().await;
        assert_eq!(code, 0, "{stderr}");
        let calls = call_entries(&read_entries(&audit));
        assert_eq!(calls.len(), 4);
        for pair in calls.chunks(2) {
            // Python: hmac.new(key, b'{"q":"x"}', hashlib.sha256).hexdigest()
            assert_eq!(
                pair[0]["arguments_digest"],
                "hmac-sha256:848d215a9827f4e9192798b23b270f2d2727546777435b3b92398ee045f1f294"
            );
            assert_eq!(pair[1]["arguments_digest"], Value::Null);
            assert_eq!(
                pair[1]["arguments_not_digested"],
                "integer 9007199254740993 at JSON Pointer \"/n\" is outside ±(2^53−1), so the \
                 arguments have no RFC 8785 form to digest; they were carried as sent"
            );
        }
    });
}
