//! `toolgate demo`, run in-process: every expectation holds and each decision is printed.

use crate::e2e_support::run;

#[test]
fn the_demo_shows_allowed_rug_pull_and_impostor_decisions() {
    run(async {
        let mut out = Vec::new();
        let report = toolgate::demo::run(&mut out).await.unwrap();
        let text = String::from_utf8(out).unwrap();
        println!("{text}");
        assert!(report.passed(), "{text}");
        assert_eq!(report.checks.len(), 7, "{text}");
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
        // The demo keeps its catalog and audit log for a person to read; a test does not.
        std::fs::remove_dir_all(&report.directory).unwrap();
    });
}
