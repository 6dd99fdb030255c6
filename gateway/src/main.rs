//! `toolgate`: digests of MCP tool definitions and catalogs, catalog checks, and the pinning
//! gateway. A thin command-line layer over the workspace's library crates.
//!
//! Exit codes: 0 success, 1 a check failed (mismatch, drift, invalid input document or catalog),
//! 2 usage or I/O error.

#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::Parser;

mod cli;
mod cmd;
mod input;
// The socket half of observing a server (server-identity does no I/O).
mod observe;
mod outcome;

use outcome::Verdict;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    match cmd::run(cli.command) {
        Ok(Verdict::Pass) => ExitCode::from(0),
        Ok(Verdict::Fail) => ExitCode::from(1),
        Err(failure) => {
            if !failure.is_broken_pipe() {
                eprintln!("toolgate: {failure}");
            }
            ExitCode::from(failure.exit_code())
        }
    }
}
