//! `toolgate demo`, run as a process: every expectation holds and each decision is printed.

use crate::util::toolgate;

#[test]
fn the_demo_shows_allowed_rug_pull_impostor_and_local_server_decisions() {
    let run = toolgate(&["demo"]);
    let text = &run.stdout;
    println!("{text}");
    assert_eq!(run.code, 0, "{text}{}", run.stderr);
    assert!(
        text.contains(
            "1. tools/list through the gateway: demo.echo, demo.add, demo.get_time, local.echo\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("call demo.echo {\"text\":\"hello\"}  ->  allowed, result \"hello\""),
        "{text}"
    );
    assert!(
        text.contains("->  DENIED: definition_mismatch (JSON-RPC -32002)"),
        "{text}"
    );
    assert!(
        text.contains("->  DENIED: identity_mismatch (JSON-RPC -32001)"),
        "{text}"
    );
    assert!(text.contains("received 0 application bytes"), "{text}");
    // The local server: allowed, then refused once its tools file changed on disk, with no
    // process started for it.
    assert!(
        text.contains("call local.echo {\"text\":\"hello\"}  ->  allowed, result \"hello\""),
        "{text}"
    );
    assert!(
        text.contains("identity_mismatch while listing its tools: upstream stdio:"),
        "{text}"
    );
    assert!(
        text.contains(": identity mismatch (entrypoint): "),
        "{text}"
    );
    assert!(
        text.contains(
            "   processes started: 1 (the changed server was stopped; nothing else was started)\n"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "chain verified: 7 entries (allowed 3, identity_mismatch 2, definition_mismatch 1)"
        ),
        "{text}"
    );
    for expectation in [
        "tools/list offers the four pinned tools (three remote, one local)",
        "demo.echo is allowed and returns \"hello\"",
        "the changed tool demo.echo is denied with definition_mismatch (-32002)",
        "the unchanged tool demo.add on the same server still works (sum 5)",
        "the impostor is refused with identity_mismatch (-32001)",
        "the impostor received no application bytes",
        "local.echo on the pinned stdio server is allowed and returns \"hello\"",
        "after its tools file changed, local.echo is refused with identity_mismatch (-32001), anchor entrypoint",
        "no process was started for the changed server (one start in all)",
        "the audit chain verifies and holds 3 allowed, 1 definition_mismatch, 2 identity_mismatch",
    ] {
        assert!(
            text.contains(&format!("  [ok] {expectation}\n")),
            "{expectation}\n{text}"
        );
    }
    assert!(text.contains("10 of 10 expectations held"), "{text}");
}
