//! One module per subcommand; each exposes `run(args) -> Result<Verdict, Failure>`.

use crate::cli::Command;
use crate::outcome::{Failure, Verdict};

mod approval;
pub(crate) mod audit;
pub(crate) mod catalog;
mod catalog_approve;
mod catalog_text;
mod catalog_verify;
mod client_auth;
mod common;
#[cfg(feature = "demo")]
pub(crate) mod demo;
#[cfg(feature = "demo")]
pub(crate) mod demo_upstream;
mod diff;
mod digest;
pub(crate) mod identity;
mod identity_command;
mod invisible;
mod jcs;
mod key;
pub(crate) mod pin;
mod reach;
pub(crate) mod serve;
mod serve_ops;

pub(crate) fn run(command: Command) -> Result<Verdict, Failure> {
    match command {
        Command::Digest(args) => digest::run(&args),
        Command::Key(args) => key::run(&args),
        Command::Jcs(args) => jcs::run(&args),
        Command::Diff(args) => diff::run(&args),
        Command::Identity(args) => identity::run(&args),
        Command::Pin(args) => pin::run(&args),
        Command::Catalog(args) => catalog::run(&args),
        Command::Serve(args) => serve::run(&args),
        Command::Audit(args) => audit::run(&args),
        #[cfg(feature = "demo")]
        Command::Demo(args) => demo::run(&args),
        #[cfg(feature = "demo")]
        Command::DemoUpstream(args) => demo_upstream::run(&args),
    }
}
