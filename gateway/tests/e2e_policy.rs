//! Cedar authorization end to end (docs/design.md §7): the example policy of `examples/` (read-only
//! tools for everyone, destructive tools for the `ops` group) in front of a real upstream,
//! callers authenticated by bearer tokens minted here; `tools/list` filtered per principal, a
//! denial as `not_authorized` (-32005) audited with the principal and the deciding policies;
//! a policy that does not parse refuses `toolgate serve`, naming the line.

use std::sync::Arc;

use serde_json::{Value, json};
use toolgate::auth::{BearerAuth, PolicyError, ToolPolicy};
use toolgate::mcp::ProtocolVersion;
use toolgate_testkit::GatewayClient;

use crate::e2e_auth::{AUDIENCE, ISSUER, claims};
use crate::e2e_support::{Harness, Setup, TOOLGATE, call_entries, denial, run, temp_dir};
use crate::token_keys::{TestKey, ec_key, jwks, mint};

const EXAMPLE_POLICY: &str = include_str!("../../examples/policy.cedar");

fn tools() -> Vec<Value> {
    let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    vec![
        json!({"name": "echo", "description": "Echoes text", "inputSchema": schema,
               "annotations": {"readOnlyHint": true}}),
        json!({"name": "wipe", "description": "Deletes everything", "inputSchema": schema,
               "annotations": {"destructiveHint": true}}),
    ]
}

/// A gateway in front of `echo` (read-only) and `wipe` (destructive) with bearer tokens of
/// `key` and `policy`.
async fn start(key: &TestKey, policy: &str) -> Harness {
    let auth = BearerAuth::from_jwks(ISSUER, AUDIENCE, &jwks(&[key]), "jwks").unwrap();
    let auth = Arc::new(auth);
    let policy = ToolPolicy::from_text(policy, "policy.cedar").unwrap();
    let mut setup = Setup::new();
    setup.upstream.tools(tools());
    setup.pinned = vec![
        ("demo.echo".to_owned(), "echo".to_owned()),
        ("demo.wipe".to_owned(), "wipe".to_owned()),
    ];
    setup.policy = Some(Arc::new(policy));
    setup.server_options = Some(Box::new(move |options| {
        options.bearer_auth(auth);
    }));
    Harness::start(setup).await
}

#[test]
fn a_forbid_that_decides_is_named_in_the_denial_and_the_audit() {
    run(async {
        let key = ec_key("ec-1");
        let policy = format!(
            "{EXAMPLE_POLICY}\n@id(\"no-wipe-for-alice\")\nforbid (principal == User::\"alice\", \
             action, resource == Tool::\"demo.wipe\");\n"
        );
        let harness = start(&key, &policy).await;
        let mut alice = GatewayClient::new(&harness.url, ProtocolVersion::V2026_07_28);
        alice.set_bearer(&mint(&key, &claims("alice")));
        alice.connect().await.unwrap();
        let wipe = alice
            .call_tool("demo.wipe", json!({"text": "x"}))
            .await
            .unwrap();
        assert_eq!(denial(&wipe), (-32005, "not_authorized".to_owned()));
        assert_eq!(
            wipe.unwrap_err().message,
            r#"User::"alice" may not call "demo.wipe": forbidden by no-wipe-for-alice (--policy)"#
        );
        let names: Vec<Value> = alice
            .list_tools()
            .await
            .unwrap()
            .iter()
            .map(|tool| tool["name"].clone())
            .collect();
        assert_eq!(names, [json!("demo.echo")]);
        let entries = call_entries(&harness.audit_entries());
        assert_eq!(entries.len(), 1);
        assert_eq!(
            (
                &entries[0]["principal"],
                &entries[0]["decision"],
                &entries[0]["policies"]
            ),
            (
                &json!(r#"User::"alice""#),
                &json!("not_authorized"),
                &json!(["no-wipe-for-alice"])
            )
        );
        harness.stop().await;
    });
}

#[test]
fn the_example_policy_lets_everyone_read_and_only_ops_destroy() {
    run(async {
        let key = ec_key("ec-1");
        let harness = start(&key, EXAMPLE_POLICY).await;

        let mut dev_claims = claims("bob");
        dev_claims["groups"] = json!(["dev"]);
        for version in [ProtocolVersion::V2025_06_18, ProtocolVersion::V2026_07_28] {
            let mut bob = GatewayClient::new(&harness.url, version);
            bob.set_bearer(&mint(&key, &dev_claims));
            bob.connect().await.unwrap();
            let names: Vec<Value> = bob
                .list_tools()
                .await
                .unwrap()
                .iter()
                .map(|tool| tool["name"].clone())
                .collect();
            assert_eq!(names, [json!("demo.echo")], "{version:?}");
            let read = bob
                .call_tool("demo.echo", json!({"text": "hi"}))
                .await
                .unwrap();
            assert!(read.is_ok(), "{read:?}");
            let wipe = bob
                .call_tool("demo.wipe", json!({"text": "x"}))
                .await
                .unwrap();
            assert_eq!(denial(&wipe), (-32005, "not_authorized".to_owned()));
            assert_eq!(
                wipe.unwrap_err().message,
                r#"User::"bob" may not call "demo.wipe": no policy permits it (--policy)"#
            );
        }
        let mut alice = GatewayClient::new(&harness.url, ProtocolVersion::V2025_06_18);
        alice.set_bearer(&mint(&key, &claims("alice")));
        alice.connect().await.unwrap();
        assert_eq!(alice.list_tools().await.unwrap().len(), 2);
        let wipe = alice
            .call_tool("demo.wipe", json!({"text": "x"}))
            .await
            .unwrap();
        assert!(wipe.is_ok(), "{wipe:?}");
        // The denied call never reached the upstream: only alice's did.
        assert_eq!(harness.upstream.controls().method_count("tools/call"), 3);

        let seen: Vec<(String, String, String, Value)> = call_entries(&harness.audit_entries())
            .iter()
            .map(|entry| {
                (
                    entry["principal"].as_str().unwrap().to_owned(),
                    entry["tool"].as_str().unwrap().to_owned(),
                    entry["decision"].as_str().unwrap().to_owned(),
                    entry["policies"].clone(),
                )
            })
            .collect();
        let row =
            |p: &str, t: &str, d: &str, ids: Value| (p.to_owned(), t.to_owned(), d.to_owned(), ids);
        assert_eq!(
            seen,
            [
                row(
                    r#"User::"bob""#,
                    "demo.echo",
                    "allowed",
                    json!(["read-only-for-everyone"])
                ),
                row(r#"User::"bob""#, "demo.wipe", "not_authorized", json!([])),
                row(
                    r#"User::"bob""#,
                    "demo.echo",
                    "allowed",
                    json!(["read-only-for-everyone"])
                ),
                row(r#"User::"bob""#, "demo.wipe", "not_authorized", json!([])),
                row(
                    r#"User::"alice""#,
                    "demo.wipe",
                    "allowed",
                    json!(["destructive-for-ops"])
                ),
            ]
        );
        harness.stop().await;
    });
}

#[test]
fn a_policy_that_cannot_be_used_is_refused_naming_the_line() {
    let error = ToolPolicy::from_text(
        "permit (principal, action, resource);\n\nforbid (principal,, action, resource);\n",
        "p.cedar",
    )
    .unwrap_err();
    let PolicyError::Parse { line, .. } = &error else {
        panic!("{error:?}")
    };
    assert_eq!(*line, 3, "{error}");
    assert!(
        error.to_string().starts_with("--policy p.cedar:3:"),
        "{error}"
    );
    assert_eq!(
        ToolPolicy::from_text("// nothing\n", "p.cedar")
            .unwrap_err()
            .to_string(),
        "--policy p.cedar: no policy in the file; every call would be refused"
    );
    let twice = "@id(\"a\")\npermit (principal, action, resource);\n@id(\"a\")\npermit (principal, action, resource);\n";
    assert!(matches!(
        ToolPolicy::from_text(twice, "p.cedar").unwrap_err(),
        PolicyError::Invalid { .. }
    ));

    // `toolgate serve --policy` refuses to start on it, exit 2, naming the line.
    let dir = temp_dir("policy");
    let bad = dir.join("bad.cedar");
    std::fs::write(
        &bad,
        "permit (principal, action, resource);\n\nforbid (principal,, action, resource);\n",
    )
    .unwrap();
    let catalog = dir.join("catalog.json");
    std::fs::write(&catalog, "[]").unwrap();
    let output = std::process::Command::new(TOOLGATE)
        .args(["serve", "--catalog", catalog.to_str().unwrap(), "--audit"])
        .arg(dir.join("audit.jsonl"))
        .arg("--policy")
        .arg(&bad)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("--policy {}:3:", bad.display())),
        "{stderr}"
    );
}

const EXAMPLE_SCHEMA: &str = include_str!("../../examples/policy.cedarschema");

#[test]
fn the_example_policy_validates_against_the_example_schema() {
    ToolPolicy::with_schema(
        EXAMPLE_POLICY,
        "examples/policy.cedar",
        EXAMPLE_SCHEMA,
        "examples/policy.cedarschema",
    )
    .unwrap();
    // The files themselves, as `toolgate serve --policy … --policy-schema …` reads them.
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    ToolPolicy::from_files(
        &examples.join("policy.cedar"),
        Some(&examples.join("policy.cedarschema")),
    )
    .unwrap();
    // Strict validation is real: the same policy with a misspelt attribute does not pass.
    let misspelt = EXAMPLE_POLICY.replace("resource.read_only", "resource.readOnly");
    let error = ToolPolicy::with_schema(
        &misspelt,
        "examples/policy.cedar",
        EXAMPLE_SCHEMA,
        "examples/policy.cedarschema",
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "--policy examples/policy.cedar:10:8: does not validate against --policy-schema \
         examples/policy.cedarschema: for policy `read-only-for-everyone`, attribute `readOnly` \
         on entity type `Tool` not found (did you mean `read_only`?); fix the policy or the schema"
    );
}

/// Policies and schemas that cannot be used together, and the refusal each one gets.
const SCHEMA_CASES: [(&str, &str, &str); 4] = [
    // The schema does not parse.
    (
        "permit (principal, action, resource);\n",
        "entity User = { groups?: Set<String> ;\n",
        "--policy-schema s.cedarschema:1:38: error parsing schema: unexpected token `;`; fix the \
         schema",
    ),
    // The schema names a type it does not declare.
    (
        "permit (principal, action, resource);\n",
        "entity Tool = { owner: Person };\naction \"call\" appliesTo { principal: [Tool], \
         resource: [Tool] };\n",
        "--policy-schema s.cedarschema:1:24: failed to resolve type: Person (`Person` has not \
         been declared as a common or entity type); fix the schema",
    ),
    // A policy reads an attribute the schema does not declare.
    (
        "@id(\"typo\")\npermit (principal, action == Action::\"call\", resource)\nwhen { \
         resource.readonly };\n",
        "",
        "--policy p.cedar:3:8: does not validate against --policy-schema s.cedarschema: for \
         policy `typo`, attribute `readonly` on entity type `Tool` not found (did you mean \
         `read_only`?); fix the policy or the schema",
    ),
    // Two policies that do not validate: the first in the file is named, the other counted.
    (
        "permit (principal, action == Action::\"call\", resource) when { resource.destructive \
         };\npermit (principal is Robot, action == Action::\"call\", resource);\npermit \
         (principal, action == Action::\"call\", resource) when { resource.server == 1 };\n",
        "",
        "--policy p.cedar:2:22: does not validate against --policy-schema s.cedarschema: for \
         policy `policy1`, unrecognized entity type `Robot` (did you mean `Tool`?) (and 1 more \
         error); fix the policy or the schema",
    ),
];

#[test]
fn a_schema_or_a_policy_that_does_not_validate_is_refused_naming_file_line_and_reason() {
    for (policy, schema, expected) in SCHEMA_CASES {
        let schema = if schema.is_empty() {
            EXAMPLE_SCHEMA
        } else {
            schema
        };
        let error =
            ToolPolicy::with_schema(policy, "p.cedar", schema, "s.cedarschema").unwrap_err();
        assert_eq!(error.to_string(), expected);
    }
    let (policy, _, _) = SCHEMA_CASES[2];
    let error =
        ToolPolicy::with_schema(policy, "p.cedar", EXAMPLE_SCHEMA, "s.cedarschema").unwrap_err();
    let PolicyError::NotValid {
        line,
        column,
        policy,
        ..
    } = &error
    else {
        panic!("{error:?}")
    };
    assert_eq!((*line, *column, policy.as_str()), (3, 8, "typo"));
    // A policy that does not parse is refused as without a schema.
    let error = ToolPolicy::with_schema("permit (", "p.cedar", EXAMPLE_SCHEMA, "s.cedarschema")
        .unwrap_err();
    assert!(
        matches!(error, PolicyError::Parse { line: 1, .. }),
        "{error:?}"
    );
}

#[test]
fn serve_refuses_to_start_on_a_schema_refusal_with_exit_2() {
    let dir = temp_dir("policy-schema");
    let catalog = dir.join("catalog.json");
    std::fs::write(&catalog, "[]").unwrap();
    let serve = |policy: &std::path::Path, schema: &std::path::Path| {
        let output = std::process::Command::new(TOOLGATE)
            .current_dir(&dir)
            .args(["serve", "--catalog", catalog.to_str().unwrap(), "--audit"])
            .arg(dir.join("audit.jsonl"))
            .arg("--policy")
            .arg(policy)
            .arg("--policy-schema")
            .arg(schema)
            .output()
            .unwrap();
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    for (policy, schema, expected) in SCHEMA_CASES {
        std::fs::write(dir.join("p.cedar"), policy).unwrap();
        let schema = if schema.is_empty() {
            EXAMPLE_SCHEMA
        } else {
            schema
        };
        std::fs::write(dir.join("s.cedarschema"), schema).unwrap();
        let got = serve("p.cedar".as_ref(), "s.cedarschema".as_ref());
        assert_eq!(got, (Some(2), format!("toolgate: {expected}\n")));
        // Nothing was served, so no audit log was begun.
        assert!(!dir.join("audit.jsonl").exists());
    }
    std::fs::write(dir.join("p.cedar"), EXAMPLE_POLICY).unwrap();
    assert_eq!(
        serve("p.cedar".as_ref(), "missing.cedarschema".as_ref()),
        (
            Some(2),
            "toolgate: --policy-schema missing.cedarschema: cannot read it (No such file or \
             directory (os error 2))\n"
                .to_owned()
        )
    );
    // --policy-schema alone is a usage error: there is nothing to validate.
    let output = std::process::Command::new(TOOLGATE)
        .args(["serve", "--catalog", catalog.to_str().unwrap(), "--audit"])
        .arg(dir.join("audit.jsonl"))
        .args(["--policy-schema", "s.cedarschema"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).starts_with(
            "error: the following required arguments were not provided:\n  --policy <FILE>\n"
        ),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
