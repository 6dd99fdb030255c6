//! `toolgate catalog check FILE [--json]`: load a catalog as the gateway would, and say whether
//! it holds (docs/design.md §4, §6; seed 003 §2–3). `catalog verify` and `catalog approve` are in
//! their own modules.
//!
//! Exit 0 with a summary for a valid catalog (warnings go to stderr and do not fail it); exit 1
//! with every error on stderr for an invalid one; exit 2 when the file cannot be read.

use std::path::PathBuf;

use catalog_store::{Catalog, CatalogError, CatalogLoadError};

use crate::cmd::catalog_approve::CatalogApproveArgs;
use crate::cmd::catalog_verify::CatalogVerifyArgs;
use crate::cmd::common::{json_string, write_stdout};
use crate::input::{display_name, read_input};
use crate::outcome::{Failure, Verdict};

/// `toolgate catalog`
#[derive(Debug, clap::Args)]
pub(crate) struct CatalogArgs {
    #[command(subcommand)]
    pub(crate) command: CatalogCommand,
}

/// The `catalog` subcommands.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum CatalogCommand {
    /// Validate a catalog file: schema, identity anchors, URLs, definition hashes, duplicate
    /// tool names. Prints tools, servers, warnings and the catalog measurement.
    Check(CatalogCheckArgs),
    /// Reach every server with its pinned identity and compare each live definition with the
    /// approved one: ok, changed (with the difference), missing; unpinned tools and identity
    /// mismatches per server. Exit 0 all match, 1 drift or mismatch, 2 a server unreachable.
    Verify(CatalogVerifyArgs),
    /// Show each named tool's difference, then rewrite only those entries with the live
    /// definition (atomically); refused when a server's identity does not match.
    Approve(CatalogApproveArgs),
}

/// `toolgate catalog check`
#[derive(Debug, clap::Args)]
pub(crate) struct CatalogCheckArgs {
    /// The catalog: a JSON array of entries, or {"catalog_version", "entries"}; `-` reads stdin.
    #[arg(value_name = "FILE|-")]
    pub(crate) file: PathBuf,
    /// Print one JSON object: {"file", "valid", "catalog_version", "tools", "servers",
    /// "warnings", "measurement"}, or {"file", "valid": false, "errors": [...]}.
    #[arg(long)]
    pub(crate) json: bool,
}

pub(crate) fn run(args: &CatalogArgs) -> Result<Verdict, Failure> {
    match &args.command {
        CatalogCommand::Check(check) => run_check(check),
        CatalogCommand::Verify(verify) => crate::cmd::catalog_verify::run(verify),
        CatalogCommand::Approve(approve) => crate::cmd::catalog_approve::run(approve),
    }
}

fn run_check(args: &CatalogCheckArgs) -> Result<Verdict, Failure> {
    let name = display_name(&args.file);
    // A path goes through `Catalog::load`, so that errors name it; `-` is read from stdin.
    let loaded = if args.file.as_os_str() == "-" {
        Catalog::from_slice(&read_input(&args.file)?)
    } else {
        Catalog::load(&args.file)
    };
    match loaded {
        Ok(catalog) => {
            for warning in catalog.warnings() {
                eprintln!("warning: {warning}");
            }
            let text = if args.json {
                render_json(&name, &catalog)
            } else {
                render_text(&name, &catalog)
            };
            write_stdout(&text)?;
            Ok(Verdict::Pass)
        }
        Err(CatalogLoadError::Read { path, source }) => Err(Failure::io(
            format!(
                "cannot read the catalog {} (check the path and its permissions)",
                path.display()
            ),
            source,
        )),
        Err(error) => {
            if args.json {
                write_stdout(render_errors_json(&name, error.errors()))?;
            }
            Err(Failure::Invalid(error.to_string()))
        }
    }
}

fn render_text(name: &str, catalog: &Catalog) -> String {
    let mut out = format!("{name}: valid catalog");
    if let Some(version) = catalog.catalog_version() {
        out.push_str(&format!(" (catalog_version {version:?})"));
    }
    out.push('\n');
    out.push_str(&format!("  tools:       {}\n", catalog.entries().len()));
    out.push_str(&format!("  servers:     {}\n", catalog.servers().len()));
    for server in catalog.servers() {
        let binding = server.binding();
        let label = binding
            .display_name()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        out.push_str(&format!(
            "    {}{label}: {}\n",
            binding.location_text(),
            server.tool_names().join(", ")
        ));
    }
    out.push_str(&format!("  warnings:    {}\n", catalog.warnings().len()));
    out.push_str(&format!(
        "  measurement: {}\n",
        catalog.measurement().digest()
    ));
    out
}

/// One line of JSON, members in the documented order.
fn render_json(name: &str, catalog: &Catalog) -> String {
    let warnings: Vec<String> = catalog
        .warnings()
        .iter()
        .map(|w| json_string(&w.to_string()))
        .collect();
    let version = catalog
        .catalog_version()
        .map_or_else(|| "null".to_owned(), json_string);
    format!(
        "{{\"file\":{},\"valid\":true,\"catalog_version\":{version},\"tools\":{},\"servers\":{},\"warnings\":[{}],\"measurement\":\"{}\"}}\n",
        json_string(name),
        catalog.entries().len(),
        catalog.servers().len(),
        warnings.join(","),
        catalog.measurement().digest()
    )
}

/// `{"file", "valid": false, "errors": [{"entry", "tool_name", "pointer", "message"}]}`; the
/// location members are `null` for errors that concern the whole catalog.
fn render_errors_json(name: &str, errors: &[CatalogError]) -> String {
    let errors: Vec<String> = errors
        .iter()
        .map(|error| {
            let location = error.location();
            let entry = location.and_then(|l| l.entry());
            format!(
                "{{\"entry\":{},\"tool_name\":{},\"pointer\":{},\"message\":{}}}",
                entry.map_or_else(|| "null".to_owned(), |e| e.index().to_string()),
                entry
                    .and_then(|e| e.tool_name())
                    .map_or_else(|| "null".to_owned(), json_string),
                location.map_or_else(|| "null".to_owned(), |l| json_string(l.pointer())),
                json_string(&error.to_string())
            )
        })
        .collect();
    format!(
        "{{\"file\":{},\"valid\":false,\"errors\":[{}]}}\n",
        json_string(name),
        errors.join(",")
    )
}
