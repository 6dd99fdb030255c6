//! `toolgate jcs`: the RFC 8785 canonical bytes of a document, and nothing else (no newline).

use std::io::Write;

use crate::cli::JcsArgs;
use crate::input::{display_name, read_input};
use crate::outcome::{Failure, Verdict, stdout_error};

pub(crate) fn run(args: &JcsArgs) -> Result<Verdict, Failure> {
    let bytes = read_input(&args.file)?;
    let name = display_name(&args.file);
    let value =
        jcs_digest::parse_strict(&bytes).map_err(|e| Failure::Invalid(format!("{name}: {e}")))?;
    let canonical =
        jcs_digest::canonicalize(&value).map_err(|e| Failure::Invalid(format!("{name}: {e}")))?;
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(&canonical).map_err(stdout_error)?;
    stdout.flush().map_err(stdout_error)?;
    Ok(Verdict::Pass)
}
