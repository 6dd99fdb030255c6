//! Entrypoint digests of a local server: the SHA-256 of each file it is started from
//! (DESIGN.md §3, "Local (stdio) upstreams").
//!
//! A thin stand-in for `server_identity::{FileDigest, EntrypointDigests}`, which are being
//! written with exactly these names and signatures; when they land, this module becomes a
//! `pub use` of them (the catalog only builds and reads the set; hashing the files before a
//! spawn is `server-identity`'s `verify()`).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use jcs_digest::{Digest, DigestParseError};

/// The SHA-256 of a file's bytes: `sha256:<64 lowercase hex>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FileDigest(Digest);

impl FromStr for FileDigest {
    type Err = DigestParseError;

    /// `sha256:` + 64 lowercase hex digits.
    fn from_str(text: &str) -> Result<FileDigest, DigestParseError> {
        text.parse().map(FileDigest)
    }
}

impl fmt::Display for FileDigest {
    /// The canonical form, `sha256:<64 lowercase hex>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Why a path cannot join an [`EntrypointDigests`] set.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EntrypointError {
    /// The path is not absolute (the catalog resolves relative paths against `cwd` first).
    #[error("the entrypoint path {} is not absolute", path.display())]
    NotAbsolute {
        /// The path.
        path: PathBuf,
    },
    /// The path is already in the set.
    #[error("the entrypoint path {} is listed twice", path.display())]
    Duplicate {
        /// The path.
        path: PathBuf,
    },
}

/// The files a local server is started from, each with the digest it must have: absolute
/// paths, each once, in path order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EntrypointDigests(BTreeMap<PathBuf, FileDigest>);

impl EntrypointDigests {
    /// An empty set.
    pub fn new() -> EntrypointDigests {
        EntrypointDigests::default()
    }

    /// Adds `path` with the digest its bytes must have.
    ///
    /// # Errors
    ///
    /// [`EntrypointError::NotAbsolute`] for a relative path, [`EntrypointError::Duplicate`]
    /// for a path already in the set.
    pub fn insert(&mut self, path: PathBuf, digest: FileDigest) -> Result<(), EntrypointError> {
        if !path.is_absolute() {
            return Err(EntrypointError::NotAbsolute { path });
        }
        if self.0.contains_key(&path) {
            return Err(EntrypointError::Duplicate { path });
        }
        self.0.insert(path, digest);
        Ok(())
    }

    /// The paths and digests, in path order.
    pub fn iter(&self) -> impl Iterator<Item = (&Path, &FileDigest)> {
        self.0.iter().map(|(path, digest)| (path.as_path(), digest))
    }

    /// How many files are listed.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether no file is listed.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `path` is listed (compared component by component, as `Path` compares).
    pub fn contains(&self, path: &Path) -> bool {
        self.0.contains_key(path)
    }
}
