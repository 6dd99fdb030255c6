use std::path::PathBuf;

use serde_json::Value;
use toolgate_testkit::{DemoUpstream, DemoUpstreamConfig};

use crate::util::{temp_file, toolgate};

fn example_catalog() -> String {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/catalog.json"
    ))
    .to_str()
    .unwrap()
    .to_owned()
}

// The measurement was computed independently by catalog-store's tests (python3 + hashlib over
// the hand-written RFC 8785 text of each entry); here it is what the command must print.
const EXAMPLE_MEASUREMENT: &str =
    "sha256:38ee709c3b85314228a37115ece88a8b00fad1a462641e683fe03c0edc30c5ff";

#[test]
fn catalog_check_summarizes_a_valid_catalog_exit_0() {
    let path = example_catalog();
    let run = toolgate(&["catalog", "check", &path]);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""));
    assert_eq!(
        run.stdout,
        format!(
            "{path}: valid catalog (catalog_version \"2026-06-02.1\")\n  \
             tools:       3\n  \
             servers:     2\n    \
             https://crm.example.com/mcp (Example CRM): crm.query, crm.update_contact\n    \
             https://files.internal.example:8443/mcp (Internal file service): files.read\n  \
             warnings:    0\n  \
             measurement: {EXAMPLE_MEASUREMENT}\n"
        )
    );
}

#[test]
fn catalog_check_json_is_one_object() {
    let path = example_catalog();
    let run = toolgate(&["catalog", "check", "--json", &path]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        out,
        serde_json::json!({
            "file": path, "valid": true, "catalog_version": "2026-06-02.1", "tools": 3,
            "servers": 2, "warnings": [], "measurement": EXAMPLE_MEASUREMENT,
        })
    );
}

#[test]
fn catalog_check_lists_every_error_exit_1() {
    let path = temp_file("catalog-missing-members.json", br#"[{"tool_name": "x"}]"#);
    let run = toolgate(&["catalog", "check", &path]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        format!(
            "toolgate: the catalog {path} is invalid (5 errors):\n\
             entry 0 (tool_name \"x\") at /0/server: required member \"server\" is missing; add {{\"url\": \"https://...\", \"tls_fingerprint\": \"SHA256:...\"}}\n\
             entry 0 (tool_name \"x\") at /0/approved_definition: required member \"approved_definition\" is missing; add the tool definition you approved (description, inputSchema, ...)\n\
             entry 0 (tool_name \"x\") at /0/definition_hash: required member \"definition_hash\" is missing; fix approved_definition first; the error will then show the value to add\n\
             entry 0 (tool_name \"x\") at /0/added_at: required member \"added_at\" is missing; give the approval time in RFC 3339, e.g. \"2026-06-01T00:00:00Z\"\n\
             entry 0 (tool_name \"x\") at /0/approved_by: required member \"approved_by\" is missing; name who approved this binding, e.g. \"security@example.com\"\n"
        )
    );
}

/// Seed 003 §3: two entries with one tool name refuse the whole catalog, with the seed's
/// message, one line per server with its URL and fingerprint.
#[test]
fn catalog_check_refuses_a_shadowed_tool_name_with_the_seed_message() {
    let mut catalog: Value =
        serde_json::from_slice(&std::fs::read(example_catalog()).unwrap()).unwrap();
    let entries = catalog["entries"].as_array_mut().unwrap();
    let mut shadow = entries[0].clone();
    shadow["server"]["url"] = "https://legacy-crm.internal/mcp".into();
    shadow["server"]["tls_fingerprint"] =
        "SHA256:1122330000000000000000000000000000000000000000000000000000000000".into();
    shadow["server"]
        .as_object_mut()
        .unwrap()
        .remove("backup_fingerprints");
    entries.push(shadow);
    let path = temp_file("catalog-shadowed.json", catalog.to_string().as_bytes());
    let run = toolgate(&["catalog", "check", &path]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "Duplicate tool name in catalog: \"crm.query\" is registered by two different servers:\n  \
             - https://crm.example.com/mcp (tls_fingerprint: SHA256:9c289a8c0224dfcafafb27d7be7aa63fda8ea688cef5121d24702876c037dbb5)\n  \
             - https://legacy-crm.internal/mcp (tls_fingerprint: SHA256:1122330000000000000000000000000000000000000000000000000000000000)\n\
             Each tool name must map to exactly one upstream server."
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn catalog_check_of_a_missing_file_exits_2() {
    let run = toolgate(&["catalog", "check", "/nonexistent/catalog.json"]);
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr,
        "toolgate: cannot read the catalog /nonexistent/catalog.json (check the path and its \
         permissions): No such file or directory (os error 2)\n"
    );
}

/// `toolgate identity` reports what a real TLS server presents: the values to pin.
#[test]
fn identity_reports_the_fingerprints_a_real_server_presents() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let upstream = runtime
        .block_on(DemoUpstream::start(&DemoUpstreamConfig::new()))
        .unwrap();
    let ca = temp_file("identity-ca.pem", upstream.ca_pem().as_bytes());

    let run = toolgate(&["identity", "--json", "--ca", &ca, upstream.url()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(out["url"], upstream.url());
    assert_eq!(out["spki_sha256"], upstream.spki_fingerprint().to_string());
    assert_eq!(out["cert_sha256"], upstream.cert_fingerprint().to_string());
    assert_eq!(out["spiffe_ids"], serde_json::json!([]));
    assert_eq!(out["chain_valid"], true);
    assert_eq!(
        out.as_object().unwrap().keys().collect::<Vec<_>>(),
        [
            "cert_sha256",
            "chain_valid",
            "not_after",
            "not_before",
            "spiffe_ids",
            "spki_sha256",
            "url"
        ]
    );

    // Without the CA, the same chain does not validate against the system roots.
    let run = toolgate(&[
        "identity",
        "--json",
        "--ca",
        &temp_file("empty-ca.pem", b""),
        upstream.url(),
    ]);
    assert_eq!(
        run.code, 2,
        "an empty --ca file is a usage error: {}",
        run.stderr
    );

    runtime.block_on(upstream.shutdown());
}

#[test]
fn identity_refuses_a_plain_http_url_exit_2() {
    let run = toolgate(&["identity", "http://127.0.0.1:9/mcp"]);
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr,
        "toolgate: invalid URL `http://127.0.0.1:9/mcp`: the scheme is \"http\", not \"https\"; \
         write the URL as https://... (lowercase; upstreams are reached over pinned TLS only)\n"
    );
}

/// The command line reads URLs with the catalog's own parser (one reading of a URL).
#[test]
fn identity_refuses_what_the_catalog_refuses() {
    let run = toolgate(&["identity", "https://user@127.0.0.1:9/mcp"]);
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr,
        "toolgate: invalid URL `https://user@127.0.0.1:9/mcp`: the URL carries user info (user@ \
         or user:password@); remove it, credentials do not belong in a catalog\n"
    );
}
