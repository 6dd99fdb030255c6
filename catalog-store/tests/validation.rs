//! One fixture per validation rule; each asserts the exact message, which names the entry
//! (index and `tool_name`), the field (a JSON Pointer) and the fix.

use std::path::Path;

use catalog_store::{Catalog, CatalogError, CatalogLoadError};
use serde_json::json;

use crate::support::{
    FP_A, FP_A2, H1_CHANGED, entry_one, entry_one_named, entry_two, error_messages, load,
    load_valid, message_starts, single_error, with, without,
};

const ENTRY_ALLOWED: &str = "tool_name, upstream_name, server, approved_definition, \
     definition_hash, added_at, approved_by";
const SERVER_ALLOWED: &str = "display_name, url, tls_fingerprint, backup_fingerprints, \
     spiffe_id, rotation_mode, tls_trust, command, cwd, env, inherit_env, entrypoint_digests";
const TYPO: &str = "A typo in a security file must not load quietly: fix or remove it";
const E0: &str = "entry 0 (tool_name \"salesforce.query\")";

// Unknown members, at every level.

#[test]
fn an_unknown_entry_member_is_refused_with_a_suggestion() {
    assert_eq!(
        single_error(with(entry_one(), "/aproved_by", json!("x"))),
        format!(
            "{E0} at /0/aproved_by: unknown member \"aproved_by\" (did you mean \"approved_by\"?); \
             the members allowed here are {ENTRY_ALLOWED}. {TYPO}"
        )
    );
}

#[test]
fn an_unknown_server_member_is_refused_with_a_suggestion() {
    assert_eq!(
        single_error(with(entry_one(), "/server/tls_fingerprnt", json!(FP_A2))),
        format!(
            "{E0} at /0/server/tls_fingerprnt: unknown member \"tls_fingerprnt\" (did you mean \
             \"tls_fingerprint\"?); the members allowed here are {SERVER_ALLOWED}. {TYPO}"
        )
    );
}

#[test]
fn an_unhashed_definition_member_is_refused() {
    assert_eq!(
        single_error(with(entry_one(), "/approved_definition/_meta", json!({}))),
        format!(
            "{E0} at /0/approved_definition/_meta: unknown member \"_meta\"; the members allowed \
             here are name, title, description, inputSchema, input_schema, outputSchema, \
             output_schema, annotations. Only the members that are hashed may be approved: \
             anything else (_meta, icons, ...) would reach clients without ever being checked \
             against the upstream"
        )
    );
}

#[test]
fn an_unknown_catalog_member_is_refused_and_its_pointer_escaped() {
    assert_eq!(
        error_messages(&json!({"entries": [], "a/b~": 1})),
        [format!(
            "at /a~1b~0: unknown member \"a/b~\"; the members allowed here are catalog_version, \
             entries. {TYPO}"
        )]
    );
}

// Missing members and wrong types.

#[test]
fn a_missing_required_member_is_named_with_what_to_add() {
    assert_eq!(
        single_error(without(entry_one(), "/approved_by")),
        format!(
            "{E0} at /0/approved_by: required member \"approved_by\" is missing; name who approved \
             this binding, e.g. \"security@example.com\""
        )
    );
    assert_eq!(
        single_error(without(entry_one(), "/server")),
        format!(
            "{E0} at /0/server: required member \"server\" is missing; add {{\"url\": \
             \"https://...\", \"tls_fingerprint\": \"SHA256:...\"}}"
        )
    );
    assert_eq!(
        single_error(without(entry_one(), "/server/url")),
        format!(
            "{E0} at /0/server/url: required member \"url\" is missing; give the upstream's MCP \
             endpoint, e.g. \"https://mcp.example.com/mcp\", or a command to start a local server"
        )
    );
    assert_eq!(
        single_error(without(entry_one(), "/added_at")),
        format!(
            "{E0} at /0/added_at: required member \"added_at\" is missing; give the approval time \
             in RFC 3339, e.g. \"2026-06-01T00:00:00Z\""
        )
    );
}

#[test]
fn a_missing_approved_definition_is_named() {
    assert_eq!(
        single_error(without(entry_one(), "/approved_definition")),
        format!(
            "{E0} at /0/approved_definition: required member \"approved_definition\" is \
             missing; add the tool definition you approved (description, inputSchema, ...)"
        )
    );
}

#[test]
fn a_missing_definition_hash_with_an_invalid_definition_says_what_to_fix_first() {
    let entry = without(
        without(entry_one(), "/definition_hash"),
        "/approved_definition/input_schema",
    );
    assert_eq!(
        error_messages(&json!([entry]))[1],
        format!(
            "{E0} at /0/definition_hash: required member \"definition_hash\" is missing; fix \
             approved_definition first; the error will then show the value to add"
        )
    );
}

#[test]
fn an_entry_without_tool_name_is_named_by_its_index() {
    assert_eq!(
        single_error(without(entry_one(), "/tool_name")),
        "entry 0 at /0/tool_name: required member \"tool_name\" is missing; give the name \
         clients call the tool by, e.g. \"salesforce.query\""
    );
}

#[test]
fn an_empty_tool_name_is_refused() {
    assert_eq!(
        single_error(with(entry_one(), "/tool_name", json!(""))),
        "entry 0 (tool_name \"\") at /0/tool_name: tool_name is empty; give the name clients \
         call the tool by, e.g. \"salesforce.query\""
    );
}

#[test]
fn a_wrong_json_type_is_named_with_both_types() {
    assert_eq!(
        single_error(with(entry_one(), "/tool_name", json!(7))),
        "entry 0 at /0/tool_name: expected a string, found a number; write a string here"
    );
    assert_eq!(
        single_error(json!([])),
        "entry 0 at /0: expected an object (a catalog entry), found an array; write an object \
         (a catalog entry) here"
    );
    assert_eq!(
        single_error(with(
            entry_one(),
            "/approved_definition/description",
            json!(1)
        )),
        format!(
            "{E0} at /0/approved_definition/description: expected a string, found a number; \
             write a string here"
        )
    );
    assert_eq!(
        single_error(with(
            entry_one(),
            "/server/backup_fingerprints",
            json!(FP_A2)
        )),
        format!(
            "{E0} at /0/server/backup_fingerprints: expected an array of fingerprint strings, \
             found a string; write an array of fingerprint strings here"
        )
    );
    // `null` stands for absent only where a member is optional.
    assert_eq!(
        single_error(with(entry_one(), "/approved_by", json!(null))),
        format!("{E0} at /0/approved_by: expected a string, found null; write a string here")
    );
}

#[test]
fn the_entries_member_is_required_and_must_be_an_array() {
    assert_eq!(
        error_messages(&json!({"catalog_version": "1"})),
        [
            "at /entries: required member \"entries\" is missing; add \"entries\": [...] with one \
          object per tool"
        ]
    );
    assert_eq!(
        error_messages(&json!({"entries": {}})),
        [
            "at /entries: expected an array of entries, found an object; write an array of entries \
          here"
        ]
    );
}

#[test]
fn a_document_that_is_not_a_catalog_is_refused() {
    assert_eq!(
        error_messages(&json!("catalog")),
        [
            "the catalog is a JSON string; write a JSON array of entries, or an object \
          {\"catalog_version\": \"...\", \"entries\": [...]}"
        ]
    );
}

#[test]
fn bytes_the_strict_reader_refuses_are_refused() {
    let error = Catalog::from_slice(b"[{\"a\": 1, \"a\": 2}]").unwrap_err();
    assert!(matches!(error.errors(), [CatalogError::Json { .. }]));
    assert_eq!(
        error.to_string(),
        "the catalog is invalid (1 error):\nthe catalog is not strict JSON: duplicate member name \
         \"a\" in the object at JSON Pointer \"/0\" at line 1 column 11 (byte 10): a member name \
         may appear once per object; remove or rename one of them"
    );
}

// Identity anchors and server options.

#[test]
fn a_server_without_identity_anchor_is_refused() {
    let entry = without(
        without(entry_one(), "/server/tls_fingerprint"),
        "/server/spiffe_id",
    );
    assert_eq!(
        single_error(entry),
        format!(
            "{E0} at /0/server: no identity anchor: set tls_fingerprint, spiffe_id or both (seed \
             003 §1, Phase 1 requirement)"
        )
    );
}

#[test]
fn a_url_that_is_not_plain_https_is_refused() {
    let cases = [
        (
            "http://mcp.salesforce.com/mcp",
            "the scheme is \"http\", not \"https\"; write the URL as https://... (lowercase; \
             upstreams are reached over pinned TLS only)",
        ),
        (
            "mcp.salesforce.com/mcp",
            "the URL has no scheme; write it as https://host/path (upstreams are reached over \
             pinned TLS only)",
        ),
        (
            "https:///mcp",
            "the URL has no host; write it as https://host/path",
        ),
        (
            "https://user:pw@mcp.salesforce.com/mcp",
            "the URL carries user info (user@ or user:password@); remove it, credentials do not \
             belong in a catalog",
        ),
        (
            "https://mcp.salesforce.com/mcp#x",
            "the URL has a #fragment, which is never sent to the server; remove it",
        ),
        (
            "https://mcp.salesforce.com:99999/mcp",
            "the port \"99999\" is not a number from 1 to 65535; fix or remove it",
        ),
        (
            "https://mcp..salesforce.com/mcp",
            "the host \"mcp..salesforce.com\" is not a DNS name (letters, digits, '-', '_', '.'), \
             an IPv4 address or a bracketed IPv6 address; write IDN hosts in their xn-- form",
        ),
        (
            "https://mcp.salesforce.com/m\tcp",
            "the character '\\t' at byte 28 is not allowed unencoded in a URL; percent-encode it",
        ),
    ];
    for (url, problem) in cases {
        assert_eq!(
            single_error(with(entry_one(), "/server/url", json!(url))),
            format!("{E0} at /0/server/url: the URL {url:?} is refused: {problem}"),
        );
    }
}

#[test]
fn a_fingerprint_that_does_not_parse_is_refused_with_the_accepted_forms() {
    assert_eq!(
        single_error(with(
            entry_one(),
            "/server/tls_fingerprint",
            json!("SHA256:abc")
        )),
        format!(
            "{E0} at /0/server/tls_fingerprint: fingerprint in `SHA256:` hex or base64 form has 3 \
             characters, expected 64 (hex) or 43/44 (base64): is it a SHA-256?; accepted forms: \
             `SHA256:` + 64 hex digits (any case); colon-separated hex as `openssl x509 \
             -fingerprint -sha256` prints it, with or without its `sha256 Fingerprint=` prefix; \
             `SHA256:` + base64 (43 characters, or 44 ending in `=`, as OpenSSH prints)"
        )
    );
}

#[test]
fn a_fingerprint_listed_twice_is_refused() {
    // The primary again, in uppercase: equal once parsed.
    let backups = json!([FP_A2, FP_A.to_uppercase()]);
    assert_eq!(
        single_error(with(entry_one(), "/server/backup_fingerprints", backups)),
        format!(
            "{E0} at /0/server/backup_fingerprints/1: fingerprint {FP_A} is already listed at \
             /0/server/tls_fingerprint; list each fingerprint once"
        )
    );
}

#[test]
fn backups_without_a_primary_fingerprint_are_refused() {
    assert_eq!(
        single_error(with(
            entry_two(),
            "/server/backup_fingerprints",
            json!([FP_A2])
        )),
        "entry 0 (tool_name \"crm.lookup\") at /0/server/backup_fingerprints: \
         backup_fingerprints are set without a tls_fingerprint: set the primary fingerprint"
    );
}

#[test]
fn pin_trust_without_a_fingerprint_is_refused() {
    assert_eq!(
        single_error(with(entry_two(), "/server/tls_trust", json!("pin"))),
        "entry 0 (tool_name \"crm.lookup\") at /0/server/tls_trust: tls_trust `pin` makes the \
         fingerprint the trust anchor, but no tls_fingerprint is set"
    );
}

#[test]
fn pin_trust_with_a_spiffe_id_is_refused() {
    // `pin` skips the chain check that a SPIFFE ID needs (server-identity refuses the pair).
    assert_eq!(
        single_error(with(entry_one(), "/server/tls_trust", json!("pin"))),
        format!(
            "{E0} at /0/server/tls_trust: tls_trust `pin` skips chain validation, but a spiffe_id \
             requires the chain to validate to its trust bundle: remove tls_trust `pin` (the \
             SPIFFE bundle is the chain anchor)"
        )
    );
}

#[test]
fn a_spiffe_id_with_an_explicit_webpki_trust_is_refused() {
    // docs/design.md §3: the SVID replaces the web PKI check; the default (absent) is fine.
    assert_eq!(
        single_error(with(entry_one(), "/server/tls_trust", json!("webpki"))),
        format!(
            "{E0} at /0/server/tls_trust: tls_trust \"webpki\" is written together with \
             spiffe_id spiffe://corp.example/salesforce/mcp-server, but the SVID replaces the web \
             PKI check (an X509-SVID carries no host name; its chain is checked against the trust \
             bundle of its trust domain): remove tls_trust, or remove spiffe_id to trust the web PKI"
        )
    );
    let fingerprint_only = without(entry_one(), "/server/spiffe_id");
    load_valid(vec![with(
        fingerprint_only,
        "/server/tls_trust",
        json!("webpki"),
    )]);
}

#[test]
fn a_tool_name_with_control_characters_is_refused_naming_the_code_points() {
    // C0 (ESC, as in a terminal colour sequence), DEL and C1 (NEL); upstream_name keeps the
    // definition hash as it was.
    let entry = with(
        with(
            entry_one(),
            "/tool_name",
            json!("sales\u{1b}[31mforce\u{7f}\u{85}"),
        ),
        "/upstream_name",
        json!("salesforce.query"),
    );
    assert_eq!(
        single_error(entry),
        "entry 0 (tool_name \"sales\\u{1b}[31mforce\\u{7f}\\u{85}\") at /0/tool_name: tool_name \
         contains control characters (U+001B U+007F U+0085); a tool name is shown to people and \
         models and written to logs, where control characters can hide or forge text: remove them"
    );
}

#[test]
fn an_upstream_name_with_control_characters_is_refused() {
    let entry = with(entry_one(), "/upstream_name", json!("query\u{0}"));
    let messages = error_messages(&json!([entry]));
    assert_eq!(
        messages[0],
        format!(
            "{E0} at /0/upstream_name: upstream_name contains control characters (U+0000); a \
             tool name is shown to people and models and written to logs, where control \
             characters can hide or forge text: remove them"
        )
    );
    // The definition is hashed with that name, so the stored hash does not recompute either.
    assert_eq!(messages.len(), 2, "{messages:#?}");
}

#[test]
fn an_anchor_that_is_itself_wrong_is_reported_once_as_itself() {
    // No "no identity anchor" on top of the SPIFFE ID's own error.
    let entry = without(entry_one(), "/server/tls_fingerprint");
    let message = single_error(with(entry, "/server/spiffe_id", json!("spiffe://")));
    assert!(
        message.starts_with(&format!("{E0} at /0/server/spiffe_id: ")),
        "{message}"
    );
}

#[test]
fn a_bad_spiffe_id_is_refused() {
    assert_eq!(
        single_error(with(
            entry_one(),
            "/server/spiffe_id",
            json!("spiffe://Corp.example/x")
        )),
        format!(
            "{E0} at /0/server/spiffe_id: SPIFFE ID trust domain has `C` at byte 9: only \
             lowercase letters, digits, `.`, `-` and `_` are allowed"
        )
    );
}

#[test]
fn an_unknown_rotation_mode_or_trust_is_refused() {
    assert_eq!(
        single_error(with(
            entry_one(),
            "/server/rotation_mode",
            json!("key-pined")
        )),
        format!(
            "{E0} at /0/server/rotation_mode: unknown rotation_mode `key-pined`: expected \
             `key-pinned` (the default) or `cert-pinned`"
        )
    );
    assert_eq!(
        single_error(with(entry_one(), "/server/tls_trust", json!("system"))),
        format!(
            "{E0} at /0/server/tls_trust: unknown tls_trust `system`: expected `webpki` (the \
             default) or `pin`"
        )
    );
    assert_eq!(
        single_error(with(entry_one(), "/server/rotation_mode", json!(""))),
        format!(
            "{E0} at /0/server/rotation_mode: rotation_mode is empty; remove the member to use the default"
        )
    );
}

// added_at and the definition hash.

#[test]
fn an_added_at_that_is_not_rfc_3339_is_refused() {
    assert_eq!(
        single_error(with(entry_one(), "/added_at", json!("2026-06-01"))),
        format!(
            "{E0} at /0/added_at: added_at \"2026-06-01\" is not an RFC 3339 date-time (too short \
             for YYYY-MM-DDTHH:MM:SSZ); write it as, for example, \"2026-06-01T00:00:00Z\""
        )
    );
    assert_eq!(
        single_error(with(
            entry_one(),
            "/added_at",
            json!("2026-02-30T00:00:00Z")
        )),
        format!(
            "{E0} at /0/added_at: added_at \"2026-02-30T00:00:00Z\" is not an RFC 3339 date-time \
             (the day does not exist in that month); write it as, for example, \
             \"2026-06-01T00:00:00Z\""
        )
    );
}

#[test]
fn a_definition_hash_that_does_not_recompute_shows_both_values() {
    assert_eq!(
        single_error(with(entry_one(), "/definition_hash", json!(H1_CHANGED))),
        format!(
            "{E0} at /0/definition_hash: definition_hash does not recompute: the file says \
             {H1_CHANGED}, the approved_definition (with name \"salesforce.query\") hashes to \
             {H1}; if approved_definition is what you approved, set definition_hash to {H1}, \
             otherwise restore the approved definition",
            H1 = crate::support::H1
        )
    );
}

#[test]
fn a_changed_definition_does_not_recompute() {
    // The rug pull, caught at load: the definition moved, the approved hash did not.
    let entry = with(
        entry_one(),
        "/approved_definition/description",
        json!("Query Salesforce records by SOQL."),
    );
    let message = single_error(entry);
    assert_eq!(
        message,
        format!(
            "{E0} at /0/definition_hash: definition_hash does not recompute: the file says {H1}, \
             the approved_definition (with name \"salesforce.query\") hashes to {H1_CHANGED}; if \
             approved_definition is what you approved, set definition_hash to {H1_CHANGED}, \
             otherwise restore the approved definition",
            H1 = crate::support::H1
        )
    );
}

#[test]
fn a_missing_definition_hash_prints_the_value_to_paste() {
    let h1 = crate::support::H1;
    assert_eq!(
        single_error(without(entry_one(), "/definition_hash")),
        format!(
            "{E0} at /0/definition_hash: required member \"definition_hash\" is missing; the \
             approved definition hashes to {h1}: if it is the definition you approved, add \
             \"definition_hash\": \"{h1}\""
        )
    );
}

#[test]
fn a_definition_hash_that_is_not_a_digest_is_refused() {
    let h1 = crate::support::H1;
    assert_eq!(
        single_error(with(entry_one(), "/definition_hash", json!("sha256:..."))),
        format!(
            "{E0} at /0/definition_hash: definition_hash \"sha256:...\" is not a digest: '.' at \
             position 7 is not a lowercase hexadecimal digit; after \"sha256:\" a digest holds \
             exactly 64 characters 0-9 a-f; the approved definition hashes to {h1}: if it is the \
             definition you approved, write that"
        )
    );
}

#[test]
fn a_definition_in_both_spellings_is_refused() {
    assert_eq!(
        single_error(with(
            entry_one(),
            "/approved_definition/inputSchema",
            json!({})
        )),
        format!(
            "{E0} at /0/approved_definition/input_schema: the definition carries both \
             \"inputSchema\" and \"input_schema\"; keep one of them (\"inputSchema\" is the MCP \
             spelling)"
        )
    );
}

#[test]
fn a_definition_without_input_schema_is_refused() {
    let messages = error_messages(&json!([without(
        entry_one(),
        "/approved_definition/input_schema"
    )]));
    assert_eq!(
        messages[0],
        format!(
            "{E0} at /0/approved_definition/inputSchema: required member \"inputSchema\" is \
             missing; MCP requires every tool to declare its input; add \"inputSchema\": \
             {{\"type\": \"object\"}} at least"
        )
    );
}

#[test]
fn a_definition_named_other_than_the_upstream_name_is_refused() {
    assert_eq!(
        single_error(with(
            entry_one(),
            "/approved_definition/name",
            json!("query")
        )),
        format!(
            "{E0} at /0/approved_definition/name: approved_definition.name \"query\" is not the \
             upstream name \"salesforce.query\"; a live definition must carry the upstream name \
             (upstream_name, default tool_name), so remove \"name\" or set upstream_name to \
             \"query\""
        )
    );
}

// The report as a whole.

#[test]
fn every_problem_is_reported_not_only_the_first() {
    let document = json!([
        with(entry_one(), "/tool_name", json!(7)),
        with(entry_two(), "/added_at", json!(0)),
    ]);
    let error = load(&document).unwrap_err();
    assert_eq!(
        error.to_string(),
        "the catalog is invalid (2 errors):\n\
         entry 0 at /0/tool_name: expected a string, found a number; write a string here\n\
         entry 1 (tool_name \"crm.lookup\") at /1/added_at: expected a string, found a number; \
         write a string here"
    );
    let location = error.errors()[1].location().unwrap();
    assert_eq!(location.pointer(), "/1/added_at");
    assert_eq!(
        location.entry().map(|e| (e.index(), e.tool_name())),
        Some((1, Some("crm.lookup")))
    );
}

#[test]
fn pointers_follow_the_object_form() {
    let document = json!({"entries": [with(entry_one(), "/added_at", json!("yesterday"))]});
    assert_eq!(
        error_messages(&document),
        [format!(
            "{E0} at /entries/0/added_at: added_at \"yesterday\" is not an RFC 3339 date-time \
             (too short for YYYY-MM-DDTHH:MM:SSZ); write it as, for example, \
             \"2026-06-01T00:00:00Z\""
        )]
    );
}

#[test]
fn a_hostile_tool_name_cannot_forge_a_line_of_the_report() {
    // upstream_name keeps the definition hash as it was. The name itself is refused (it holds
    // a newline); every message that shows it keeps it on one line.
    let entry = with(entry_one(), "/tool_name", json!("x\nentry 9 at /9: forged"));
    let entry = with(entry, "/upstream_name", json!("salesforce.query"));
    let messages = error_messages(&json!([with(entry, "/added_at", json!("now"))]));
    assert_eq!(
        messages,
        [
            "entry 0 (tool_name \"x\\nentry 9 at /9: forged\") at /0/tool_name: tool_name \
             contains control characters (U+000A); a tool name is shown to people and models and \
             written to logs, where control characters can hide or forge text: remove them",
            "entry 0 (tool_name \"x\\nentry 9 at /9: forged\") at /0/added_at: added_at \"now\" \
             is not an RFC 3339 date-time (too short for YYYY-MM-DDTHH:MM:SSZ); write it as, for \
             example, \"2026-06-01T00:00:00Z\""
        ]
    );
}

#[test]
fn load_names_the_path_it_could_not_read() {
    let error = Catalog::load(Path::new("/nonexistent/catalog.json")).unwrap_err();
    assert!(matches!(error, CatalogLoadError::Read { .. }));
    assert!(error.errors().is_empty());
    assert_eq!(
        error.to_string(),
        "cannot read the catalog /nonexistent/catalog.json: No such file or directory (os error \
         2); check the path and its permissions"
    );
}

#[test]
fn load_names_the_path_of_an_invalid_catalog() {
    let path =
        std::env::temp_dir().join(format!("catalog-store-invalid-{}.json", std::process::id()));
    std::fs::write(&path, b"{}").unwrap();
    let error = Catalog::load(&path).unwrap_err();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(
        error.to_string(),
        format!(
            "the catalog {} is invalid (1 error):\nat /entries: required member \"entries\" is \
             missing; add \"entries\": [...] with one object per tool",
            path.display()
        )
    );
}

#[test]
fn a_hostile_member_name_is_escaped_in_its_pointer() {
    let mut entry = entry_one();
    entry["server"]
        .as_object_mut()
        .unwrap()
        .insert("a\"b\nc~/".to_owned(), json!(1));
    assert_eq!(
        single_error(entry),
        format!(
            "{E0} at /0/server/a\"b\\nc~0~1: unknown member \"a\\\"b\\nc~/\"; the members allowed \
             here are {SERVER_ALLOWED}. {TYPO}"
        )
    );
}

#[test]
fn error_values_carry_both_digests_and_compare_equal() {
    use jcs_digest::Digest;
    let error = load(&json!([with(
        entry_one(),
        "/definition_hash",
        json!(H1_CHANGED)
    )]))
    .unwrap_err();
    match &error.errors()[0] {
        CatalogError::DefinitionHashMismatch {
            at,
            stored,
            recomputed,
            upstream_name,
        } => {
            assert_eq!(*stored, H1_CHANGED.parse::<Digest>().unwrap());
            assert_eq!(*recomputed, crate::support::H1.parse::<Digest>().unwrap());
            assert_eq!(upstream_name, "salesforce.query");
            assert_eq!(at.pointer(), "/0/definition_hash");
        }
        other => panic!("unexpected {other}"),
    }
    // The same input gives an equal error.
    let again = load(&json!([with(
        entry_one(),
        "/definition_hash",
        json!(H1_CHANGED)
    )]))
    .unwrap_err();
    assert_eq!(error.errors(), again.errors());
}

/// A server written alike in two entries is read for each when it is invalid: each entry
/// reports its problem at its own pointer (a valid one is read once and shared).
#[test]
fn an_invalid_server_written_alike_is_reported_for_each_entry() {
    let bad = |name: &str| {
        with(
            entry_one_named(name),
            "/server/rotation_mode",
            json!("sideways"),
        )
    };
    let document = json!([bad("salesforce.describe"), bad("salesforce_query")]);
    assert_eq!(
        message_starts(&document, ": "),
        [
            "entry 0 (tool_name \"salesforce.describe\") at /0/server/rotation_mode",
            "entry 1 (tool_name \"salesforce_query\") at /1/server/rotation_mode"
        ]
    );
}
