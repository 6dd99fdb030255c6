//! Local (stdio) servers (docs/design.md §3): `command`, `cwd`, `env`, `inherit_env` and
//! `entrypoint_digests`, each error with its exact message, the measurement and the
//! one-identity rule. Expected digests: python3 + hashlib, as in `support`.

use std::path::{Path, PathBuf};

use catalog_store::{CatalogError, ServerBinding};
use serde_json::{Value, json};

use crate::support::{
    FP_A, assert_colliding_alike, entry_one, error_messages, load, load_valid, single_error, with,
    without,
};

/// `"sha256:" + sha256(b"node").hexdigest()`.
const NODE: &str = "sha256:545ea538461003efdc8c81c244531b003f6f26cfccf6c0073b3239fdedf49446";
/// `"sha256:" + sha256(b"index.js").hexdigest()`.
const INDEX: &str = "sha256:e727e4bdf3657fd1d798edcd6b099d6e092f8573cba266154583a746bba0f346";
/// Tool digest of [`local_entry`]'s definition with `name` = `echo`.
const HE: &str = "sha256:a3fbd29fd12c881ccde70054ed85f674f174da04f46440c73019bdab5e2f61b8";
/// Entry digest of [`local_entry`]: its preimage has `command`, `cwd`, `env`, `inherit_env`
/// (sorted) and `entrypoint_digests` (resolved paths) in place of the network members.
const EL: &str = "sha256:4f07f1c6c1da9c89cf660f95ebbc5fede810b037aac9b3c4dd462457569328a6";
/// The measurement of `[local_entry()]`: sha256 of `tool:everything.echo=<EL>`.
const ML: &str = "sha256:87481dbc26fe52237e536816915cadbf6efc61f8d88742e9ed763576362ed403";

const E0: &str = "entry 0 (tool_name \"everything.echo\")";

/// docs/design.md §3's example: an absolute program, a digest path relative to `cwd`.
pub(crate) fn local_entry() -> Value {
    json!({
        "tool_name": "everything.echo",
        "upstream_name": "echo",
        "server": {
            "display_name": "Everything (stdio)",
            "command": ["/usr/bin/node", "/opt/mcp/everything/dist/index.js", "stdio"],
            "cwd": "/opt/mcp/everything",
            "env": {"LOG_LEVEL": "warn"},
            "inherit_env": ["PATH", "HOME"],
            "entrypoint_digests": {"/usr/bin/node": NODE, "dist/index.js": INDEX}
        },
        "approved_definition": {
            "description": "Echo the message back",
            "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}}
        },
        "definition_hash": HE,
        "added_at": "2026-06-01T00:00:00Z",
        "approved_by": "security@example.com"
    })
}

fn local_of(catalog: &catalog_store::Catalog) -> &catalog_store::LocalServer {
    catalog.entries()[0].server().local().unwrap()
}

#[test]
fn a_local_server_loads_with_resolved_digest_paths() {
    let catalog = load_valid(vec![local_entry()]);
    let binding = catalog.entries()[0].server();
    assert!(matches!(binding, ServerBinding::Local(_)));
    assert!(binding.network().is_none());
    assert_eq!(binding.display_name(), Some("Everything (stdio)"));
    let local = local_of(&catalog);
    assert_eq!(
        local.command(),
        [
            "/usr/bin/node",
            "/opt/mcp/everything/dist/index.js",
            "stdio"
        ]
    );
    assert_eq!(local.program(), Path::new("/usr/bin/node"));
    assert_eq!(local.cwd(), Path::new("/opt/mcp/everything"));
    assert_eq!(
        local.env().get("LOG_LEVEL").map(String::as_str),
        Some("warn")
    );
    assert_eq!(local.inherit_env(), ["PATH", "HOME"]);
    let digests: Vec<(PathBuf, String)> = local
        .entrypoint_digests()
        .iter()
        .map(|(path, digest)| (path.to_owned(), digest.to_string()))
        .collect();
    assert_eq!(
        digests,
        [
            (
                PathBuf::from("/opt/mcp/everything/dist/index.js"),
                INDEX.to_owned()
            ),
            (PathBuf::from("/usr/bin/node"), NODE.to_owned()),
        ]
    );
    assert_eq!(
        binding.location_text(),
        "command [\"/usr/bin/node\", \"/opt/mcp/everything/dist/index.js\", \"stdio\"] (program \
         /usr/bin/node) in /opt/mcp/everything"
    );
    assert_eq!(catalog.servers().len(), 1);
    assert_eq!(catalog.warnings(), &[]);
}

#[test]
fn a_bare_program_is_resolved_on_the_gateway_s_path_and_kept() {
    // The shell's own lookup is the independent answer (PATH here has absolute entries).
    let output = std::process::Command::new("/bin/sh")
        .args(["-c", "command -v sh"])
        .output()
        .unwrap();
    let resolved = String::from_utf8(output.stdout).unwrap().trim().to_owned();
    assert!(resolved.starts_with('/'), "{resolved:?}");
    let entry = with(
        local_entry(),
        "/server/command",
        json!(["sh", "-c", "exec cat"]),
    );
    let entry = with(
        entry,
        "/server/entrypoint_digests",
        json!({ resolved.clone(): NODE }),
    );
    let catalog = load_valid(vec![entry]);
    assert_eq!(local_of(&catalog).program(), Path::new(&resolved));
    assert_eq!(
        catalog.servers()[0].binding().location_text(),
        format!(
            "command [\"sh\", \"-c\", \"exec cat\"] (program {resolved}) in /opt/mcp/everything"
        )
    );
}

#[test]
fn the_measurement_of_a_local_entry_recomputes_independently() {
    let catalog = load_valid(vec![local_entry()]);
    assert_eq!(catalog.measurement().entry_digests()[0].to_string(), EL);
    assert_eq!(catalog.measurement().digest().to_string(), ML);
}

#[test]
fn each_local_member_changes_the_measurement() {
    let changed: [(&str, Value); 6] = [
        (
            "command",
            with(
                local_entry(),
                "/server/command",
                json!(["/usr/bin/node", "/opt/mcp/everything/dist/index.js", "sse"]),
            ),
        ),
        (
            "cwd (the relative digest path moves with it)",
            with(local_entry(), "/server/cwd", json!("/opt/mcp/other")),
        ),
        (
            "env",
            with(local_entry(), "/server/env", json!({"LOG_LEVEL": "debug"})),
        ),
        (
            "inherit_env",
            with(local_entry(), "/server/inherit_env", json!(["PATH"])),
        ),
        (
            "entrypoint_digests",
            with(
                local_entry(),
                "/server/entrypoint_digests",
                json!({"/usr/bin/node": NODE, "dist/index.js": NODE}),
            ),
        ),
        (
            "entrypoint_digests (one file more)",
            with(
                local_entry(),
                "/server/entrypoint_digests",
                json!({"/usr/bin/node": NODE, "dist/index.js": INDEX, "package.json": INDEX}),
            ),
        ),
    ];
    for (member, entry) in changed {
        let measured = load_valid(vec![entry]).measurement().digest().to_string();
        assert_ne!(measured, ML, "{member}");
    }
    // Not changes: inherit_env order, a relative path written absolute, a digest in uppercase
    // (measured canonical), display_name.
    let same: [(&str, Value); 4] = [
        (
            "digest in uppercase",
            with(
                local_entry(),
                "/server/entrypoint_digests",
                json!({"/usr/bin/node": NODE.replace("545ea5", "545EA5"), "dist/index.js": INDEX}),
            ),
        ),
        (
            "inherit_env order",
            with(
                local_entry(),
                "/server/inherit_env",
                json!(["HOME", "PATH"]),
            ),
        ),
        (
            "digest path written absolute",
            with(
                local_entry(),
                "/server/entrypoint_digests",
                json!({"/usr/bin/node": NODE, "/opt/mcp/everything/dist/index.js": INDEX}),
            ),
        ),
        (
            "display_name",
            without(local_entry(), "/server/display_name"),
        ),
    ];
    for (what, entry) in same {
        let measured = load_valid(vec![entry]).measurement().digest().to_string();
        assert_eq!(measured, ML, "{what}");
    }
    // Absent env and inherit_env are the empty ones.
    let bare = without(without(local_entry(), "/server/env"), "/server/inherit_env");
    let empty = with(
        with(local_entry(), "/server/env", json!({})),
        "/server/inherit_env",
        json!([]),
    );
    assert_eq!(
        load_valid(vec![bare]).measurement().digest(),
        load_valid(vec![empty]).measurement().digest()
    );
}

#[test]
fn network_members_are_refused_on_a_local_server() {
    for (member, value) in [
        ("url", json!("https://a.example/mcp")),
        ("tls_fingerprint", json!(FP_A)),
        ("backup_fingerprints", json!([FP_A])),
        ("spiffe_id", json!("spiffe://corp.example/x")),
        ("rotation_mode", json!("key-pinned")),
        ("tls_trust", json!("pin")),
    ] {
        assert_eq!(
            single_error(with(local_entry(), &format!("/server/{member}"), value)),
            format!(
                "{E0} at /0/server/{member}: {member} is a network server's member, but this \
                 server has a command (a local server, identified by its entrypoint_digests); a \
                 server has either url or command, never both: remove {member}"
            )
        );
    }
}

#[test]
fn local_members_are_refused_on_a_network_server() {
    for member in ["cwd", "env", "inherit_env", "entrypoint_digests"] {
        assert_eq!(
            single_error(with(entry_one(), &format!("/server/{member}"), json!({}))),
            format!(
                "entry 0 (tool_name \"salesforce.query\") at /0/server/{member}: {member} is a \
                 local server's member, but this server has no command (it is a network server, \
                 reached at its url): remove {member}, or replace url with command"
            )
        );
    }
}

#[test]
fn a_command_must_be_a_non_empty_array_of_strings() {
    let command = |value: Value| single_error(with(local_entry(), "/server/command", value));
    assert_eq!(
        command(json!([])),
        format!(
            "{E0} at /0/server/command: command is empty; give the program and its arguments, \
             e.g. [\"/usr/bin/node\", \"dist/index.js\"]"
        )
    );
    assert_eq!(
        command(json!("/usr/bin/node index.js")),
        format!(
            "{E0} at /0/server/command: expected an array of strings (program, arguments), found \
             a string; write an array of strings (program, arguments) here"
        )
    );
    assert_eq!(
        command(json!(["/usr/bin/node", 3])),
        format!(
            "{E0} at /0/server/command/1: expected a string, found a number; write a string here"
        )
    );
    assert_eq!(
        command(json!(["", "x"])),
        format!(
            "{E0} at /0/server/command/0: command[0] is empty; give the program: an absolute \
             path, or a name to look up on the gateway's PATH"
        )
    );
    assert_eq!(
        command(json!(["/usr/bin/node", "a\u{0}b"])),
        format!(
            "{E0} at /0/server/command/1: the text holds a NUL character (U+0000), which no \
             process argument, path or environment variable can carry: remove it"
        )
    );
    assert_eq!(
        command(json!(["./bin/server"])),
        format!(
            "{E0} at /0/server/command/0: \"./bin/server\" is not usable here; write the program \
             as an absolute path, or as a bare name to look up on the gateway's PATH"
        )
    );
}

#[test]
fn a_bare_program_not_on_the_path_is_refused_naming_the_directories() {
    let searched: Vec<String> = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .filter(|directory| directory.is_absolute())
        .map(|directory| directory.display().to_string())
        .collect();
    assert!(!searched.is_empty());
    let entry = with(
        local_entry(),
        "/server/command",
        json!(["toolgate-test-no-such-program"]),
    );
    assert_eq!(
        single_error(entry),
        format!(
            "{E0} at /0/server/command/0: the program \"toolgate-test-no-such-program\" is not an \
             executable file in any absolute directory of the gateway's PATH ({}); write its \
             absolute path, or install it",
            searched.join(":")
        )
    );
}

#[test]
fn cwd_is_required_and_absolute() {
    assert_eq!(
        single_error(without(local_entry(), "/server/cwd")),
        format!(
            "{E0} at /0/server/cwd: required member \"cwd\" is missing; give the absolute \
             directory the server runs in, e.g. \"/opt/mcp/everything\""
        )
    );
    assert_eq!(
        single_error(with(local_entry(), "/server/cwd", json!("opt/mcp"))),
        format!(
            "{E0} at /0/server/cwd: \"opt/mcp\" is not usable here; write the directory the \
             server runs in as an absolute path (a relative one would depend on where the \
             gateway was started)"
        )
    );
}

#[test]
fn env_and_inherit_env_hold_variable_names_once() {
    let env = |value: Value| single_error(with(local_entry(), "/server/env", value));
    assert_eq!(
        env(json!(["LOG_LEVEL=warn"])),
        format!(
            "{E0} at /0/server/env: expected an object of string values, found an array; write \
             an object of string values here"
        )
    );
    assert_eq!(
        env(json!({"LOG_LEVEL": 1})),
        format!(
            "{E0} at /0/server/env/LOG_LEVEL: expected a string, found a number; write a string \
             here"
        )
    );
    assert_eq!(
        env(json!({"A=B": "x"})),
        format!(
            "{E0} at /0/server/env/A=B: \"A=B\" is not an environment variable name (empty, or \
             holding '=' or NUL); fix the name"
        )
    );
    let inherit = |value: Value| single_error(with(local_entry(), "/server/inherit_env", value));
    assert_eq!(
        inherit(json!(["PATH", "HOME", "PATH"])),
        format!(
            "{E0} at /0/server/inherit_env/2: \"PATH\" is already listed at \
             /0/server/inherit_env/0; list each variable once"
        )
    );
    assert_eq!(
        inherit(json!(["PATH", "LOG_LEVEL"])),
        format!(
            "{E0} at /0/server/inherit_env/1: \"LOG_LEVEL\" is both set in env and inherited \
             (inherit_env), so which value the server gets would be ambiguous: keep one"
        )
    );
    assert_eq!(
        inherit(json!([""])),
        format!(
            "{E0} at /0/server/inherit_env/0: \"\" is not an environment variable name (empty, \
             or holding '=' or NUL); fix the name"
        )
    );
}

#[test]
fn entrypoint_digests_are_required_and_must_list_the_program() {
    let digests =
        |value: Value| single_error(with(local_entry(), "/server/entrypoint_digests", value));
    assert_eq!(
        single_error(without(local_entry(), "/server/entrypoint_digests")),
        format!(
            "{E0} at /0/server/entrypoint_digests: required member \"entrypoint_digests\" is \
             missing; list the files the server is started from, each with its digest, e.g. \
             {{\"/usr/bin/node\": \"sha256:...\"}}: they are a local server's identity anchor"
        )
    );
    assert_eq!(
        digests(json!({})),
        format!(
            "{E0} at /0/server/entrypoint_digests: entrypoint_digests is empty; list at least the \
             program command[0] resolves to, with its digest: the digests are a local server's \
             identity anchor"
        )
    );
    // The digest text is server-identity's FileDigest, with its own messages.
    assert_eq!(
        digests(json!({"/usr/bin/node": "sha256:NODE"})),
        format!(
            "{E0} at /0/server/entrypoint_digests/~1usr~1bin~1node: file digest has 4 bytes after \
             `sha256:`, expected 64 hex digits: is it a SHA-256?"
        )
    );
    assert_eq!(
        digests(json!({"/usr/bin/node": NODE, "dist/index.js": INDEX,
                       "/opt/mcp/everything/dist/index.js": INDEX})),
        format!(
            "{E0} at /0/server/entrypoint_digests/dist~1index.js: entrypoint path \
             /opt/mcp/everything/dist/index.js is listed twice: each file has one digest; remove \
             the duplicate"
        )
    );
    assert_eq!(
        digests(json!({"dist/index.js": INDEX})),
        format!(
            "{E0} at /0/server/entrypoint_digests: the program /usr/bin/node (command[0]) is not \
             listed (listed: /opt/mcp/everything/dist/index.js); its digest is what identifies \
             this server before every spawn: add \"/usr/bin/node\": \"sha256:...\""
        )
    );
}

#[test]
fn one_local_command_with_two_sets_of_digests_refuses_the_catalog() {
    let second = with(local_entry(), "/tool_name", json!("everything.echo2"));
    let second = with(
        second,
        "/server/entrypoint_digests",
        json!({"/usr/bin/node": INDEX, "dist/index.js": INDEX}),
    );
    let document = json!([local_entry(), second]);
    assert_eq!(
        error_messages(&document),
        [format!(
            "entry 1 (tool_name \"everything.echo2\") at /1/server: the local server command \
             [\"/usr/bin/node\", \"/opt/mcp/everything/dist/index.js\", \"stdio\"] (program \
             /usr/bin/node) in /opt/mcp/everything is bound here to entrypoint_digests \
             {{/opt/mcp/everything/dist/index.js: {INDEX}, /usr/bin/node: {INDEX}}}, but {E0} at \
             /0/server binds the same command, cwd and env to \
             {{/opt/mcp/everything/dist/index.js: {INDEX}, /usr/bin/node: {NODE}}}; the same \
             command runs the same files whichever tool is called, so one of the two entries \
             fails its entrypoint check before every spawn, or two versions were approved for one \
             server unnoticed: give every entry for this command the same entrypoint_digests"
        )]
    );
    assert!(matches!(
        load(&document).unwrap_err().errors()[0],
        CatalogError::ConflictingLocalIdentity { .. }
    ));
    // Another env is another server: no conflict.
    let other_env = with(
        with(local_entry(), "/tool_name", json!("everything.echo2")),
        "/server/env",
        json!({"LOG_LEVEL": "debug"}),
    );
    let other_env = with(
        other_env,
        "/server/entrypoint_digests",
        json!({"/usr/bin/node": INDEX}),
    );
    assert_eq!(
        load_valid(vec![local_entry(), other_env]).servers().len(),
        2
    );
    // The same digests: one server, two tools.
    let same = with(local_entry(), "/tool_name", json!("everything.echo2"));
    assert_eq!(load_valid(vec![local_entry(), same]).servers().len(), 1);
}

#[test]
fn a_duplicate_local_tool_name_shows_the_command_and_the_program_s_digest() {
    let document = json!([local_entry(), local_entry()]);
    let line = format!(
        "  - command [\"/usr/bin/node\", \"/opt/mcp/everything/dist/index.js\", \"stdio\"] \
         (program /usr/bin/node) (entrypoint_digests: {NODE} for /usr/bin/node)"
    );
    assert_eq!(
        error_messages(&document),
        [format!(
            "Duplicate tool name in catalog: \"everything.echo\" is registered by two different \
             servers:\n{line}\n{line}\nEach tool name must map to exactly one upstream server."
        )]
    );
}

/// A valid local server is described from its binding, an invalid one from what was read:
/// the same line for one command.
#[test]
fn a_valid_and_an_invalid_local_server_are_shown_alike() {
    let invalid = with(local_entry(), "/server/url", json!("https://a.example/mcp"));
    let line = format!(
        "  - command [\"/usr/bin/node\", \"/opt/mcp/everything/dist/index.js\", \"stdio\"] \
         (program /usr/bin/node) (entrypoint_digests: {NODE} for /usr/bin/node)"
    );
    assert_colliding_alike(&local_entry(), &invalid, "everything.echo", &line);
}

#[test]
fn wrong_types_and_an_empty_path_in_local_members_are_named() {
    assert_eq!(
        single_error(with(local_entry(), "/server/cwd", json!(1))),
        format!(
            "{E0} at /0/server/cwd: expected a string (an absolute path), found a number; write a \
             string (an absolute path) here"
        )
    );
    assert_eq!(
        single_error(with(
            local_entry(),
            "/server/entrypoint_digests",
            json!([NODE])
        )),
        format!(
            "{E0} at /0/server/entrypoint_digests: expected an object of path: \"sha256:...\", \
             found an array; write an object of path: \"sha256:...\" here"
        )
    );
    assert_eq!(
        single_error(with(
            local_entry(),
            "/server/entrypoint_digests",
            json!({"/usr/bin/node": NODE, "": INDEX})
        )),
        format!(
            "{E0} at /0/server/entrypoint_digests/: \"\" is not usable here; name a file: an \
             absolute path, or a path relative to cwd"
        )
    );
    assert_eq!(
        single_error(with(
            local_entry(),
            "/server/entrypoint_digests",
            json!({"/usr/bin/node": [NODE]})
        )),
        format!(
            "{E0} at /0/server/entrypoint_digests/~1usr~1bin~1node: expected a string, found an \
             array; write a string here"
        )
    );
    assert_eq!(
        single_error(with(local_entry(), "/server/inherit_env", json!("PATH"))),
        format!(
            "{E0} at /0/server/inherit_env: expected an array of variable names, found a string; \
             write an array of variable names here"
        )
    );
}

#[test]
fn a_local_server_with_an_unknown_member_is_not_compared_for_identity() {
    // The typo is the one problem reported: the invalid server object takes no part in the
    // one-identity rule (as for network servers).
    let typo = with(
        with(local_entry(), "/tool_name", json!("everything.echo2")),
        "/server/entrypoint_digest",
        json!({}),
    );
    let typo = with(
        typo,
        "/server/entrypoint_digests",
        json!({"/usr/bin/node": INDEX}),
    );
    let messages = error_messages(&json!([local_entry(), typo]));
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert!(
        messages[0].starts_with(
            "entry 1 (tool_name \"everything.echo2\") at /1/server/entrypoint_digest: unknown \
             member \"entrypoint_digest\" (did you mean \"entrypoint_digests\"?)"
        ),
        "{}",
        messages[0]
    );
}
