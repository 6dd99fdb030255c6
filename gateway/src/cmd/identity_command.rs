//! `toolgate identity --command -- CMD ARGS…`: what a local (stdio) server would run, and the
//! `entrypoint_digests` that pin it (docs/design.md §3 "Local (stdio) upstreams").
//!
//! `CMD` is resolved as the catalog resolves `command[0]`: an absolute path as it is, a bare
//! name on the absolute directories of `PATH`; a relative path with a `/` is refused. Every
//! argument that names an existing regular file (relative to the current directory, which
//! becomes the catalog's `cwd`) is pinned too, and the output says which arguments were.

use catalog_store::ProgramResolution;
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use server_identity::{EntrypointDigests, FileDigest, digest_file};

use crate::outcome::{Failure, Verdict, stdout_error};

/// One file to pin, and which argument named it (0 is the program).
pub(crate) struct PinnedFile {
    pub(crate) argument: usize,
    pub(crate) path: PathBuf,
    pub(crate) digest: FileDigest,
}

/// What a local server's command line runs, and the files that pin it: the one computation
/// behind `identity --command` and `pin -- COMMAND`.
pub(crate) struct Entrypoints {
    /// `argv[0]` resolved as the catalog resolves it.
    pub(crate) program: PathBuf,
    /// The program, then each argument naming an existing regular file (relative to `cwd`).
    pub(crate) files: Vec<PinnedFile>,
    /// The arguments that name no existing file, so are not pinned.
    pub(crate) not_files: Vec<String>,
}

impl Entrypoints {
    /// Resolves `argv[0]` on `path_var` and hashes it and every argument that names an existing
    /// regular file relative to `cwd` (absolute). `argv` must not be empty.
    pub(crate) fn compute(
        argv: &[String],
        cwd: &Path,
        path_var: Option<&OsStr>,
    ) -> Result<Entrypoints, Failure> {
        let Some(program) = argv.first() else {
            return Err(Failure::Usage("the command line is empty".to_owned()));
        };
        let resolved = resolve(program, path_var)?;
        let mut files = vec![PinnedFile {
            argument: 0,
            digest: digest(&resolved)?,
            path: resolved.clone(),
        }];
        let mut not_files = Vec::new();
        for (index, argument) in argv.iter().enumerate().skip(1) {
            let path = cwd.join(argument);
            match std::fs::metadata(&path) {
                Ok(metadata) if metadata.is_file() => files.push(PinnedFile {
                    argument: index,
                    digest: digest(&path)?,
                    path,
                }),
                _ => not_files.push(argument.clone()),
            }
        }
        Ok(Entrypoints {
            program: resolved,
            files,
            not_files,
        })
    }

    /// The catalog's `entrypoint_digests` object (a file named twice is listed once).
    pub(crate) fn digests_object(&self) -> BTreeMap<String, String> {
        self.files
            .iter()
            .map(|file| (file.path.display().to_string(), file.digest.to_string()))
            .collect()
    }

    /// The digests a `LocalUpstream` verifies before it starts the process.
    pub(crate) fn digests(&self) -> EntrypointDigests {
        let mut digests = EntrypointDigests::new();
        for file in &self.files {
            // Every path is absolute; a file named twice (the same path) is pinned once.
            let _ = digests.insert(file.path.clone(), file.digest);
        }
        digests
    }
}

pub(crate) fn run(argv: &[String], json: bool) -> Result<Verdict, Failure> {
    if argv.is_empty() {
        return Err(Failure::Usage(
            "identity --command needs the command after `--`, e.g. `toolgate identity --command \
             -- node dist/index.js`"
                .to_owned(),
        ));
    }
    let cwd = std::env::current_dir()
        .map_err(|error| Failure::io("cannot read the current directory", error))?;
    let found = Entrypoints::compute(argv, &cwd, std::env::var_os("PATH").as_deref())?;
    let text = if json {
        render_json(argv, &cwd, &found)
    } else {
        render_text(argv, &cwd, &found)
    };
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes()).map_err(stdout_error)?;
    stdout.flush().map_err(stdout_error)?;
    Ok(Verdict::Pass)
}

/// `command[0]` as the catalog resolves it (the catalog's own resolver).
fn resolve(program: &str, path_var: Option<&OsStr>) -> Result<PathBuf, Failure> {
    catalog_store::resolve_program(program, path_var).map_err(|refusal| match refusal {
        ProgramResolution::RelativePath => Failure::Usage(format!(
            "{program:?} is a relative path: write the program as an absolute path, or as a bare \
             name to look up on PATH (the catalog resolves command[0] the same way)"
        )),
        ProgramResolution::NotFound { searched } => {
            let list: Vec<String> = searched.iter().map(|d| d.display().to_string()).collect();
            Failure::Usage(format!(
                "{program:?} is not an executable file in any absolute PATH directory (searched: \
                 {}); give an absolute path",
                if list.is_empty() {
                    "none".to_owned()
                } else {
                    list.join(", ")
                }
            ))
        }
        _ => Failure::Usage(format!("{program:?} cannot be resolved to a program")),
    })
}

fn digest(path: &Path) -> Result<FileDigest, Failure> {
    digest_file(path).map_err(|error| Failure::io(format!("cannot hash {}", path.display()), error))
}

fn render_json(argv: &[String], cwd: &Path, found: &Entrypoints) -> String {
    let files: Vec<Value> = found
        .files
        .iter()
        .map(|file| {
            json!({
                "argument": file.argument,
                "path": file.path.display().to_string(),
                "digest": file.digest.to_string(),
            })
        })
        .collect();
    let value = json!({
        "command": argv,
        "program": found.program.display().to_string(),
        "cwd": cwd.display().to_string(),
        "entrypoint_digests": found.digests_object(),
        "files": files,
        "not_files": found.not_files,
    });
    format!("{}\n", jcs_digest::order::Sorted(&value))
}

fn render_text(argv: &[String], cwd: &Path, found: &Entrypoints) -> String {
    let program = &found.program;
    let mut out = String::new();
    out.push_str(&format!("program  {}", program.display()));
    if argv[0] != program.display().to_string() {
        out.push_str(&format!("  (resolved on PATH from {:?})", argv[0]));
    }
    out.push('\n');
    out.push_str(&format!("cwd      {}\n", cwd.display()));
    for file in &found.files {
        let what = match file.argument {
            0 => "the program".to_owned(),
            index => format!("argument {index}, an existing file"),
        };
        out.push_str(&format!(
            "pin      {}  {}  ({what})\n",
            file.digest,
            file.path.display()
        ));
    }
    for argument in &found.not_files {
        out.push_str(&format!(
            "not pinned  {argument:?}  (not an existing file)\n"
        ));
    }
    out.push('\n');
    out.push_str(
        "Catalog lines for this local server (a script the program loads by itself, such as a \
         module it imports, is not seen here: add its path to entrypoint_digests too):\n",
    );
    let server = json!({
        "command": argv,
        "cwd": cwd.display().to_string(),
        "entrypoint_digests": found.digests_object(),
    });
    let pretty = jcs_digest::order::to_string_pretty(&server);
    out.push_str(&format!("  \"server\": {}\n", pretty.replace('\n', "\n  ")));
    out
}
