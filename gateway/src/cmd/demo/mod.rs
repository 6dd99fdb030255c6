//! `toolgate demo`: a pinned upstream, a rug-pull and an impostor, end to end, in one command.

use std::io::Write;

use crate::outcome::{Failure, Verdict, stdout_error};

mod local;
mod policy;
mod script;

/// `toolgate demo`
#[derive(Debug, clap::Args)]
pub(crate) struct DemoArgs {}

pub(crate) fn run(args: &DemoArgs) -> Result<Verdict, Failure> {
    let DemoArgs {} = args;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|error| Failure::io("cannot start the async runtime", error))?;
    let mut out = std::io::stdout();
    let report = runtime
        .block_on(script::run(&mut out))
        .map_err(|error| match error {
            script::DemoError::Output(source) => stdout_error(source),
            other => Failure::Usage(other.to_string()),
        })?;
    out.flush().map_err(stdout_error)?;
    Ok(if report.passed() {
        Verdict::Pass
    } else {
        Verdict::Fail
    })
}
