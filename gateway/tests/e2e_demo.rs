//! `toolgate demo`, run as a process: every expectation holds and each decision is printed.

use crate::util::toolgate;

#[test]
fn the_demo_shows_allowed_rug_pull_and_impostor_decisions() {
    let run = toolgate(&["demo"]);
    let text = &run.stdout;
    println!("{text}");
    assert_eq!(run.code, 0, "{text}{}", run.stderr);
    assert!(
        text.contains("1. tools/list through the gateway: demo.echo, demo.add, demo.get_time"),
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
    assert!(text.contains("chain verified: 5 entries"), "{text}");
    assert!(text.contains("7 of 7 expectations held"), "{text}");
}
