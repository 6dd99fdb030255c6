//! One module per subcommand; each exposes `run(args) -> Result<Verdict, Failure>`.

use crate::cli::Command;
use crate::outcome::{Failure, Verdict};

mod common;
mod diff;
mod digest;
mod jcs;
mod key;

pub(crate) fn run(command: Command) -> Result<Verdict, Failure> {
    match command {
        Command::Digest(args) => digest::run(&args),
        Command::Key(args) => key::run(&args),
        Command::Jcs(args) => jcs::run(&args),
        Command::Diff(args) => diff::run(&args),
    }
}
