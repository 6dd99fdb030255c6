//! `toolgate key`: the catalog key of each name (seed 000 §4), one per line, in the order given.

use std::io::Write;

use catalog_key::ToolKey;

use crate::cli::KeyArgs;
use crate::outcome::{Failure, Verdict, stdout_error};

pub(crate) fn run(args: &KeyArgs) -> Result<Verdict, Failure> {
    let mut out = String::new();
    for name in &args.names {
        out.push_str(ToolKey::from_name(name).as_str());
        out.push('\n');
    }
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(out.as_bytes()).map_err(stdout_error)?;
    stdout.flush().map_err(stdout_error)?;
    Ok(Verdict::Pass)
}
