//! `toolgate demo`, run as a process: every expectation holds and each decision is printed.

use crate::util::toolgate;

#[test]
fn the_demo_shows_allowed_rug_pull_impostor_local_server_and_policy_decisions() {
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
    let mut expectations = vec![
        "tools/list offers the four pinned tools (three remote, one local)",
        "demo.echo is allowed and returns \"hello\"",
        "the changed tool demo.echo is denied with definition_mismatch (-32002)",
        "the unchanged tool demo.add on the same server still works (sum 5)",
        "the impostor is refused with identity_mismatch (-32001)",
        "the impostor received no application bytes",
        "local.echo on the pinned stdio server is allowed and returns \"hello\"",
        "after its tools file changed, local.echo is refused with identity_mismatch (-32001), anchor entrypoint",
        "no process was started for the changed server (one start in all)",
    ];
    if cfg!(feature = "cedar") {
        policy_step(text);
        expectations.extend([
            "behind the policy, local.echo (destructive by MCP's defaults) is refused to the \
             anonymous caller with not_authorized (-32005) and left out of its tools/list",
            "the audit chain verifies and holds 3 allowed, 1 definition_mismatch, 2 \
             identity_mismatch, 1 not_authorized",
        ]);
    } else {
        // A build without Cedar says so and skips the step.
        assert!(
            text.contains(
                "/policy.cedar: this toolgate was built without Cedar; rebuild it with the cargo \
                 feature `cedar` (on by default)\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "chain verified: 7 entries (allowed 3, identity_mismatch 2, definition_mismatch 1)"
            ),
            "{text}"
        );
        expectations.push(
            "the audit chain verifies and holds 3 allowed, 1 definition_mismatch, 2 identity_mismatch",
        );
    }
    for expectation in &expectations {
        assert!(
            text.contains(&format!("  [ok] {expectation}\n")),
            "{expectation}\n{text}"
        );
    }
    let count = expectations.len();
    assert!(
        text.contains(&format!("\n{count} of {count} expectations held")),
        "{text}"
    );
}

/// The policy step: the same catalog behind examples/policy.cedar; the anonymous caller is
/// refused the local tool, which MCP's defaults make destructive.
fn policy_step(text: &str) {
    assert!(
        text.contains("(read-only tools for everyone, destructive tools for the ops group)\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "   tools/list for anonymous: demo.echo, demo.add, demo.get_time  (local.echo is left out)\n"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "   call local.echo {\"text\":\"hello\"}  ->  DENIED: not_authorized (JSON-RPC -32005)\n\
             \x20    anonymous may not call \"local.echo\": no policy permits it (--policy)\n"
        ),
        "{text}"
    );
    let intro = "6. Who may call: the same catalog behind the Cedar policy ";
    let policy_path = text
        .lines()
        .find_map(|line| line.strip_prefix(intro))
        .and_then(|rest| rest.split(" (").next())
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(
        std::fs::read_to_string(policy_path).unwrap(),
        include_str!("../../examples/policy.cedar"),
        "the demo's policy is the example's"
    );
    assert!(
        text.contains(
            "chain verified: 8 entries (allowed 3, not_authorized 1, identity_mismatch 2, \
             definition_mismatch 1)"
        ),
        "{text}"
    );
}
