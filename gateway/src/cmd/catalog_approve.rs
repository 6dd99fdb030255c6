//! `toolgate catalog approve FILE TOOL_NAME… --approved-by WHO`: re-approve changed definitions
//! (docs/design.md §9). Each named tool's server is reached with its pinned identity; each
//! difference is shown; then those entries alone get the live definition, its hash, a new
//! `added_at` and `approved_by`, written atomically.
//!
//! All or nothing: a tool not in the catalog is exit 2; a server whose identity does not match,
//! or a tool it no longer lists (or lists twice), refuses the whole approval (exit 1); a server
//! that cannot be reached is exit 2. In each case the file is left as it was.

use std::path::PathBuf;

use catalog_store::{Catalog, UpstreamServer};
use serde_json::Value;

use crate::cmd::approval::{approve, check_approver, now_rfc3339};
use crate::cmd::catalog_text::{CatalogText, write_atomically};
use crate::cmd::catalog_verify::{Reached, ToolState, load, mismatch_lines, reach_all, tool_state};
use crate::cmd::common::write_stdout;
use crate::cmd::invisible::invisible_warnings;
use crate::cmd::reach::ReachArgs;
use crate::outcome::{Failure, Verdict};

/// `toolgate catalog approve`
#[derive(Debug, clap::Args)]
pub(crate) struct CatalogApproveArgs {
    /// The catalog file, rewritten in place.
    #[arg(value_name = "FILE")]
    pub(crate) file: PathBuf,
    /// The catalog tool names to re-approve.
    #[arg(value_name = "TOOL_NAME", required = true)]
    pub(crate) tools: Vec<String>,
    /// Who approves the new definitions (written as `approved_by`).
    #[arg(long, value_name = "WHO")]
    pub(crate) approved_by: String,
    #[command(flatten)]
    pub(crate) reach: ReachArgs,
}

pub(crate) fn run(args: &CatalogApproveArgs) -> Result<Verdict, Failure> {
    check_approver(&args.approved_by)?;
    let (trust, timeout) = args.reach.parse()?;
    let catalog = load(&args.file)?;
    let text = std::fs::read_to_string(&args.file)
        .map_err(|error| Failure::io(format!("cannot read {}", args.file.display()), error))?;
    let text = CatalogText::scan(text)
        .map_err(|why| Failure::Invalid(format!("{}: {why}", args.file.display())))?;

    let mut wanted: Vec<&str> = Vec::new();
    for name in &args.tools {
        if catalog.lookup(name).is_none() {
            let known: Vec<&str> = catalog.entries().iter().map(|e| e.tool_name()).collect();
            return Err(Failure::Usage(format!(
                "{name:?} is not in {}; its tool names are: {}",
                args.file.display(),
                known.join(", ")
            )));
        }
        if !wanted.contains(&name.as_str()) {
            wanted.push(name);
        }
    }
    // The servers of the named tools, each reached once.
    let servers: Vec<&UpstreamServer> = catalog
        .servers()
        .iter()
        .filter(|server| {
            server
                .tool_names()
                .iter()
                .any(|name| wanted.contains(&name.as_str()))
        })
        .collect();
    let reached = reach_all(&servers, trust, timeout)?;

    let added_at = now_rfc3339();
    let mut out = String::new();
    let mut refusals = Vec::new();
    let mut unreachable = Vec::new();
    let mut replacements: Vec<(usize, Value)> = Vec::new();
    let mut warnings = Vec::new();
    for name in &wanted {
        let Some((server, reached)) = servers
            .iter()
            .zip(&reached)
            .find(|(server, _)| server.tool_names().iter().any(|n| n == name))
        else {
            continue;
        };
        let Some(entry) = catalog.lookup(name) else {
            continue;
        };
        let served = match reached {
            Reached::Listed(served) => served,
            Reached::IdentityMismatch { error, presented } => {
                let lines = mismatch_lines(server.binding(), error, presented.as_deref());
                refusals.push(format!(
                    "{name:?}: refused, {} is not the pinned server:\n    {}",
                    server.binding().location_text(),
                    lines.join("\n    ")
                ));
                continue;
            }
            Reached::Unreachable(why) => {
                unreachable.push(format!("{name:?}: {why}"));
                continue;
            }
        };
        match tool_state(entry, served) {
            ToolState::Ok => {
                out.push_str(&format!(
                    "unchanged {name:?}: the live definition is the approved one ({}); nothing to approve\n",
                    entry.definition_hash()
                ));
            }
            ToolState::Missing => refusals.push(format!(
                "{name:?}: refused, {} no longer lists {:?}",
                server.binding().location_text(),
                entry.upstream_name()
            )),
            ToolState::Doubled => refusals.push(format!(
                "{name:?}: refused, {} lists {:?} more than once",
                server.binding().location_text(),
                entry.upstream_name()
            )),
            ToolState::Changed {
                live, difference, ..
            } => {
                let approved = match approve(live) {
                    Ok(approved) => approved,
                    Err(why) => {
                        refusals.push(format!("{name:?}: refused, the live definition: {why}"));
                        continue;
                    }
                };
                out.push_str(&format!(
                    "approve {name:?}  {} -> {}\n",
                    entry.definition_hash(),
                    approved.hash
                ));
                for line in difference.changes() {
                    out.push_str(&format!("    {line}\n"));
                }
                warnings.extend(invisible_warnings(name, &approved.definition));
                let index = catalog
                    .entries()
                    .iter()
                    .position(|e| e.tool_name() == *name)
                    .unwrap_or(usize::MAX);
                let Some(mut written) = text.entry_value(index) else {
                    refusals.push(format!("{name:?}: its entry could not be read back"));
                    continue;
                };
                written["approved_definition"] = approved.definition;
                written["definition_hash"] = approved.hash.to_string().into();
                written["added_at"] = added_at.as_str().into();
                written["approved_by"] = args.approved_by.as_str().into();
                replacements.push((index, written));
            }
        }
    }
    for warning in &warnings {
        eprintln!("warning: {warning}");
    }
    write_stdout(&out)?;
    if !unreachable.is_empty() {
        return Err(Failure::Usage(format!(
            "nothing approved, {} is unchanged: a server could not be reached:\n  {}",
            args.file.display(),
            unreachable.join("\n  ")
        )));
    }
    if !refusals.is_empty() {
        eprintln!(
            "toolgate: nothing approved, {} is unchanged:\n  {}",
            args.file.display(),
            refusals.join("\n  ")
        );
        return Ok(Verdict::Fail);
    }
    if replacements.is_empty() {
        return Ok(Verdict::Pass);
    }
    let rewritten = text.replace(&replacements);
    Catalog::from_slice(rewritten.as_bytes()).map_err(|error| {
        Failure::Invalid(format!(
            "nothing approved, {} is unchanged: the rewritten catalog would not load: {error}",
            args.file.display()
        ))
    })?;
    write_atomically(&args.file, rewritten.as_bytes())?;
    write_stdout(format!(
        "approved {} tool{} in {} (only those entries were rewritten)\n",
        replacements.len(),
        if replacements.len() == 1 { "" } else { "s" },
        args.file.display()
    ))?;
    Ok(Verdict::Pass)
}
