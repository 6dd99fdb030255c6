//! What a local server runs: the program, its arguments, its directory, its exact environment
//! and the entrypoint digests checked before every start (docs/design.md §3 "Local (stdio)
//! upstreams").

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;

use catalog_store::LocalServer;
use server_identity::EntrypointDigests;

/// How to start one local MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LocalCommand {
    /// A short name for the log prefix of its stderr (the catalog's `display_name`, or the
    /// program's file name).
    pub name: String,
    /// The program to execute (absolute).
    pub program: PathBuf,
    /// Its arguments (`command[1..]`).
    pub args: Vec<String>,
    /// The directory it runs in.
    pub cwd: PathBuf,
    /// The variables it gets, besides the inherited ones.
    pub env: BTreeMap<String, String>,
    /// The gateway's variables it inherits (when set); nothing else is inherited.
    pub inherit_env: Vec<String>,
    /// The files hashed before every start.
    pub entrypoints: EntrypointDigests,
}

impl LocalCommand {
    /// A command with no arguments, environment or entrypoints, running `program` in `cwd`.
    pub fn new(
        name: impl Into<String>,
        program: impl Into<PathBuf>,
        cwd: impl Into<PathBuf>,
    ) -> LocalCommand {
        LocalCommand {
            name: name.into(),
            program: program.into(),
            args: Vec::new(),
            cwd: cwd.into(),
            env: BTreeMap::new(),
            inherit_env: Vec::new(),
            entrypoints: EntrypointDigests::new(),
        }
    }

    /// The command of a catalog's local server.
    pub fn from_catalog(server: &LocalServer) -> LocalCommand {
        let name = server
            .display_name()
            .map(str::to_owned)
            .or_else(|| {
                server
                    .program()
                    .file_name()
                    .map(|name| name.to_string_lossy().into_owned())
            })
            .unwrap_or_else(|| server.program().display().to_string());
        LocalCommand {
            name,
            program: server.program().to_owned(),
            args: server.command().iter().skip(1).cloned().collect(),
            cwd: server.cwd().to_owned(),
            env: server.env().clone(),
            inherit_env: server.inherit_env().to_vec(),
            entrypoints: server.entrypoint_digests().clone(),
        }
    }

    /// How the command is named where a URL would be: `stdio:` and the argv, space-separated
    /// (`stdio:/usr/bin/node /opt/mcp/index.js stdio`).
    pub fn label(&self) -> String {
        let mut label = format!("stdio:{}", self.program.display());
        for arg in &self.args {
            label.push(' ');
            label.push_str(arg);
        }
        label
    }

    /// The process to spawn: exactly `env` plus the inherited variables, in `cwd`, all three
    /// standard streams piped, in a process group of its own (a Ctrl-C at the gateway's
    /// terminal is the gateway's to handle; it stops its children itself), and killed if it is
    /// ever dropped still running.
    pub(super) fn to_command(&self) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(&self.program);
        command
            .args(&self.args)
            .current_dir(&self.cwd)
            .env_clear()
            .envs(&self.env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        for name in &self.inherit_env {
            if let Some(value) = std::env::var_os(name) {
                command.env(name, value);
            }
        }
        #[cfg(unix)]
        command.process_group(0);
        command
    }
}
