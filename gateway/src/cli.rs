//! The command line, as clap parses it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::cmd::audit::AuditArgs;
use crate::cmd::catalog::CatalogArgs;
#[cfg(feature = "demo")]
use crate::cmd::demo::DemoArgs;
#[cfg(feature = "demo")]
use crate::cmd::demo_upstream::DemoUpstreamArgs;
use crate::cmd::identity::IdentityArgs;
use crate::cmd::pin::PinArgs;
use crate::cmd::serve::ServeArgs;

/// Tool identity for the Model Context Protocol: digests, catalog checks and a pinning gateway.
#[derive(Debug, Parser)]
#[command(name = "toolgate", version, about, long_about = None)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Per-tool digests and the catalog digest of a tools/list document.
    Digest(DigestArgs),
    /// The catalog key of each tool name, one per line.
    Key(KeyArgs),
    /// The RFC 8785 canonical bytes of a JSON document.
    Jcs(JcsArgs),
    /// Compare two tools/list documents tool by tool, with what changed in each changed
    /// definition (text word by word, other members by JSON Pointer).
    Diff(DiffArgs),
    /// What an upstream server presents in its TLS handshake: the values to pin.
    Identity(IdentityArgs),
    /// Trust a server on first use: observe its identity and tools/list, write catalog entries.
    Pin(PinArgs),
    /// Check a catalog file; verify it against the live servers; approve changed definitions.
    Catalog(CatalogArgs),
    /// Run the gateway.
    Serve(ServeArgs),
    /// Check the audit log's hash chain.
    Audit(AuditArgs),
    /// One command, no setup: an allowed call, a rug-pull and an impostor, refused and audited.
    #[cfg(feature = "demo")]
    Demo(DemoArgs),
    /// Run the demo upstream (an MCP server over TLS with a generated certificate) as a process,
    /// for trying the gateway and for interop tests; prints its URL and fingerprints as JSON.
    #[cfg(feature = "demo")]
    DemoUpstream(DemoUpstreamArgs),
}

/// `toolgate digest`
#[derive(Debug, Args)]
pub(crate) struct DigestArgs {
    /// Profile label of the derivation: trace.mcp-tool-definition.v1 (default) or
    /// agentavow.mcp-tool-definition.v1.
    #[arg(long, value_name = "LABEL")]
    pub(crate) label: Option<String>,
    /// Print one JSON object: {"label", "tools": {KEY: DIGEST}, "catalog"}.
    #[arg(long)]
    pub(crate) json: bool,
    /// A tools/list document (bare array, {"tools": [...]}, or a JSON-RPC response); `-` reads stdin.
    #[arg(value_name = "FILE|-")]
    pub(crate) file: PathBuf,
}

/// `toolgate key`
#[derive(Debug, Args)]
pub(crate) struct KeyArgs {
    /// Tool names; an empty name is keyed `tool:unnamed`.
    #[arg(value_name = "NAME", required = true)]
    pub(crate) names: Vec<String>,
}

/// `toolgate jcs`
#[derive(Debug, Args)]
pub(crate) struct JcsArgs {
    /// A JSON document; `-` reads stdin.
    #[arg(value_name = "FILE|-")]
    pub(crate) file: PathBuf,
}

/// `toolgate diff`
#[derive(Debug, Args)]
pub(crate) struct DiffArgs {
    /// The catalog as it was (a tools/list document).
    #[arg(value_name = "OLD")]
    pub(crate) old: PathBuf,
    /// The catalog as it is now.
    #[arg(value_name = "NEW")]
    pub(crate) new: PathBuf,
    /// Print one JSON object instead of lines; each changed tool carries its "changes".
    #[arg(long)]
    pub(crate) json: bool,
    /// Profile label of the derivation (see `toolgate digest --help`).
    #[arg(long, value_name = "LABEL")]
    pub(crate) label: Option<String>,
}
