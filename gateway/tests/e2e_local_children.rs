//! Bad children and the process rules, with `LocalUpstream` alone (no gateway): garbage, a
//! 100 MB line, silence, exit at once and the backoff, a stderr flood, SIGTERM ignored, a clean
//! stop, a call never outrun by a restart, and pinned files changed under a running child.

use std::time::Duration;

use serde_json::json;
use toolgate::local::{LocalOptions, LocalUpstream};
use toolgate::mcp::RawJson;
use toolgate::upstream::UpstreamError;

use crate::e2e_local::{Files, label, process_exists, quick_options};
use crate::e2e_support::run;

/// A `LocalUpstream` alone for the stdio server with `extra`.
fn local(files: &Files, extra: &[&str], options: LocalOptions) -> LocalUpstream {
    LocalUpstream::new(files.command(extra), options)
}

#[test]
fn a_child_that_writes_garbage_fails_its_start_as_upstream_error() {
    run(async {
        let files = Files::new("local-garbage");
        let extra = ["--misbehave", "garbage"];
        let upstream = local(&files, &extra, quick_options());
        let error = upstream.list_tools().await.unwrap_err();
        assert_eq!(error.reason(), "upstream_error");
        let UpstreamError::Malformed { method, detail, .. } = &error else {
            panic!("{error:?}");
        };
        assert_eq!(method, "server/discover");
        assert!(
            detail.starts_with("it wrote a line that is not JSON-RPC (")
                && detail.ends_with("): this is not JSON-RPC"),
            "{detail}"
        );
        assert_eq!(files.starts().len(), 1);
        // The failed start was stopped, not left behind.
        assert_eq!(upstream.status().pid, None);
        assert_eq!(upstream.shutdown().await, None);
    });
}

#[test]
fn a_child_that_writes_a_100_mb_line_is_refused_as_too_large() {
    run(async {
        let files = Files::new("local-huge-line");
        let extra = ["--misbehave", "huge-line"];
        let options = LocalOptions {
            max_response_bytes: 1024 * 1024,
            // Reading 100 MB takes a while: the probe must wait for its (oversized) answer.
            discover_timeout: Duration::from_secs(20),
            request_timeout: Duration::from_secs(20),
            ..quick_options()
        };
        let upstream = local(&files, &extra, options);
        let error = upstream.list_tools().await.unwrap_err();
        assert_eq!(
            error,
            UpstreamError::ResponseTooLarge {
                url: label(&files, &extra),
                method: "server/discover".into(),
                limit: 1024 * 1024,
            }
        );
        assert_eq!(error.reason(), "upstream_error");
        upstream.shutdown().await;
    });
}

#[test]
fn a_child_that_never_answers_hits_the_deadline() {
    run(async {
        let files = Files::new("local-silent");
        let extra = ["--misbehave", "silent"];
        let options = LocalOptions {
            request_timeout: Duration::from_millis(500),
            ..quick_options()
        };
        let upstream = local(&files, &extra, options);
        let error = upstream.list_tools().await.unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "upstream {} is unavailable: no answer within 500 ms; the upstream is slow or \
                 hung (raise the timeout if it is expected to be this slow)",
                label(&files, &extra)
            )
        );
        assert_eq!(error.reason(), "upstream_unavailable");
        assert_eq!(upstream.status().pid, None);
        let pid = files.starts()[0].clone();
        assert!(
            !process_exists(&pid),
            "the silent child {pid} was left running"
        );
    });
}

#[test]
fn a_child_that_exits_at_once_is_started_again_only_after_the_backoff() {
    run(async {
        let files = Files::new("local-exit");
        let extra = ["--misbehave", "exit-at-once"];
        let options = LocalOptions {
            restart_backoff: Duration::from_secs(3600),
            ..quick_options()
        };
        let upstream = local(&files, &extra, options);
        let error = upstream.list_tools().await.unwrap_err();
        assert_eq!(
            error,
            UpstreamError::ConnectionClosed {
                url: label(&files, &extra),
                method: "server/discover".into(),
                detail: "the server process exited (exit status: 3)".into(),
            }
        );
        assert_eq!(error.reason(), "upstream_unavailable");
        // The next start is an hour away, longer than a request may wait: refused at once,
        // and nothing is started.
        let error = upstream.list_tools().await.unwrap_err();
        let text = error.to_string();
        let prefix = format!(
            "upstream {} is unavailable: cannot connect: 1 failed starts in a row (the last: \
             {}); the next start is in ",
            label(&files, &extra),
            UpstreamError::ConnectionClosed {
                url: label(&files, &extra),
                method: "server/discover".into(),
                detail: "the server process exited (exit status: 3)".into(),
            }
        );
        assert!(text.starts_with(&prefix), "{text}");
        assert_eq!(files.starts().len(), 1);
        assert_eq!(upstream.status().starts, 1);
    });
}

#[test]
fn a_short_backoff_is_waited_out_and_the_child_started_again() {
    run(async {
        let files = Files::new("local-exit-retry");
        let extra = ["--misbehave", "exit-at-once"];
        let upstream = local(&files, &extra, quick_options());
        for _ in 0..3 {
            let error = upstream.list_tools().await.unwrap_err();
            assert_eq!(error.reason(), "upstream_unavailable");
        }
        // One start per request, each after the doubling delay (100, 200 ms).
        assert_eq!(files.starts().len(), 3);
    });
}

#[test]
fn a_child_that_floods_stderr_is_rate_limited_and_keeps_serving() {
    run(async {
        let files = Files::new("local-stderr-flood");
        let extra = ["--misbehave", "stderr-flood"];
        let options = LocalOptions {
            stderr_lines_per_second: 10,
            ..quick_options()
        };
        let upstream = local(&files, &extra, options);
        let listed = upstream.list_tools().await.unwrap();
        assert_eq!(listed.len(), 3);
        crate::e2e_support::eventually("stderr lines dropped", || {
            upstream.status().stderr_lines_dropped > 1000
        })
        .await;
        // Still answering while the flood goes on.
        let generation = *upstream.invalidations().borrow();
        let result = upstream
            .call_tool(
                "echo",
                Some(RawJson::from_value(&json!({"text": "x"}))),
                None,
                generation,
            )
            .await
            .unwrap();
        assert_eq!(result.to_value().unwrap()["content"][0]["text"], "x");
        let status = upstream.status();
        assert!(status.stderr_lines_logged >= 1, "{status:?}");
        assert_eq!(upstream.shutdown().await.as_deref(), Some("exit status: 0"));
    });
}

#[test]
fn a_child_that_ignores_sigterm_is_killed() {
    run(async {
        let files = Files::new("local-sigterm");
        let extra = ["--misbehave", "ignore-sigterm"];
        let upstream = local(&files, &extra, quick_options());
        assert_eq!(upstream.list_tools().await.unwrap().len(), 3);
        let pid = files.starts()[0].clone();
        // stdin closed: it lingers; SIGTERM: ignored; SIGKILL.
        assert_eq!(
            upstream.shutdown().await.as_deref(),
            Some("signal: 9 (SIGKILL)")
        );
        assert!(!process_exists(&pid));
        // Shut down: nothing is started again.
        let error = upstream.list_tools().await.unwrap_err();
        assert!(
            error
                .to_string()
                .contains("cannot connect: the gateway is shutting down"),
            "{error}"
        );
        assert_eq!(files.starts().len(), 1);
    });
}

#[test]
fn a_well_behaved_child_exits_when_its_stdin_closes() {
    run(async {
        let files = Files::new("local-stop");
        let upstream = local(&files, &[], quick_options());
        assert_eq!(upstream.list_tools().await.unwrap().len(), 3);
        assert_eq!(upstream.shutdown().await.as_deref(), Some("exit status: 0"));
    });
}

#[test]
fn a_call_after_a_restart_is_not_sent_to_the_new_process_unchecked() {
    run(async {
        let files = Files::new("local-outrun");
        let upstream = local(&files, &["--crash-after", "1"], quick_options());
        let before = *upstream.invalidations().borrow();
        upstream.list_tools().await.unwrap();
        upstream
            .call_tool(
                "echo",
                Some(RawJson::from_value(&json!({"text": "x"}))),
                None,
                before,
            )
            .await
            .unwrap();
        // The process crashed after answering; a listing starts another one.
        crate::e2e_support::eventually("the exit being seen", || {
            *upstream.invalidations().borrow() != before
        })
        .await;
        upstream.list_tools().await.unwrap();
        // A call checked before the restart is refused unsent.
        let error = upstream
            .call_tool(
                "echo",
                Some(RawJson::from_value(&json!({"text": "x"}))),
                None,
                before,
            )
            .await
            .unwrap_err();
        assert_eq!(error.reason(), "upstream_unavailable");
        assert!(
            error.to_string().contains(
                "the server process whose tools were checked is gone (it was started again \
                 since); the call was not sent"
            ),
            "{error}"
        );
        upstream.shutdown().await;
    });
}

#[test]
fn a_call_on_a_running_child_whose_files_changed_is_refused_unsent() {
    run(async {
        // What a max-age listing would skip: the call itself checks the pinned files.
        let files = Files::new("local-changed-call");
        let upstream = local(&files, &[], quick_options());
        let generation = *upstream.invalidations().borrow();
        upstream.list_tools().await.unwrap();
        let pid = files.starts()[0].clone();
        files.change_tools_file();
        let error = upstream
            .call_tool(
                "echo",
                Some(RawJson::from_value(&json!({"text": "x"}))),
                None,
                generation,
            )
            .await
            .unwrap_err();
        assert_eq!(error.reason(), "identity_mismatch");
        let identity = error.identity_error().unwrap();
        assert_eq!(identity.anchor(), server_identity::Anchor::Entrypoint);
        assert_eq!(files.calls(), 0, "the call reached the changed server");
        assert!(
            !process_exists(&pid),
            "the changed server {pid} was left running"
        );
        assert_eq!(upstream.status().refused_starts, 1);
    });
}

#[test]
fn every_tools_list_page_is_followed_within_the_page_limit() {
    run(async {
        let files = Files::new("local-pages");
        let extra = ["--page-size", "1"];
        let upstream = local(&files, &extra, quick_options());
        let names: Vec<String> = upstream
            .list_tools()
            .await
            .unwrap()
            .iter()
            .map(|tool| tool["name"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(names, ["echo", "add", "environment"]);
        upstream.shutdown().await;
        let options = LocalOptions {
            max_list_pages: 2,
            ..quick_options()
        };
        let upstream = local(&files, &extra, options);
        assert_eq!(
            upstream.list_tools().await.unwrap_err(),
            UpstreamError::TooManyPages {
                url: label(&files, &extra),
                limit: 2
            }
        );
        upstream.shutdown().await;
    });
}

#[test]
fn a_program_that_cannot_be_started_is_upstream_unavailable() {
    run(async {
        let files = Files::new("local-no-program");
        let mut command = files.command(&[]);
        let missing = files.dir.join("no-such-program");
        command.program = missing.clone();
        let upstream = LocalUpstream::new(command, quick_options());
        let error = upstream.list_tools().await.unwrap_err();
        assert_eq!(error.reason(), "upstream_unavailable");
        let UpstreamError::Connect { detail, .. } = &error else {
            panic!("{error:?}");
        };
        assert_eq!(
            detail,
            &format!(
                "cannot start {} in {}: No such file or directory (os error 2)",
                missing.display(),
                files.dir.display()
            )
        );
        assert_eq!(upstream.status().starts, 0);
    });
}

#[test]
fn an_unreadable_entrypoint_is_refused_before_anything_starts() {
    run(async {
        let files = Files::new("local-unreadable");
        let upstream = local(&files, &[], quick_options());
        std::fs::remove_file(&files.tools).unwrap();
        let error = upstream.list_tools().await.unwrap_err();
        assert_eq!(error.reason(), "identity_mismatch");
        assert_eq!(
            error.identity_error(),
            Some(&server_identity::IdentityError::EntrypointUnreadable {
                path: files.tools.clone(),
                detail: "No such file or directory (os error 2)".into(),
            })
        );
        assert!(files.starts().is_empty());
        assert_eq!(
            (upstream.status().starts, upstream.status().refused_starts),
            (0, 1)
        );
    });
}
