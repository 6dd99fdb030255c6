//! What a policy decides and why a policy file is refused, with or without Cedar in the build.

/// A policy file that cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// The file could not be read.
    #[error("--policy {path}: cannot read it ({source})")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The text is not Cedar.
    #[error("--policy {path}:{line}:{column}: {message}; fix the policy (Cedar syntax)")]
    Parse {
        /// The file.
        path: String,
        /// 1-based line of the first error.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// The policies cannot form a set (two with one `@id`, a template).
    #[error("--policy {path}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// This build has no Cedar (cargo feature `cedar`).
    #[error(
        "--policy {path}: this toolgate was built without Cedar; rebuild with `--features cedar`"
    )]
    Unavailable {
        /// The file.
        path: String,
    },
    /// The file holds no policy: every call would be refused.
    #[error("--policy {path}: no policy in the file; every call would be refused")]
    Empty {
        /// The file.
        path: String,
    },
}

/// A decision and the policies that made it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyDecision {
    /// Whether the call may go on.
    pub allowed: bool,
    /// The ids of the policies that decided (the `permit`s that allowed, or the `forbid`s that
    /// denied; empty when nothing matched and the default denied).
    pub policies: Vec<String>,
}
