//! Project automation for the workspace, run as `cargo xtask <task>`.
//!
//! # Tasks
//!
//! - `gen-corpus`: regenerates the conformance corpus under `corpus/` from its two pinned
//!   catalogs: the drifted catalog, the two edge-rule catalogs, `digests.json` and the vectors
//!   `COMP-MCP-004` to `006` (seed 000, sections 5, 7 and 8). The output is the same, byte for
//!   byte, on every run; the pinned catalogs themselves are never written.
//! - `gen-corpus --check`: regenerates in memory and compares with the files in `corpus/`;
//!   prints a unified difference of every stale file and exits 1 if any is stale.
//!
//! # Exit codes
//!
//! 0 success; 1 `--check` found a stale or missing file; 2 usage, I/O or derivation error.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod corpus;
mod diff;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::corpus::{CorpusError, GeneratedFile};

/// The usage text, printed for `--help` and after a usage error.
const USAGE: &str = "usage: cargo xtask gen-corpus [--check]

  gen-corpus           regenerate corpus/ (drifted and edge catalogs, digests.json, vectors)
  gen-corpus --check   exit 1 and show the difference if anything in corpus/ is stale";

/// What the command line asks for.
#[derive(Debug, PartialEq, Eq)]
enum Task {
    /// Print the usage text.
    Help,
    /// Regenerate the corpus; `check` compares instead of writing.
    GenCorpus {
        /// Compare with the committed files instead of writing them.
        check: bool,
    },
}

/// Why a task could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
enum XtaskError {
    /// The command line is not one of the accepted forms.
    #[error("{0}\n\n{USAGE}")]
    Usage(String),
    /// The corpus could not be generated.
    #[error(transparent)]
    Corpus(#[from] CorpusError),
    /// A generated file could not be written.
    #[error("cannot write {path}: {source}; check that the directory exists and is writable")]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("xtask: error: {error}");
            ExitCode::from(2)
        }
    }
}

/// Parses the arguments (without the program name).
fn parse_args(args: &[String]) -> Result<Task, XtaskError> {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        [] | ["help" | "-h" | "--help"] => Ok(Task::Help),
        ["gen-corpus"] => Ok(Task::GenCorpus { check: false }),
        ["gen-corpus", "--check"] => Ok(Task::GenCorpus { check: true }),
        ["gen-corpus", other, ..] => Err(XtaskError::Usage(format!(
            "unexpected argument {other:?} to gen-corpus"
        ))),
        [other, ..] => Err(XtaskError::Usage(format!("unknown task {other:?}"))),
    }
}

fn run(args: Vec<String>) -> Result<ExitCode, XtaskError> {
    match parse_args(&args)? {
        Task::Help => {
            println!("{USAGE}");
            Ok(ExitCode::SUCCESS)
        }
        Task::GenCorpus { check } => {
            let root = workspace_root();
            let files = corpus::generate(&root)?;
            if check {
                Ok(check_files(&root, &files))
            } else {
                write_files(&root, &files)?;
                Ok(ExitCode::SUCCESS)
            }
        }
    }
}

/// The workspace root: the parent of this crate's directory, whatever the current directory.
fn workspace_root() -> PathBuf {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir
        .parent()
        .map_or_else(|| manifest_dir.to_path_buf(), Path::to_path_buf)
}

fn write_files(root: &Path, files: &[GeneratedFile]) -> Result<(), XtaskError> {
    for file in files {
        let path = root.join(&file.path);
        std::fs::write(&path, &file.bytes).map_err(|source| XtaskError::Write {
            path: path.clone(),
            source,
        })?;
        println!("wrote {} ({} bytes)", file.path, file.bytes.len());
    }
    Ok(())
}

/// What `--check` found: the stale files with their differences, and unexpected files.
#[derive(Debug, Default)]
struct Staleness {
    /// Each stale or missing file, with the text that shows why.
    stale: Vec<(String, String)>,
    /// Files under `corpus/vectors/` the generator does not produce.
    unexpected: Vec<String>,
}

impl Staleness {
    fn is_clean(&self) -> bool {
        self.stale.is_empty() && self.unexpected.is_empty()
    }
}

/// Compares every generated file with the file on disk under `root`.
fn compare(root: &Path, files: &[GeneratedFile]) -> Staleness {
    let mut staleness = Staleness::default();
    for file in files {
        let committed = std::fs::read(root.join(&file.path)).ok();
        if committed.as_deref() == Some(file.bytes.as_slice()) {
            continue;
        }
        let shown = match &committed {
            Some(bytes) => diff::unified(
                &format!("a/{} (committed)", file.path),
                &format!("b/{} (generated)", file.path),
                &String::from_utf8_lossy(bytes),
                &String::from_utf8_lossy(&file.bytes),
            ),
            None => format!(
                "{} is missing; `cargo xtask gen-corpus` creates it\n",
                file.path
            ),
        };
        staleness.stale.push((file.path.clone(), shown));
    }
    staleness.unexpected = corpus::unexpected_vector_files(root, files);
    staleness
}

/// `--check`: prints the difference of every stale file; exit code 1 if anything is stale,
/// missing or unexpected.
fn check_files(root: &Path, files: &[GeneratedFile]) -> ExitCode {
    let staleness = compare(root, files);
    let mut out = std::io::stdout().lock();
    // A closed stdout (e.g. `| head`) is not worth more than the exit code.
    for (_, shown) in &staleness.stale {
        let _ = out.write_all(shown.as_bytes());
    }
    for path in &staleness.unexpected {
        let _ = writeln!(
            out,
            "{path} is not produced by `cargo xtask gen-corpus`; remove it or add it to the generator"
        );
    }
    let _ = out.flush();
    if staleness.is_clean() {
        eprintln!("xtask: corpus/ is up to date ({} files)", files.len());
        return ExitCode::SUCCESS;
    }
    let names: Vec<&str> = staleness
        .stale
        .iter()
        .map(|(path, _)| path.as_str())
        .chain(staleness.unexpected.iter().map(String::as_str))
        .collect();
    eprintln!(
        "xtask: corpus/ is stale: {}; run `cargo xtask gen-corpus` and commit the result",
        names.join(", ")
    );
    ExitCode::from(1)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    /// The committed corpus is what the generator produces (the same check `.ci/run` makes).
    #[test]
    fn committed_corpus_is_up_to_date() {
        let files = corpus::generate(&workspace_root()).unwrap();
        let staleness = compare(&workspace_root(), &files);
        assert!(staleness.is_clean(), "{staleness:?}");
        assert_eq!(
            files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(),
            [
                "corpus/catalogs/deepwiki-tools-list-drifted.json",
                "corpus/catalogs/edge-duplicates-tools-list.json",
                "corpus/catalogs/edge-overflow-tools-list.json",
                "corpus/digests.json",
                "corpus/vectors/COMP-MCP-004.json",
                "corpus/vectors/COMP-MCP-005.json",
                "corpus/vectors/COMP-MCP-006.json",
            ]
        );
    }

    #[test]
    fn generation_is_byte_identical_on_every_run() {
        let first = corpus::generate(&workspace_root()).unwrap();
        let second = corpus::generate(&workspace_root()).unwrap();
        assert_eq!(first.len(), second.len());
        for (a, b) in first.iter().zip(&second) {
            assert_eq!((&a.path, &a.bytes), (&b.path, &b.bytes));
        }
    }

    /// One altered digest makes `--check` report exactly that file, with a difference that
    /// shows the committed and the generated line.
    #[test]
    fn check_names_a_stale_file_and_shows_the_difference() {
        let files = corpus::generate(&workspace_root()).unwrap();
        let root = temp_root("stale");
        for file in &files {
            let path = root.join(&file.path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, &file.bytes).unwrap();
        }
        assert!(compare(&root, &files).is_clean());

        let digests = root.join("corpus/digests.json");
        let text = std::fs::read_to_string(&digests).unwrap();
        let good = "sha256:b3d3955a3da0c0eb95a263ac53e4df2efcb0634193b7cbee92337144f4146cbd";
        let bad = "sha256:b3d3955a3da0c0eb95a263ac53e4df2efcb0634193b7cbee92337144f4146cb0";
        std::fs::write(&digests, text.replacen(good, bad, 1)).unwrap();
        std::fs::write(root.join("corpus/vectors/COMP-MCP-999.json"), "{}\n").unwrap();
        std::fs::remove_file(root.join("corpus/vectors/COMP-MCP-006.json")).unwrap();

        let staleness = compare(&root, &files);
        let stale: Vec<&str> = staleness.stale.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            stale,
            ["corpus/digests.json", "corpus/vectors/COMP-MCP-006.json"]
        );
        let shown = &staleness.stale[0].1;
        assert!(shown.starts_with(
            "--- a/corpus/digests.json (committed)\n+++ b/corpus/digests.json (generated)\n@@ "
        ));
        assert!(
            shown.contains(&format!(
                "\n-      \"catalog_digest\": \"{bad}\"\n+      \"catalog_digest\": \"{good}\"\n"
            )),
            "{shown}"
        );
        assert_eq!(
            staleness.stale[1].1,
            "corpus/vectors/COMP-MCP-006.json is missing; `cargo xtask gen-corpus` creates it\n"
        );
        assert_eq!(staleness.unexpected, ["corpus/vectors/COMP-MCP-999.json"]);
        let _ = std::fs::remove_dir_all(&root);
    }

    /// A fresh empty directory under the system temporary directory.
    fn temp_root(name: &str) -> PathBuf {
        let root = std::env::temp_dir().join(format!("xtask-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("corpus").join("vectors")).unwrap();
        root
    }

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn parses_the_two_forms_and_refuses_others() {
        assert_eq!(
            parse_args(&args(&["gen-corpus"])).ok(),
            Some(Task::GenCorpus { check: false })
        );
        assert_eq!(
            parse_args(&args(&["gen-corpus", "--check"])).ok(),
            Some(Task::GenCorpus { check: true })
        );
        assert_eq!(parse_args(&args(&[])).ok(), Some(Task::Help));
        let error = parse_args(&args(&["gen-corpus", "--chek"])).err();
        assert_eq!(
            error.map(|e| e.to_string().lines().next().map(str::to_owned)),
            Some(Some(
                "unexpected argument \"--chek\" to gen-corpus".to_owned()
            ))
        );
        assert!(matches!(
            parse_args(&args(&["gen"])),
            Err(XtaskError::Usage(message)) if message == "unknown task \"gen\""
        ));
    }
}
