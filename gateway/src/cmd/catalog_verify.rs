//! `toolgate catalog verify FILE`: the lockfile check (docs/design.md §9). Every server of the
//! catalog is reached with its pinned identity, all at once, each within a timeout, and every
//! live definition is compared with the approved one.
//!
//! Exit 0 when everything matches; 1 on any drift (`changed`, `missing`, `doubled`) or
//! `identity_mismatch`; 2 when a server cannot be reached (the check is incomplete) or on a
//! usage error. Served tools the catalog lacks are reported as `unpinned` and do not fail the
//! check: the gateway never serves them, and a catalog may pin a subset on purpose.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use catalog_fold::{CatalogDigest, DefinitionDiff};
use catalog_store::{Catalog, CatalogEntry, CatalogLoadError, ServerBinding, UpstreamServer};
use jcs_digest::order::Sorted;
use jcs_digest::{Digest, Profile, tool_definition_digest};
use serde_json::{Value, json};
use server_identity::{IdentityError, Observation};

use crate::cmd::approval::served_name;
use crate::cmd::common::{profile_from_label, write_stdout};
use crate::cmd::invisible::invisible_warnings;
use crate::cmd::reach::{
    ListFailure, ReachArgs, Trust, list_local_tools, list_tools, observe_identity, runtime,
};
use crate::input::display_name;
use crate::outcome::{Failure, Verdict};
use toolgate::local::LocalCommand;

/// `toolgate catalog verify`
#[derive(Debug, clap::Args)]
pub(crate) struct CatalogVerifyArgs {
    /// The catalog file.
    #[arg(value_name = "FILE")]
    pub(crate) file: PathBuf,
    #[command(flatten)]
    pub(crate) reach: ReachArgs,
    /// Also report each observed catalog digest under this profile label (the
    /// trace.mcp-tool-definition.v1 digest is always reported).
    #[arg(long, value_name = "LABEL")]
    pub(crate) label: Option<String>,
    /// Print one JSON object instead of lines.
    #[arg(long)]
    pub(crate) json: bool,
}

/// What reaching one server with its pinned identity gave.
pub(crate) enum Reached {
    /// Its live listing.
    Listed(Vec<Value>),
    /// It is not the pinned server: the handshake refused it. `presented` is what it shows to
    /// a connection that trusts nothing (when that could be seen).
    IdentityMismatch {
        error: IdentityError,
        presented: Option<Box<Observation>>,
    },
    /// No listing (unreachable, a bad answer, too slow).
    Unreachable(String),
}

/// Reaches `binding`'s server with its pinned anchors and lists its tools.
pub(crate) async fn reach_server(
    binding: &ServerBinding,
    trust: &Trust,
    timeout: Duration,
) -> Reached {
    let Some(network) = binding.network() else {
        let Some(local) = binding.local() else {
            return Reached::Unreachable(format!(
                "{}: this kind of server is not reached by this command",
                binding.location_text()
            ));
        };
        // Started with the catalog's own settings; an entrypoint that changed refuses the
        // start (nothing runs) and is reported with both digests.
        return match list_local_tools(LocalCommand::from_catalog(local), timeout).await {
            Ok(tools) => Reached::Listed(tools),
            Err(ListFailure::Identity(error)) => Reached::IdentityMismatch {
                error,
                presented: None,
            },
            Err(ListFailure::Unavailable(why)) => Reached::Unreachable(why),
        };
    };
    let url = network.url();
    match list_tools(url, network.anchors(), trust, timeout).await {
        Ok(tools) => Reached::Listed(tools),
        Err(ListFailure::Identity(error)) => {
            let presented = tokio::time::timeout(timeout, observe_identity(url, &trust.roots))
                .await
                .ok()
                .and_then(Result::ok)
                .map(Box::new);
            Reached::IdentityMismatch { error, presented }
        }
        Err(ListFailure::Unavailable(why)) => Reached::Unreachable(why),
    }
}

/// Reaches every server of the catalog at once (concurrently, each within `timeout`); the
/// results in the order of [`Catalog::servers`].
pub(crate) fn reach_all(
    servers: &[&UpstreamServer],
    trust: Trust,
    timeout: Duration,
) -> Result<Vec<Reached>, Failure> {
    let runtime = runtime()?;
    let trust = Arc::new(trust);
    runtime.block_on(async {
        let tasks: Vec<_> = servers
            .iter()
            .map(|server| {
                let binding = server.binding().clone();
                let trust = trust.clone();
                tokio::spawn(async move { reach_server(&binding, &trust, timeout).await })
            })
            .collect();
        let mut reached = Vec::with_capacity(tasks.len());
        for task in tasks {
            reached.push(task.await.unwrap_or_else(|error| {
                Reached::Unreachable(format!("the check failed: {error}"))
            }));
        }
        Ok(reached)
    })
}

/// How one catalog tool compares with what its server lists.
pub(crate) enum ToolState<'a> {
    /// The live definition hashes to `definition_hash`.
    Ok,
    /// It does not; the live definition and the difference from the approved one.
    Changed {
        live: &'a Value,
        live_hash: Option<Digest>,
        difference: DefinitionDiff,
    },
    /// The server does not list `upstream_name`.
    Missing,
    /// The server lists `upstream_name` more than once (the gateway denies such a tool).
    Doubled,
}

impl ToolState<'_> {
    pub(crate) fn status(&self) -> &'static str {
        match self {
            ToolState::Ok => "ok",
            ToolState::Changed { .. } => "changed",
            ToolState::Missing => "missing",
            ToolState::Doubled => "doubled",
        }
    }
}

/// Compares `entry` with the live listing `served`.
pub(crate) fn tool_state<'a>(entry: &CatalogEntry, served: &'a [Value]) -> ToolState<'a> {
    let mut live = served
        .iter()
        .filter(|tool| served_name(tool) == Some(entry.upstream_name()));
    let (Some(first), None) = (live.next(), live.next()) else {
        return if served
            .iter()
            .any(|tool| served_name(tool) == Some(entry.upstream_name()))
        {
            ToolState::Doubled
        } else {
            ToolState::Missing
        };
    };
    let live_hash = tool_definition_digest(first, Profile::Trace).ok();
    if live_hash == Some(entry.definition_hash()) {
        return ToolState::Ok;
    }
    ToolState::Changed {
        live: first,
        live_hash,
        difference: DefinitionDiff::between(entry.approved_definition(), first),
    }
}

/// A local server's entrypoint that did not verify: the path, its pinned digest, and the digest
/// read now (or why it could not be read).
struct EntrypointFailure {
    path: String,
    expected: Option<String>,
    observed: Result<String, String>,
}

impl EntrypointFailure {
    fn of(binding: &ServerBinding, error: &IdentityError) -> Option<EntrypointFailure> {
        match error {
            IdentityError::EntrypointMismatch {
                path,
                expected,
                observed,
            } => Some(EntrypointFailure {
                path: path.display().to_string(),
                expected: Some(expected.to_string()),
                observed: Ok(observed.to_string()),
            }),
            IdentityError::EntrypointUnreadable { path, detail } => Some(EntrypointFailure {
                path: path.display().to_string(),
                expected: binding.local().and_then(|local| {
                    local
                        .entrypoint_digests()
                        .iter()
                        .find(|(pinned, _)| *pinned == path.as_path())
                        .map(|(_, digest)| digest.to_string())
                }),
                observed: Err(detail.clone()),
            }),
            _ => None,
        }
    }
}

/// The lines an identity mismatch is reported with, and its JSON.
pub(crate) fn mismatch_lines(
    binding: &ServerBinding,
    error: &IdentityError,
    presented: Option<&Observation>,
) -> Vec<String> {
    let mut lines = vec![format!("identity_mismatch ({}): {error}", error.anchor())];
    if let Some(failure) = EntrypointFailure::of(binding, error) {
        lines.push(format!(
            "expected   {}  {}",
            failure.expected.as_deref().unwrap_or("(a pinned digest)"),
            failure.path
        ));
        lines.push(match &failure.observed {
            Ok(digest) => format!("observed   {digest}  {}", failure.path),
            Err(detail) => format!("observed   unreadable: {detail}"),
        });
        return lines;
    }
    lines.push(format!("expected   {}", expected_text(binding)));
    lines.push(match presented {
        Some(seen) => format!(
            "presented  spki_sha256 {}, cert_sha256 {}, spiffe_ids {}",
            seen.spki_sha256,
            seen.cert_sha256,
            spiffe_text(seen)
        ),
        None => "presented  (could not be observed again)".to_owned(),
    });
    lines
}

fn expected_text(binding: &ServerBinding) -> String {
    let Some(binding) = binding.network() else {
        return binding.location_text();
    };
    let mut parts = Vec::new();
    if let Some(pin) = binding.tls_fingerprint() {
        parts.push(format!(
            "tls_fingerprint {pin} ({})",
            binding.rotation_mode()
        ));
    }
    for backup in binding.backup_fingerprints() {
        parts.push(format!("backup {backup}"));
    }
    if let Some(id) = binding.spiffe_id() {
        parts.push(format!("spiffe_id {id}"));
    }
    parts.join(", ")
}

fn spiffe_text(seen: &Observation) -> String {
    if seen.spiffe_ids.is_empty() {
        "none".to_owned()
    } else {
        seen.spiffe_ids
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn mismatch_json(
    binding: &ServerBinding,
    error: &IdentityError,
    presented: Option<&Observation>,
) -> Value {
    if let Some(failure) = EntrypointFailure::of(binding, error) {
        return json!({
            "anchor": error.anchor().to_string(),
            "message": error.to_string(),
            "path": failure.path,
            "expected": failure.expected.map(|digest| json!({"digest": digest})),
            "presented": match failure.observed {
                Ok(digest) => json!({"digest": digest}),
                Err(detail) => json!({"error": detail}),
            },
        });
    }
    let network = binding.network();
    json!({
        "anchor": error.anchor().to_string(),
        "message": error.to_string(),
        "expected": {
            "tls_fingerprint": network.and_then(|n| n.tls_fingerprint()).map(ToString::to_string),
            "backup_fingerprints": network.map(|n| n.backup_fingerprints()).unwrap_or_default().iter().map(ToString::to_string).collect::<Vec<_>>(),
            "spiffe_id": network.and_then(|n| n.spiffe_id()).map(ToString::to_string),
            "rotation_mode": network.map(|n| n.rotation_mode().to_string()),
        },
        "presented": presented.map(|seen| json!({
            "spki_sha256": seen.spki_sha256.to_string(),
            "cert_sha256": seen.cert_sha256.to_string(),
            "spiffe_ids": seen.spiffe_ids.iter().map(ToString::to_string).collect::<Vec<_>>(),
        })),
    })
}

/// Counts over the whole run.
#[derive(Default)]
struct Tally {
    ok: usize,
    changed: usize,
    missing: usize,
    doubled: usize,
    unpinned: usize,
    mismatched: usize,
    unreachable: usize,
}

pub(crate) fn run(args: &CatalogVerifyArgs) -> Result<Verdict, Failure> {
    let mut profiles = vec![Profile::Trace];
    let extra = profile_from_label(args.label.as_deref())?;
    if args.label.is_some() && extra != Profile::Trace {
        profiles.push(extra);
    }
    let (trust, timeout) = args.reach.parse()?;
    let catalog = load(&args.file)?;
    for warning in catalog.warnings() {
        eprintln!("warning: {warning}");
    }
    let servers: Vec<&UpstreamServer> = catalog.servers().iter().collect();
    let reached = reach_all(&servers, trust, timeout)?;

    let mut tally = Tally::default();
    let mut text = String::new();
    let mut json_servers = Vec::new();
    for (server, reached) in servers.iter().zip(&reached) {
        let (server_text, server_json) =
            report_server(&catalog, server, reached, &profiles, &mut tally);
        text.push_str(&server_text);
        json_servers.push(server_json);
    }
    let passed =
        tally.changed + tally.missing + tally.doubled + tally.mismatched + tally.unreachable == 0;
    let summary = format!(
        "verify: {} ok, {} changed, {} missing, {} doubled, {} unpinned; {} server{}, {} identity mismatch{}, {} unreachable\n",
        tally.ok,
        tally.changed,
        tally.missing,
        tally.doubled,
        tally.unpinned,
        servers.len(),
        if servers.len() == 1 { "" } else { "s" },
        tally.mismatched,
        if tally.mismatched == 1 { "" } else { "es" },
        tally.unreachable
    );
    let out = if args.json {
        format!(
            "{}\n",
            Sorted(&json!({
                "file": display_name(&args.file),
                "servers": json_servers,
                "summary": {
                    "ok": tally.ok, "changed": tally.changed, "missing": tally.missing,
                    "doubled": tally.doubled, "unpinned": tally.unpinned,
                    "identity_mismatch": tally.mismatched, "unreachable": tally.unreachable,
                },
                "passed": passed,
            }))
        )
    } else {
        format!("{text}{summary}")
    };
    write_stdout(&out)?;
    if tally.unreachable > 0 {
        return Err(Failure::Usage(format!(
            "{} of {} server{} could not be reached, so the check is incomplete",
            tally.unreachable,
            servers.len(),
            if servers.len() == 1 { "" } else { "s" },
        )));
    }
    Ok(if passed { Verdict::Pass } else { Verdict::Fail })
}

/// Loads the catalog as the gateway would: invalid is exit 1, unreadable exit 2.
pub(crate) fn load(path: &std::path::Path) -> Result<Catalog, Failure> {
    Catalog::load(path).map_err(|error| match error {
        CatalogLoadError::Read { path, source } => Failure::io(
            format!(
                "cannot read the catalog {} (check the path and its permissions)",
                path.display()
            ),
            source,
        ),
        other => Failure::Invalid(other.to_string()),
    })
}

fn report_server(
    catalog: &Catalog,
    server: &UpstreamServer,
    reached: &Reached,
    profiles: &[Profile],
    tally: &mut Tally,
) -> (String, Value) {
    let binding = server.binding();
    let entries: Vec<&CatalogEntry> = server
        .tool_names()
        .iter()
        .filter_map(|name| catalog.lookup(name))
        .collect();
    let mut text = binding.location_text();
    if let Some(name) = binding.display_name() {
        text.push_str(&format!(" ({name})"));
    }
    let mut json = json!({
        "url": binding.network().map(|network| network.url().as_str()),
        "command": binding.local().map(|local| local.command()),
        "display_name": binding.display_name(),
        "identity": Value::Null,
        "identity_mismatch": Value::Null,
        "error": Value::Null,
        "observed_digests": Value::Null,
        "tools": [],
        "unpinned": [],
        "warnings": [],
    });
    let served = match reached {
        Reached::Listed(served) => served,
        Reached::IdentityMismatch { error, presented } => {
            tally.mismatched += 1;
            json["identity"] = "identity_mismatch".into();
            json["identity_mismatch"] = mismatch_json(binding, error, presented.as_deref());
            text.push('\n');
            for line in mismatch_lines(binding, error, presented.as_deref()) {
                text.push_str(&format!("  {line}\n"));
            }
            text.push_str(&format!(
                "  not checked  {}\n",
                server.tool_names().join(", ")
            ));
            return (text, json);
        }
        Reached::Unreachable(why) => {
            tally.unreachable += 1;
            json["identity"] = "unreachable".into();
            json["error"] = why.as_str().into();
            text.push_str(&format!("\n  unreachable: {why}\n"));
            text.push_str(&format!(
                "  not checked  {}\n",
                server.tool_names().join(", ")
            ));
            return (text, json);
        }
    };
    json["identity"] = "ok".into();
    let mut digests = serde_json::Map::new();
    let mut digest_text = Vec::new();
    for profile in profiles {
        match CatalogDigest::compute(served, *profile) {
            Ok(digest) => {
                digest_text.push(format!("{} ({})", digest.catalog(), profile.label()));
                digests.insert(
                    profile.label().to_owned(),
                    digest.catalog().to_string().into(),
                );
            }
            Err(error) => {
                digest_text.push(format!("none under {}: {error}", profile.label()));
                digests.insert(profile.label().to_owned(), Value::Null);
            }
        }
    }
    json["observed_digests"] = Value::Object(digests);
    text.push_str(": identity ok\n");
    text.push_str(&format!(
        "  observed tools/list digest {}\n",
        digest_text.join(", ")
    ));

    let mut warnings = Vec::new();
    let mut tools = Vec::new();
    for entry in &entries {
        let state = tool_state(entry, served);
        let names = if entry.tool_name() == entry.upstream_name() {
            format!("{:?}", entry.tool_name())
        } else {
            format!("{:?} ({:?})", entry.tool_name(), entry.upstream_name())
        };
        let mut tool_json = json!({
            "tool_name": entry.tool_name(),
            "upstream_name": entry.upstream_name(),
            "status": state.status(),
            "approved": entry.definition_hash().to_string(),
            "live": Value::Null,
            "changes": Value::Null,
        });
        match &state {
            ToolState::Ok => {
                tally.ok += 1;
                tool_json["live"] = entry.definition_hash().to_string().into();
                text.push_str(&format!("  ok        {names}\n"));
            }
            ToolState::Changed {
                live,
                live_hash,
                difference,
            } => {
                tally.changed += 1;
                let live_text = live_hash.map_or_else(|| "no digest".to_owned(), |d| d.to_string());
                tool_json["live"] = live_hash.map(|d| d.to_string()).into();
                tool_json["changes"] = difference.to_json();
                text.push_str(&format!(
                    "  changed   {names}  {} -> {live_text}\n",
                    entry.definition_hash()
                ));
                for line in difference.changes() {
                    text.push_str(&format!("      {line}\n"));
                }
                warnings.extend(invisible_warnings(entry.tool_name(), live));
            }
            ToolState::Missing => {
                tally.missing += 1;
                text.push_str(&format!(
                    "  missing   {names}: the server does not list it\n"
                ));
            }
            ToolState::Doubled => {
                tally.doubled += 1;
                text.push_str(&format!(
                    "  doubled   {names}: the server lists it more than once\n"
                ));
            }
        }
        tools.push(tool_json);
    }
    json["tools"] = Value::Array(tools);

    let pinned: Vec<&str> = entries.iter().map(|entry| entry.upstream_name()).collect();
    let mut unpinned = Vec::new();
    for tool in served {
        let Some(name) = served_name(tool) else {
            continue;
        };
        if pinned.contains(&name) || unpinned.contains(&name.to_owned()) {
            continue;
        }
        unpinned.push(name.to_owned());
        tally.unpinned += 1;
        text.push_str(&format!(
            "  unpinned  {name:?}: served, not in the catalog\n"
        ));
        warnings.extend(invisible_warnings(name, tool));
    }
    json["unpinned"] = unpinned.into();
    for warning in &warnings {
        eprintln!("warning: {warning}");
    }
    json["warnings"] = warnings.into();
    (text, json)
}
