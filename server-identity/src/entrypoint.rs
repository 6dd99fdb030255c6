//! Entrypoint digests: the identity anchor of a local (stdio) MCP server, the SHA-256 of each
//! file it is started from, checked before every spawn (docs/design.md §3 "Local (stdio) upstreams").

use std::collections::BTreeMap;
use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use sha2::{Digest, Sha256};

use crate::error::IdentityError;

/// Bytes read at a time while hashing: memory stays bounded whatever the file's size.
const CHUNK: usize = 64 * 1024;

/// Longest slice of the input an error repeats.
const MAX_ECHO: usize = 100;

/// The SHA-256 of a file's bytes, as `entrypoint_digests` pins it.
///
/// Displayed canonically as `sha256:` + 64 lowercase hex digits; [`FromStr`] also accepts
/// uppercase hex digits (the prefix is always lowercase `sha256:`, as `sha256sum`-style tools
/// and the catalog write it).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileDigest([u8; 32]);

impl FileDigest {
    /// Wraps 32 bytes of a SHA-256 output.
    pub const fn from_bytes(bytes: [u8; 32]) -> FileDigest {
        FileDigest(bytes)
    }

    /// The SHA-256 of `bytes`.
    pub fn of_bytes(bytes: &[u8]) -> FileDigest {
        FileDigest(Sha256::digest(bytes).into())
    }

    /// The 32 bytes.
    pub const fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl fmt::Display for FileDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("sha256:")?;
        crate::hex::write_lower(f, &self.0)
    }
}

impl fmt::Debug for FileDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FileDigest({self})")
    }
}

/// Why a file digest text did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FileDigestError {
    /// The text does not start with `sha256:`.
    #[error(
        "file digest `{presented}` does not start with `sha256:`; expected `sha256:` + 64 hex \
         digits (`toolgate identity --command` prints it)"
    )]
    MissingPrefix {
        /// The text (cut to 100 bytes).
        presented: String,
    },
    /// The hex part is not 64 bytes long.
    #[error(
        "file digest has {presented} bytes after `sha256:`, expected 64 hex digits: is it a \
         SHA-256?"
    )]
    WrongLength {
        /// The length found, in bytes.
        presented: usize,
    },
    /// A character that is not a hex digit.
    #[error("file digest has `{character}` at byte {position}; expected `sha256:` + 64 hex digits")]
    InvalidCharacter {
        /// The offending character.
        character: char,
        /// Its byte offset in the text.
        position: usize,
    },
}

impl FromStr for FileDigest {
    type Err = FileDigestError;

    /// `sha256:` + 64 hex digits, either case; nothing around it (no white space).
    fn from_str(text: &str) -> Result<FileDigest, FileDigestError> {
        const PREFIX: &str = "sha256:";
        let Some(hex) = text.strip_prefix(PREFIX) else {
            return Err(FileDigestError::MissingPrefix {
                presented: echo(text),
            });
        };
        if hex.len() != 64 {
            return Err(FileDigestError::WrongLength {
                presented: hex.len(),
            });
        }
        crate::hex::decode_32(hex).map(FileDigest).map_err(|at| {
            let (character, start) = crate::hex::char_at(hex, at);
            FileDigestError::InvalidCharacter {
                character,
                position: PREFIX.len() + start,
            }
        })
    }
}

fn echo(text: &str) -> String {
    if text.len() <= MAX_ECHO {
        return text.to_owned();
    }
    let (_, end) = crate::hex::char_at(text, MAX_ECHO);
    format!("{}…", &text[..end])
}

/// The SHA-256 of the file at `path`, read in bounded memory (64 KiB at a time).
///
/// A symlink is followed and its target's bytes are hashed. Only a regular file is read: a
/// directory, a FIFO, a socket or a device is an error of kind `InvalidInput` (on Unix the file
/// is opened non-blocking, so a FIFO with no writer cannot hang the caller).
///
/// # Errors
///
/// The I/O error of opening or reading (not found, permission denied, a symlink loop, …), or
/// `InvalidInput` for a file that is not a regular file.
pub fn digest_file(path: &Path) -> io::Result<FileDigest> {
    let mut file = open_without_blocking(path)?;
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        let what = if kind.is_dir() {
            "a directory"
        } else {
            "a FIFO, socket or device"
        };
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{what}, not a regular file"),
        ));
    }
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; CHUNK];
    loop {
        match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => hasher.update(&buffer[..read]),
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        }
    }
    Ok(FileDigest(hasher.finalize().into()))
}

#[cfg(unix)]
fn open_without_blocking(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    // Opening a FIFO for reading blocks until a writer comes; O_NONBLOCK returns at once, and
    // the file-type check then refuses it. On a regular file O_NONBLOCK changes nothing.
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_without_blocking(path: &Path) -> io::Result<File> {
    File::open(path)
}

/// Why an entry cannot be added to [`EntrypointDigests`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EntrypointError {
    /// The path is relative.
    #[error(
        "entrypoint path {} is relative: resolve it against the server's cwd before pinning \
         (entrypoint digests are checked by absolute path)",
        path.display()
    )]
    RelativePath {
        /// The path given.
        path: PathBuf,
    },
    /// The path was given twice.
    #[error(
        "entrypoint path {} is listed twice: each file has one digest; remove the duplicate",
        path.display()
    )]
    DuplicatePath {
        /// The path given again.
        path: PathBuf,
    },
}

/// The `entrypoint_digests` of a local server: absolute paths, each with the [`FileDigest`] its
/// file must have, in path order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EntrypointDigests {
    files: BTreeMap<PathBuf, FileDigest>,
}

impl EntrypointDigests {
    /// No entry.
    pub fn new() -> EntrypointDigests {
        EntrypointDigests::default()
    }

    /// Pins `path` to `digest`.
    ///
    /// # Errors
    ///
    /// [`EntrypointError::RelativePath`] for a relative path (resolve it against the server's
    /// `cwd` first), [`EntrypointError::DuplicatePath`] for a path already pinned. Paths are
    /// compared as given, not canonicalized: `/a/b` and `/a/./b` are two entries.
    pub fn insert(&mut self, path: PathBuf, digest: FileDigest) -> Result<(), EntrypointError> {
        if !path.is_absolute() {
            return Err(EntrypointError::RelativePath { path });
        }
        if self.files.contains_key(&path) {
            return Err(EntrypointError::DuplicatePath { path });
        }
        self.files.insert(path, digest);
        Ok(())
    }

    /// The entries, in path order.
    pub fn iter(&self) -> impl Iterator<Item = (&Path, &FileDigest)> {
        self.files
            .iter()
            .map(|(path, digest)| (path.as_path(), digest))
    }

    /// How many files are pinned.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// True when no file is pinned (a local server needs at least one: catalog-store refuses
    /// an empty set).
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// True when `path` is pinned (compared as given).
    pub fn contains(&self, path: &Path) -> bool {
        self.files.contains_key(path)
    }

    /// Reads and hashes every pinned file with [`digest_file`], in path order, and stops at the
    /// first that does not match. Run it before every spawn: nothing may be started unless it
    /// returns `Ok`.
    ///
    /// A symlink is followed: the target's bytes are hashed, and an error names the pinned path
    /// (the symlink, as the catalog lists it), not the target.
    ///
    /// The check is of the files as they are when read: a file replaced between this check and
    /// the spawn is not caught (closing that window would need executing the very file
    /// descriptor that was hashed). Spawn right after verifying, from the same paths.
    ///
    /// # Errors
    ///
    /// [`IdentityError::EntrypointUnreadable`] when a file cannot be read (missing, permission
    /// denied, a directory, a symlink loop, …); [`IdentityError::EntrypointMismatch`] when its
    /// digest differs. Both have anchor [`Anchor::Entrypoint`](crate::Anchor::Entrypoint).
    pub fn verify(&self) -> Result<EntrypointsVerified, IdentityError> {
        for (path, expected) in &self.files {
            let observed =
                digest_file(path).map_err(|error| IdentityError::EntrypointUnreadable {
                    path: path.clone(),
                    detail: error.to_string(),
                })?;
            if observed != *expected {
                return Err(IdentityError::EntrypointMismatch {
                    path: path.clone(),
                    expected: *expected,
                    observed,
                });
            }
        }
        Ok(EntrypointsVerified {
            digests: self.clone(),
        })
    }
}

/// Proof that every pinned entrypoint had its digest when [`EntrypointDigests::verify`] read it.
/// Only `verify` makes one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntrypointsVerified {
    digests: EntrypointDigests,
}

impl EntrypointsVerified {
    /// The files verified and their digests (for the audit record).
    pub fn digests(&self) -> &EntrypointDigests {
        &self.digests
    }
}
