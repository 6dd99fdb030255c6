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
        "--policy {path}: this toolgate was built without Cedar; rebuild it with the cargo \
         feature `cedar` (on by default)"
    )]
    Unavailable {
        /// The file.
        path: String,
    },
    /// The schema file (`--policy-schema`) could not be read.
    #[error("--policy-schema {path}: cannot read it ({source})")]
    SchemaRead {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The schema is not a Cedar schema, or names a type it does not declare.
    #[error("--policy-schema {path}:{line}:{column}: {message}; fix the schema")]
    SchemaParse {
        /// The file.
        path: String,
        /// 1-based line of the first error.
        line: usize,
        /// 1-based column.
        column: usize,
        /// Cedar's message.
        message: String,
    },
    /// The schema parses but cannot be used (a type it names is not declared, say), at no
    /// place Cedar points to.
    #[error("--policy-schema {path}: {message}; fix the schema")]
    SchemaInvalid {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A policy does not validate against the schema (Cedar's validator, strict mode).
    #[error(
        "--policy {path}:{line}:{column}: does not validate against --policy-schema {schema}: \
         {message}{}; fix the policy or the schema",
        more_errors(*.more)
    )]
    NotValid {
        /// The policy file.
        path: String,
        /// 1-based line of the first error.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The id of the policy (its `@id`, else `policy0`, `policy1`, …).
        policy: String,
        /// The schema file.
        schema: String,
        /// The validator's message.
        message: String,
        /// How many more errors the validator found.
        more: usize,
    },
    /// The file holds no policy: every call would be refused.
    #[error("--policy {path}: no policy in the file; every call would be refused")]
    Empty {
        /// The file.
        path: String,
    },
}

/// `" (and N more errors)"`, or nothing for none.
fn more_errors(more: usize) -> String {
    match more {
        0 => String::new(),
        1 => " (and 1 more error)".to_owned(),
        n => format!(" (and {n} more errors)"),
    }
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
