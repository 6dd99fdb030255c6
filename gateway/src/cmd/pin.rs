//! `toolgate pin URL …` and `toolgate pin … -- COMMAND ARGS…`: trust a server on first use and
//! write its catalog entries (docs/design.md §9): observe what it presents (a network server's
//! TLS identity, a local server's entrypoint digests) and what it lists, say plainly what is
//! about to be trusted, and write complete entries to stdout or merge them into `--catalog FILE`.
//!
//! A local server is started exactly as the gateway will start it (the same program, arguments,
//! `cwd`, `env` and `inherit_env`, through `LocalUpstream`, which verifies the digests first),
//! listed, and stopped. Its `inherit_env` defaults to `PATH` and `HOME`: `PATH` so that a
//! `#!/usr/bin/env` script and the programs a server runs are found, `HOME` because
//! interpreters and package managers (node, npm, Python, uv) read their configuration and caches
//! under it; nothing else of the caller's environment (tokens, keys) reaches the server unless
//! named. `--inherit-env` replaces the default.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

use catalog_store::{Catalog, UpstreamUrl};
use serde_json::{Map, Value, json};
use server_identity::{Observation, RotationMode, ServerAnchors, SpiffeId, TlsTrust};

use crate::cmd::approval::{approve, check_approver, now_rfc3339, served_name};
use crate::cmd::catalog_text::{CatalogText, new_document, write_atomically};
use crate::cmd::common::write_stdout;
use crate::cmd::identity_command::Entrypoints;
use crate::cmd::invisible::invisible_warnings;
use crate::cmd::reach::{
    ListFailure, ReachArgs, Trust, list_local_tools, list_tools, observe_identity, runtime,
};
use crate::outcome::{Failure, Verdict};
use toolgate::local::LocalCommand;

/// `toolgate pin`
#[derive(Debug, clap::Args)]
pub(crate) struct PinArgs {
    /// The server's https URL, e.g. `https://mcp.example.com/mcp`.
    #[arg(value_name = "URL")]
    pub(crate) url: Option<String>,
    /// Who approves these definitions (written as each entry's `approved_by`).
    #[arg(long, value_name = "WHO")]
    pub(crate) approved_by: String,
    /// Put this before each served name to make the catalog's `tool_name` (`crm.` gives
    /// `crm.query` for the served `query`).
    #[arg(long, value_name = "NS.")]
    pub(crate) prefix: Option<String>,
    /// Pin only this served tool (repeatable); default: every tool the server lists.
    #[arg(long = "tool", value_name = "NAME")]
    pub(crate) tools: Vec<String>,
    /// Merge the entries into this catalog file (created if absent), atomically; a tool name
    /// it already has refuses the whole merge. Without it, stdout is a new catalog document.
    #[arg(long, value_name = "FILE")]
    pub(crate) catalog: Option<PathBuf>,
    /// With --catalog: print one JSON object on stdout saying what was pinned.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) reach: ReachArgs,
    /// With `-- COMMAND`: the directory the server runs in, and against which relative
    /// arguments are looked up to pin; written as the entry's `cwd`. Default: the current one.
    #[arg(long, value_name = "DIR")]
    pub(crate) cwd: Option<PathBuf>,
    /// With `-- COMMAND`: a variable of the gateway's environment the server inherits
    /// (repeatable; written as `inherit_env`). Default: `PATH` and `HOME`; naming any replaces
    /// the default.
    #[arg(long = "inherit-env", value_name = "VAR")]
    pub(crate) inherit_env: Vec<String>,
    /// With `-- COMMAND`: a variable set for the server (repeatable; written in `env`, so in
    /// the catalog file: name a secret with --inherit-env instead).
    #[arg(long = "env", value_name = "K=V")]
    pub(crate) env: Vec<String>,
    /// A local (stdio) server's command line, after `--`: the program (an absolute path, or a
    /// name looked up on PATH) and its arguments; the program and every argument naming an
    /// existing file are pinned by digest.
    #[arg(last = true, value_name = "COMMAND")]
    pub(crate) command: Vec<String>,
}

/// What is pinned: a network server by URL, or a local one by its command line.
enum Target {
    Network(UpstreamUrl),
    Local(Box<LocalPlan>),
}

impl Target {
    fn label(&self) -> String {
        match self {
            Target::Network(url) => url.as_str().to_owned(),
            Target::Local(plan) => plan.command.label(),
        }
    }
}

/// A local server as it will be started and written.
struct LocalPlan {
    argv: Vec<String>,
    found: Entrypoints,
    command: LocalCommand,
}

impl LocalPlan {
    fn parse(args: &PinArgs) -> Result<LocalPlan, Failure> {
        let here = std::env::current_dir()
            .map_err(|error| Failure::io("cannot read the current directory", error))?;
        let cwd = match &args.cwd {
            Some(dir) => here.join(dir),
            None => here,
        };
        if !cwd.is_dir() {
            return Err(Failure::Usage(format!(
                "--cwd {}: not a directory (the server runs in it)",
                cwd.display()
            )));
        }
        let mut env = BTreeMap::new();
        for pair in &args.env {
            let Some((name, value)) = pair.split_once('=').filter(|(name, _)| !name.is_empty())
            else {
                return Err(Failure::Usage(format!(
                    "--env {pair:?}: write NAME=VALUE (a variable set for the server)"
                )));
            };
            if env.insert(name.to_owned(), value.to_owned()).is_some() {
                return Err(Failure::Usage(format!("--env {name}: given twice")));
            }
        }
        let inherit_env: Vec<String> = if args.inherit_env.is_empty() {
            ["PATH", "HOME"]
                .into_iter()
                .filter(|name| !env.contains_key(*name))
                .map(str::to_owned)
                .collect()
        } else {
            let mut names: Vec<String> = Vec::new();
            for name in &args.inherit_env {
                if env.contains_key(name) {
                    return Err(Failure::Usage(format!(
                        "--inherit-env {name} and --env {name}=…: a variable is either set or \
                         inherited"
                    )));
                }
                if !names.contains(name) {
                    names.push(name.clone());
                }
            }
            names
        };
        let found = Entrypoints::compute(&args.command, &cwd, std::env::var_os("PATH").as_deref())?;
        let name = found.program.file_name().map_or_else(
            || found.program.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let mut command = LocalCommand::new(name, &found.program, &cwd);
        command.args = args.command.iter().skip(1).cloned().collect();
        command.env = env;
        command.inherit_env = inherit_env;
        command.entrypoints = found.digests();
        Ok(LocalPlan {
            argv: args.command.clone(),
            found,
            command,
        })
    }

    fn server_json(&self) -> Value {
        json!({
            "command": self.argv,
            "cwd": self.command.cwd.display().to_string(),
            "env": self.command.env,
            "inherit_env": self.command.inherit_env,
            "entrypoint_digests": self.found.digests_object(),
        })
    }
}

/// What identifies the pinned server, as observed.
enum Seen {
    Network {
        observation: Box<Observation>,
        spiffe_id: Option<SpiffeId>,
        /// `None` with a SPIFFE ID: its bundle replaces the web PKI (docs/design.md §3).
        tls_trust: Option<TlsTrust>,
    },
    Local(Box<LocalPlan>),
}

/// What was observed and decided, for the report.
struct Pinned {
    seen: Seen,
    entries: Vec<Value>,
    /// Served tools not pinned (not named with --tool).
    left_out: Vec<String>,
    warnings: Vec<String>,
}

fn target(args: &PinArgs) -> Result<Target, Failure> {
    if !args.command.is_empty() {
        if let Some(url) = &args.url {
            return Err(Failure::Usage(format!(
                "pin {url} -- {}: give a URL or a command, not both",
                args.command.join(" ")
            )));
        }
        return Ok(Target::Local(Box::new(LocalPlan::parse(args)?)));
    }
    if args.cwd.is_some() || !args.env.is_empty() || !args.inherit_env.is_empty() {
        return Err(Failure::Usage(
            "pin: --cwd, --env and --inherit-env are for a local server (`toolgate pin … -- \
             COMMAND ARGS…`)"
                .to_owned(),
        ));
    }
    let Some(url) = args.url.as_deref() else {
        return Err(Failure::Usage(
            "pin: give the server's https URL (toolgate pin https://HOST/mcp --approved-by WHO), \
             or a local server's command after `--`"
                .to_owned(),
        ));
    };
    url.parse()
        .map(Target::Network)
        .map_err(|problem| Failure::Usage(format!("invalid URL `{url}`: {problem}")))
}

pub(crate) fn run(args: &PinArgs) -> Result<Verdict, Failure> {
    check_approver(&args.approved_by)?;
    let target = target(args)?;
    let label = target.label();
    let (trust, timeout) = args.reach.parse()?;
    // The file is read (and must load) before the server is reached: a broken catalog is
    // reported before anything is trusted.
    let existing = match &args.catalog {
        Some(path) => read_existing(path)?,
        None => None,
    };

    let pinned = match target {
        Target::Network(url) => {
            runtime()?.block_on(observe_and_list(args, &url, &trust, timeout))?
        }
        Target::Local(plan) => runtime()?.block_on(start_and_list(args, *plan, timeout))?,
    };
    let new_text = new_document(&pinned.entries);
    // Whatever is written must load: pin never produces a catalog the gateway refuses.
    Catalog::from_slice(new_text.as_bytes())
        .map_err(|error| Failure::Invalid(format!("the pinned entries do not load: {error}")))?;
    if let (Some(path), Some((catalog, _))) = (&args.catalog, &existing) {
        refuse_collisions(path, catalog, &pinned.entries)?;
    }
    report(&label, &pinned);

    let Some(path) = &args.catalog else {
        write_stdout(&new_text)?;
        return Ok(Verdict::Pass);
    };
    let kept = match existing {
        Some((catalog, text)) => {
            let merged = text.append(&pinned.entries);
            Catalog::from_slice(merged.as_bytes()).map_err(|error| {
                Failure::Invalid(format!(
                    "{}: the merged catalog would not load, so nothing was written: {error}",
                    path.display()
                ))
            })?;
            write_atomically(path, merged.as_bytes())?;
            catalog.entries().len()
        }
        None => {
            write_atomically(path, new_text.as_bytes())?;
            0
        }
    };
    eprintln!(
        "wrote {} entr{} to {} ({kept} existing entr{} untouched)",
        pinned.entries.len(),
        if pinned.entries.len() == 1 {
            "y"
        } else {
            "ies"
        },
        path.display(),
        if kept == 1 { "y" } else { "ies" },
    );
    if args.json {
        write_stdout(format!(
            "{}\n",
            jcs_digest::order::Sorted(&summary_json(&label, path, &pinned))
        ))?;
    }
    Ok(Verdict::Pass)
}

/// The catalog at `path` and its text, or `None` when there is no file yet. A file that does
/// not load is exit 1: merging into it would hide its problems.
fn read_existing(path: &Path) -> Result<Option<(Catalog, CatalogText)>, Failure> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => {
            return Err(Failure::io(
                format!("cannot read --catalog {}", path.display()),
                error,
            ));
        }
    };
    let catalog = Catalog::from_slice(&bytes).map_err(|error| {
        Failure::Invalid(format!(
            "--catalog {} does not load, so nothing is merged into it (fix it first; `toolgate \
             catalog check` lists every problem): {error}",
            path.display()
        ))
    })?;
    let text = String::from_utf8(bytes)
        .map_err(|_| Failure::Invalid(format!("--catalog {}: not UTF-8", path.display())))
        .and_then(|text| {
            CatalogText::scan(text)
                .map_err(|why| Failure::Invalid(format!("--catalog {}: {why}", path.display())))
        })?;
    Ok(Some((catalog, text)))
}

async fn observe_and_list(
    args: &PinArgs,
    url: &UpstreamUrl,
    trust: &Trust,
    timeout: Duration,
) -> Result<Pinned, Failure> {
    let observation = tokio::time::timeout(timeout, observe_identity(url, &trust.roots))
        .await
        .map_err(|_| {
            Failure::Usage(format!(
                "{url}: no TLS handshake within {} ms",
                timeout.as_millis()
            ))
        })?
        .map_err(|error| Failure::Usage(format!("cannot observe {url}: {error}")))?;
    let spiffe_id = match observation.spiffe_ids.as_slice() {
        [id] if trust.bundles.anchors(id.trust_domain()).is_some() => Some(id.clone()),
        _ => None,
    };
    let tls_trust = match (&spiffe_id, observation.chain_valid) {
        (Some(_), _) => None,
        (None, Some(true)) => Some(TlsTrust::Webpki),
        (None, _) => Some(TlsTrust::Pin),
    };
    let mut builder = ServerAnchors::builder();
    builder
        .fingerprint(observation.spki_sha256)
        .rotation_mode(RotationMode::KeyPinned);
    if let Some(id) = &spiffe_id {
        builder.spiffe_id(id.clone());
    }
    if let Some(trust) = tls_trust {
        builder.tls_trust(trust);
    }
    let anchors = builder
        .build()
        .map_err(|error| Failure::Usage(format!("{url}: cannot pin what it presents: {error}")))?;
    // The listing goes through the anchors about to be written: the definitions come from the
    // server that was observed, verified in the handshake as the gateway will verify it.
    let served =
        list_tools(url, &anchors, trust, timeout)
            .await
            .map_err(|failure| match failure {
                ListFailure::Identity(error) => Failure::Invalid(format!(
                    "{url} presented another identity on a second connection, so nothing is \
                 pinned: {error}"
                )),
                ListFailure::Unavailable(why) => {
                    Failure::Usage(format!("cannot list the tools of {url}: {why}"))
                }
            })?;
    let server = server_json(url.as_str(), &observation, spiffe_id.as_ref(), tls_trust);
    let seen = Seen::Network {
        observation: Box::new(observation),
        spiffe_id,
        tls_trust,
    };
    pinned(args, url.as_str(), &served, &server, seen)
}

/// Starts the local server as the catalog entry will (its digests verified first), lists every
/// tool, stops it.
async fn start_and_list(
    args: &PinArgs,
    plan: LocalPlan,
    timeout: Duration,
) -> Result<Pinned, Failure> {
    let label = plan.command.label();
    let served = list_local_tools(plan.command.clone(), timeout)
        .await
        .map_err(|failure| match failure {
            ListFailure::Identity(error) => Failure::Invalid(format!(
                "{label}: a file changed between hashing and starting, so nothing is pinned: \
                 {error}"
            )),
            ListFailure::Unavailable(why) => {
                Failure::Usage(format!("cannot list the tools of {label}: {why}"))
            }
        })?;
    let server = plan.server_json();
    pinned(args, &label, &served, &server, Seen::Local(Box::new(plan)))
}

/// The complete entries for the selected tools of `served`, all bound to `server`.
fn pinned(
    args: &PinArgs,
    label: &str,
    served: &[Value],
    server: &Value,
    seen: Seen,
) -> Result<Pinned, Failure> {
    let (selected, left_out) = select(served, &args.tools)?;
    if selected.is_empty() {
        return Err(Failure::Invalid(format!(
            "{label} lists no tools, so nothing was pinned"
        )));
    }
    let prefix = args.prefix.as_deref().unwrap_or("");
    let added_at = now_rfc3339();
    let mut entries = Vec::with_capacity(selected.len());
    let mut warnings = Vec::new();
    for tool in selected {
        let approved = approve(tool).map_err(|why| {
            Failure::Invalid(format!(
                "{label} serves a tool that cannot be pinned: {why}"
            ))
        })?;
        let tool_name = format!("{prefix}{}", approved.upstream_name);
        warnings.extend(invisible_warnings(&tool_name, &approved.definition));
        entries.push(json!({
            "tool_name": tool_name,
            "upstream_name": approved.upstream_name,
            "server": server.clone(),
            "approved_definition": approved.definition,
            "definition_hash": approved.hash.to_string(),
            "added_at": added_at,
            "approved_by": args.approved_by,
        }));
    }
    Ok(Pinned {
        seen,
        entries,
        left_out,
        warnings,
    })
}

/// The served tools to pin (all, or those named with `--tool`, in served order) and the names
/// of the others. A served name listed twice, or a nameless tool among those to pin, is
/// refused: the gateway would deny such a tool (its definition is ambiguous).
fn select<'a>(
    served: &'a [Value],
    wanted: &[String],
) -> Result<(Vec<&'a Value>, Vec<String>), Failure> {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for tool in served {
        if let Some(name) = served_name(tool) {
            *counts.entry(name).or_default() += 1;
        }
    }
    let names: Vec<&str> = served.iter().filter_map(served_name).collect();
    let wanted: BTreeSet<&str> = wanted.iter().map(String::as_str).collect();
    for name in &wanted {
        if !counts.contains_key(name) {
            return Err(Failure::Usage(format!(
                "--tool {name:?}: the server does not serve it; it serves: {}",
                if names.is_empty() {
                    "nothing".to_owned()
                } else {
                    names.join(", ")
                }
            )));
        }
    }
    let mut selected = Vec::new();
    let mut left_out = Vec::new();
    for (index, tool) in served.iter().enumerate() {
        let name = served_name(tool);
        let chosen = wanted.is_empty() || name.is_some_and(|name| wanted.contains(name));
        if !chosen {
            left_out.extend(name.map(str::to_owned));
            continue;
        }
        match name {
            None => {
                return Err(Failure::Invalid(format!(
                    "the server lists a tool without a usable name (tool #{index}); pin the \
                     others with --tool NAME"
                )));
            }
            Some(name) if counts.get(name).copied().unwrap_or(0) > 1 => {
                return Err(Failure::Invalid(format!(
                    "the server lists {name:?} more than once, so its definition is ambiguous \
                     (the gateway would deny it); pin the others with --tool NAME"
                )));
            }
            Some(_) => selected.push(tool),
        }
    }
    Ok((selected, left_out))
}

fn server_json(
    url: &str,
    observation: &Observation,
    spiffe_id: Option<&SpiffeId>,
    tls_trust: Option<TlsTrust>,
) -> Value {
    let mut server = Map::new();
    server.insert("url".into(), url.into());
    server.insert(
        "tls_fingerprint".into(),
        observation.spki_sha256.to_string().into(),
    );
    if let Some(id) = spiffe_id {
        server.insert("spiffe_id".into(), id.as_str().into());
    }
    server.insert("rotation_mode".into(), "key-pinned".into());
    if let Some(trust) = tls_trust {
        server.insert("tls_trust".into(), trust_name(trust).into());
    }
    Value::Object(server)
}

fn trust_name(trust: TlsTrust) -> &'static str {
    match trust {
        TlsTrust::Pin => "pin",
        _ => "webpki",
    }
}

/// Refuses the whole merge when a new `tool_name` is already in the catalog (seed 003 §3).
fn refuse_collisions(path: &Path, catalog: &Catalog, entries: &[Value]) -> Result<(), Failure> {
    let taken: Vec<String> = entries
        .iter()
        .filter_map(|entry| entry["tool_name"].as_str())
        .filter_map(|name| {
            let held = catalog.lookup(name)?;
            Some(format!(
                "  - {name:?}: already bound to {} (entry {})",
                held.server().location_text(),
                catalog
                    .entries()
                    .iter()
                    .position(|entry| entry.tool_name() == name)
                    .unwrap_or(0)
            ))
        })
        .collect();
    if taken.is_empty() {
        return Ok(());
    }
    Err(Failure::Invalid(format!(
        "{}: nothing was merged, because these tool names are already in the catalog (each \
         tool name must map to exactly one upstream server):\n{}\nPin under another name with \
         --prefix NS., leave them out with --tool, or use `toolgate catalog approve` to \
         re-approve an existing entry",
        path.display(),
        taken.join("\n")
    )))
}

/// What is about to be trusted, on stderr, before anything is written.
fn report(label: &str, pinned: &Pinned) {
    let mut out = match &pinned.seen {
        Seen::Network {
            observation,
            spiffe_id,
            tls_trust,
        } => network_report(label, observation, spiffe_id.as_ref(), *tls_trust),
        Seen::Local(plan) => local_report(label, plan),
    };
    let names: Vec<String> = pinned
        .entries
        .iter()
        .map(|entry| {
            let tool_name = entry["tool_name"].as_str().unwrap_or_default();
            let upstream = entry["upstream_name"].as_str().unwrap_or_default();
            if tool_name == upstream {
                format!("{tool_name:?}")
            } else {
                format!("{tool_name:?} ({upstream:?})")
            }
        })
        .collect();
    out.push_str(&format!(
        "  tools        {} pinned: {}\n",
        names.len(),
        if names.is_empty() {
            "none".to_owned()
        } else {
            names.join(", ")
        }
    ));
    if !pinned.left_out.is_empty() {
        let left: Vec<String> = pinned.left_out.iter().map(|n| format!("{n:?}")).collect();
        out.push_str(&format!("  not pinned   {}\n", left.join(", ")));
    }
    for warning in &pinned.warnings {
        out.push_str(&format!("warning: {warning}\n"));
    }
    eprint!("{out}");
}

fn network_report(
    url: &str,
    seen: &Observation,
    spiffe_id: Option<&SpiffeId>,
    tls_trust: Option<TlsTrust>,
) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "toolgate pin: trusting {url} on first use. Nothing here proves it is the server you \
         mean: compare the fingerprint below with one its operator gives you another way \
         before you rely on this catalog.\n"
    ));
    out.push_str(&format!(
        "  spki_sha256  {}  (pinned as tls_fingerprint, key-pinned)\n",
        seen.spki_sha256
    ));
    out.push_str(&format!("  cert_sha256  {}\n", seen.cert_sha256));
    let spiffe = match (spiffe_id, seen.spiffe_ids.as_slice()) {
        (Some(id), _) => format!("{id} (pinned as spiffe_id; its trust domain's bundle was given)"),
        (None, []) => "none".to_owned(),
        (None, [id]) => format!(
            "{id} (not pinned: give --spiffe-bundle {}=FILE to pin it too)",
            id.trust_domain()
        ),
        (None, ids) => format!(
            "{} (not pinned: an SVID carries exactly one)",
            ids.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    out.push_str(&format!("  spiffe_id    {spiffe}\n"));
    let trust = match (tls_trust, &seen.chain_problem) {
        (None, _) => "(none: the SPIFFE bundle is the chain anchor)".to_owned(),
        (Some(TlsTrust::Pin), Some(problem)) => format!(
            "pin: the chain does not validate to the given roots ({problem}), so the key \
             fingerprint is the only anchor"
        ),
        (Some(TlsTrust::Pin), None) => {
            "pin: the chain does not validate to the given roots, so the key fingerprint is \
             the only anchor"
                .to_owned()
        }
        (Some(_), _) => {
            "webpki: the chain validates to the given roots for this host name; both must hold"
                .to_owned()
        }
    };
    out.push_str(&format!("  tls_trust    {trust}\n"));
    out.push_str(&format!(
        "  valid        {} to {}\n",
        seen.not_before, seen.not_after
    ));
    out
}

/// The local form: the files whose digests become the identity, and how the server runs.
fn local_report(label: &str, plan: &LocalPlan) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "toolgate pin: trusting {label} on first use. Nothing here proves these files are the \
         ones you mean: compare the digests below with ones their publisher gives you another \
         way before you rely on this catalog.\n"
    ));
    let program = &plan.found.program;
    let mut line = format!("  program      {}", program.display());
    if plan.argv[0] != program.display().to_string() {
        line.push_str(&format!("  (resolved on PATH from {:?})", plan.argv[0]));
    }
    out.push_str(&format!("{line}\n"));
    out.push_str(&format!("  cwd          {}\n", plan.command.cwd.display()));
    for file in &plan.found.files {
        let what = match file.argument {
            0 => "the program".to_owned(),
            index => format!("argument {index}, an existing file"),
        };
        out.push_str(&format!(
            "  entrypoint   {}  {}  ({what})\n",
            file.digest,
            file.path.display()
        ));
    }
    if !plan.found.not_files.is_empty() {
        let names: Vec<String> = plan
            .found
            .not_files
            .iter()
            .map(|a| format!("{a:?}"))
            .collect();
        out.push_str(&format!(
            "  arguments    {}  (not existing files, so not pinned)\n",
            names.join(", ")
        ));
    }
    let env: Vec<&str> = plan.command.env.keys().map(String::as_str).collect();
    out.push_str(&format!(
        "  env          {}\n",
        if env.is_empty() {
            "none".to_owned()
        } else {
            format!("{}  (set as given)", env.join(", "))
        }
    ));
    out.push_str(&format!(
        "  inherit_env  {}  (nothing else of the gateway's environment)\n",
        if plan.command.inherit_env.is_empty() {
            "none".to_owned()
        } else {
            plan.command.inherit_env.join(", ")
        }
    ));
    out.push_str(
        "  not seen     a file the program loads by itself (a module it imports) is not pinned: \
         add its path to entrypoint_digests\n",
    );
    out
}

fn summary_json(label: &str, path: &Path, pinned: &Pinned) -> Value {
    let mut summary = match &pinned.seen {
        Seen::Network {
            observation: seen,
            spiffe_id,
            tls_trust,
        } => json!({
            "url": label,
            "spki_sha256": seen.spki_sha256.to_string(),
            "cert_sha256": seen.cert_sha256.to_string(),
            "spiffe_id": spiffe_id.as_ref().map(ToString::to_string),
            "chain_valid": seen.chain_valid,
            "tls_trust": tls_trust.map(trust_name),
        }),
        Seen::Local(plan) => json!({
            "command": plan.argv,
            "program": plan.found.program.display().to_string(),
            "cwd": plan.command.cwd.display().to_string(),
            "entrypoint_digests": plan.found.digests_object(),
        }),
    };
    summary["catalog"] = path.display().to_string().into();
    summary["tools"] = pinned
        .entries
        .iter()
        .map(|entry| {
            json!({
                "tool_name": entry["tool_name"],
                "upstream_name": entry["upstream_name"],
                "definition_hash": entry["definition_hash"],
            })
        })
        .collect::<Vec<_>>()
        .into();
    summary["not_pinned"] = pinned.left_out.clone().into();
    summary["warnings"] = pinned.warnings.clone().into();
    summary
}
