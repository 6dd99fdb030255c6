//! `toolgate audit verify`: checks the hash chain of an audit log (docs/design.md §5, "Audit").

use std::io::Write;
use std::path::PathBuf;

use catalog_store::{Catalog, CatalogLoadError};
use jcs_digest::Digest;
use jcs_digest::order::Sorted;
use serde_json::{Value, json};
use toolgate::audit::{
    BrokenEntry, ChainProblem, ChainSummary, VerifyError, verify_file, verify_reader,
};

use crate::outcome::{Failure, Verdict, stdout_error};

/// `toolgate audit`
#[derive(Debug, clap::Args)]
pub(crate) struct AuditArgs {
    #[command(subcommand)]
    pub(crate) command: AuditCommand,
}

/// The `toolgate audit` subcommands.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum AuditCommand {
    /// Check an audit log's hash chain. Exit 0 when every entry verifies (and, with
    /// --expect-head, the chain ends at that hash), 1 naming the first entry that was edited,
    /// removed, reordered or cut (or both heads), 2 when the log cannot be read.
    Verify(VerifyArgs),
}

/// `toolgate audit verify`
#[derive(Debug, clap::Args)]
pub(crate) struct VerifyArgs {
    /// The audit log, as `toolgate serve --audit FILE` writes it (JSON Lines); `-` reads
    /// standard input.
    #[arg(value_name = "FILE|-")]
    pub(crate) file: PathBuf,
    /// Also check that the chain ends at this hash (`sha256:…`), the last hash of the log as
    /// recorded elsewhere: the chain alone cannot show that its last entries were removed or
    /// rewritten by someone who can write the file.
    #[arg(long, value_name = "HASH")]
    pub(crate) expect_head: Option<String>,
    /// Also check the catalog: the first entry's `prev` must be its measurement (the log was
    /// started with it), or, for a log that records reloads (`catalog_loaded`) or restarts
    /// with another catalog, the catalog in force at the log's end must be it.
    #[arg(long, value_name = "FILE")]
    pub(crate) catalog: Option<PathBuf>,
    /// Print one JSON object instead of lines.
    #[arg(long)]
    pub(crate) json: bool,
}

pub(crate) fn run(args: &AuditArgs) -> Result<Verdict, Failure> {
    match &args.command {
        AuditCommand::Verify(verify) => run_verify(verify),
    }
}

fn run_verify(args: &VerifyArgs) -> Result<Verdict, Failure> {
    let catalog = match &args.catalog {
        None => None,
        Some(path) => Some(Catalog::load(path).map_err(|error| match error {
            CatalogLoadError::Read { .. } => Failure::Usage(format!("--catalog: {error}")),
            invalid => Failure::Invalid(format!("--catalog: {invalid}")),
        })?),
    };
    let measurement = catalog
        .as_ref()
        .map(|catalog| catalog.measurement().digest());
    let expect_head = match &args.expect_head {
        None => None,
        Some(text) => Some(text.parse::<Digest>().map_err(|error| {
            Failure::Usage(format!(
                "--expect-head {text:?} is not a hash: {error}; give the `last hash` that \
                 `toolgate audit verify` printed, such as sha256:<64 hex digits>"
            ))
        })?),
    };
    let from_stdin = args.file.as_os_str() == "-";
    let file = if from_stdin {
        "<standard input>".to_owned()
    } else {
        args.file.display().to_string()
    };
    let verified = if from_stdin {
        verify_reader(std::io::stdin().lock(), measurement.as_ref()).map_err(|error| match error {
            VerifyError::Io { source, .. } => VerifyError::Io {
                path: file.clone(),
                source,
            },
            broken => broken,
        })
    } else {
        verify_file(&args.file, measurement.as_ref())
    };
    // A log that reloaded its catalog: `--catalog` may be the one in force at its end.
    let verified = match (verified, &measurement) {
        (Err(VerifyError::Broken(entry)), Some(expected))
            if !from_stdin && matches!(entry.problem, ChainProblem::FirstPrevNotCatalog { .. }) =>
        {
            match verify_file(&args.file, None) {
                Ok(summary) if summary.catalog_in_force() == Some(*expected) => Ok(summary),
                _ => Err(VerifyError::Broken(entry)),
            }
        }
        (verified, _) => verified,
    };
    let (text, verdict) = match verified {
        Ok(summary) => match expect_head {
            Some(expected) if summary.last_hash() != Some(expected) => {
                let text = if args.json {
                    render_head_mismatch_json(&file, &summary, &expected)
                } else {
                    render_head_mismatch_text(&file, &summary, &expected)
                };
                (text, Verdict::Fail)
            }
            _ => {
                let text = if args.json {
                    render_summary_json(&file, &summary, measurement.as_ref())
                } else {
                    render_summary_text(&file, &summary, measurement.as_ref())
                };
                (text, Verdict::Pass)
            }
        },
        Err(VerifyError::Broken(entry)) => {
            let text = if args.json {
                render_broken_json(&file, &entry)
            } else {
                render_broken_text(&file, &entry)
            };
            (text, Verdict::Fail)
        }
        Err(error) => return Err(Failure::Usage(error.to_string())),
    };
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes()).map_err(stdout_error)?;
    stdout.flush().map_err(stdout_error)?;
    Ok(verdict)
}

fn render_summary_text(file: &str, summary: &ChainSummary, catalog: Option<&Digest>) -> String {
    let mut out = format!("audit log verified: {file}\n");
    let (Some(first_prev), Some(last_hash)) = (summary.first_prev(), summary.last_hash()) else {
        out.push_str("entries     0 (an empty log)\n");
        return out;
    };
    out.push_str(&format!(
        "entries     {} (seq 0 to {})\n",
        summary.entries(),
        summary.entries() - 1
    ));
    let origin = if catalog == Some(&first_prev) {
        "the measurement of --catalog"
    } else {
        "the catalog measurement"
    };
    out.push_str(&format!("first prev  {first_prev} ({origin})\n"));
    if let Some(in_force) = catalog.filter(|catalog| **catalog != first_prev) {
        out.push_str(&format!(
            "in force    {in_force} (the measurement of --catalog, at the log's end)\n"
        ));
    }
    out.push_str(&format!("last hash   {last_hash}\n"));
    if summary.preallocated_bytes() > 0 {
        out.push_str(&format!(
            "zeros       {} bytes after the last entry (space reserved ahead of the entries: \
             a running gateway's --audit-prewrite-zeros, or allocated space a crash left \
             unwritten)\n",
            summary.preallocated_bytes()
        ));
    }
    let decisions: Vec<String> = summary
        .decisions()
        .iter()
        .map(|(decision, count)| format!("{decision} {count}"))
        .collect();
    let decisions = if decisions.is_empty() {
        "none".to_owned()
    } else {
        decisions.join(", ")
    };
    out.push_str(&format!("decisions   {decisions}\n"));
    for start in summary.starts() {
        out.push_str(&format!(
            "started     seq {} (line {}) with catalog {}\n",
            start.seq, start.line, start.catalog
        ));
    }
    for load in summary.catalog_loads() {
        out.push_str(&format!(
            "reloaded    seq {} (line {}) to catalog {}\n",
            load.seq, load.line, load.catalog
        ));
    }
    out
}

fn render_summary_json(file: &str, summary: &ChainSummary, catalog: Option<&Digest>) -> String {
    let text =
        |digest: Option<Digest>| digest.map_or(Value::Null, |digest| digest.to_string().into());
    let decisions: serde_json::Map<String, Value> = summary
        .decisions()
        .iter()
        .map(|(decision, count)| (decision.to_string(), (*count).into()))
        .collect();
    let starts: Vec<Value> = summary
        .starts()
        .iter()
        .map(|start| json!({"line": start.line, "seq": start.seq, "catalog": start.catalog.to_string()}))
        .collect();
    let loads: Vec<Value> = summary
        .catalog_loads()
        .iter()
        .map(
            |load| json!({"line": load.line, "seq": load.seq, "catalog": load.catalog.to_string()}),
        )
        .collect();
    let object = json!({
        "file": file,
        "verified": true,
        "entries": summary.entries(),
        "first_prev": text(summary.first_prev()),
        "last_hash": text(summary.last_hash()),
        "catalog": text(catalog.copied()),
        "decisions": decisions,
        "starts": starts,
        "catalog_loads": loads,
        "preallocated_bytes": summary.preallocated_bytes(),
    });
    format!("{}\n", Sorted(&object))
}

fn head_text(summary: &ChainSummary) -> String {
    summary
        .last_hash()
        .map_or_else(|| "(no entries)".to_owned(), |hash| hash.to_string())
}

fn render_head_mismatch_text(file: &str, summary: &ChainSummary, expected: &Digest) -> String {
    format!(
        "audit log head mismatch: {file}\nthe chain verifies but ends at {} (after {} entries), \
         not at the expected head {expected}: entries after that head were removed or rewritten, \
         or the head was recorded from another log\n",
        head_text(summary),
        summary.entries()
    )
}

fn render_head_mismatch_json(file: &str, summary: &ChainSummary, expected: &Digest) -> String {
    let object = json!({
        "file": file,
        "verified": false,
        "entries": summary.entries(),
        "head_mismatch": {
            "expected": expected.to_string(),
            "found": summary.last_hash().map(|hash| hash.to_string()),
        },
    });
    format!("{}\n", Sorted(&object))
}

fn render_broken_text(file: &str, entry: &BrokenEntry) -> String {
    let before = entry.line - 1;
    let plural = if before == 1 { "y" } else { "ies" };
    format!(
        "audit log broken: {file}\n{entry}\nthe {before} entr{plural} before line {} verify (bytes 0 to {})\n",
        entry.line, entry.offset
    )
}

fn render_broken_json(file: &str, entry: &BrokenEntry) -> String {
    let mut broken = json!({
        "line": entry.line,
        "seq": entry.seq,
        "offset": entry.offset,
        "problem": entry.problem.code(),
        "message": entry.problem.to_string(),
    });
    let (expected, found) = match &entry.problem {
        ChainProblem::HashMismatch { expected, found }
        | ChainProblem::PrevMismatch { expected, found }
        | ChainProblem::FirstPrevNotCatalog { expected, found } => {
            (expected.to_string().into(), found.to_string().into())
        }
        ChainProblem::SeqMismatch { expected, found } => ((*expected).into(), (*found).into()),
        _ => (Value::Null, Value::Null),
    };
    broken["expected"] = expected;
    broken["found"] = found;
    format!(
        "{}\n",
        Sorted(&json!({"file": file, "verified": false, "broken": broken}))
    )
}
