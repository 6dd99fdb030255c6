//! What a command ends with, and how that maps to an exit code.

use std::fmt;
use std::io;

/// A command that ran to completion says whether its check passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Exit 0.
    Pass,
    /// Exit 1: the command ran, and what it checked did not hold (its output says why).
    Fail,
}

/// A command that could not produce its answer.
#[derive(Debug)]
pub(crate) enum Failure {
    /// Exit 1: the input was read but is invalid (a document that cannot be digested, a catalog
    /// that does not load).
    Invalid(String),
    /// Exit 2: bad usage or an I/O error.
    Usage(String),
    /// Exit 2, except that a closed stdout (`toolgate … | head`) is not reported.
    Io { context: String, source: io::Error },
}

impl Failure {
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            Failure::Invalid(_) => 1,
            Failure::Io { source, .. } if source.kind() == io::ErrorKind::BrokenPipe => 0,
            Failure::Usage(_) | Failure::Io { .. } => 2,
        }
    }

    pub(crate) fn is_broken_pipe(&self) -> bool {
        matches!(self, Failure::Io { source, .. } if source.kind() == io::ErrorKind::BrokenPipe)
    }

    pub(crate) fn io(context: impl Into<String>, source: io::Error) -> Failure {
        Failure::Io {
            context: context.into(),
            source,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Invalid(message) | Failure::Usage(message) => f.write_str(message),
            Failure::Io { context, source } => write!(f, "{context}: {source}"),
        }
    }
}

/// Writing to stdout: a closed pipe surfaces as a [`Failure::Io`] that exits quietly.
pub(crate) fn stdout_error(source: io::Error) -> Failure {
    Failure::io("cannot write to standard output", source)
}
