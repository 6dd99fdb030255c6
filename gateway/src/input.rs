//! Reading a command's input: a file path, or `-` for standard input.

use std::fs::File;
use std::io::{self, Read};
use std::ops::Deref;
use std::path::Path;

use crate::outcome::Failure;

/// The boundary a file's bytes start at in their buffer.
///
/// The kernel copies a file into memory much faster when the destination is aligned to a
/// cache line: reading the 17.5 MB benchmark catalog took 14 ms into a 64-byte-aligned buffer
/// against 24 ms at the 16-byte offset glibc gives a large allocation, which is where
/// `std::fs::read` puts it (BENCHMARKS.md, "The input read at a cache-line boundary").
const ALIGN: usize = 64;

/// The bytes of a command's input, read whole.
pub(crate) struct InputBytes {
    buffer: Vec<u8>,
    /// Where the input starts in `buffer` (the padding before it brings it to [`ALIGN`]).
    start: usize,
}

impl Deref for InputBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.buffer.get(self.start..).unwrap_or_default()
    }
}

/// Reads all bytes of `path`, or of standard input when `path` is `-`.
pub(crate) fn read_input(path: &Path) -> Result<InputBytes, Failure> {
    if path.as_os_str() == "-" {
        let mut buffer = Vec::new();
        std::io::stdin()
            .lock()
            .read_to_end(&mut buffer)
            .map_err(|e| Failure::io("cannot read standard input", e))?;
        return Ok(InputBytes { buffer, start: 0 });
    }
    read_file(path).map_err(|e| read_failure(path, e))
}

/// The failure for a file that cannot be opened or read.
pub(crate) fn read_failure(path: &Path, error: io::Error) -> Failure {
    Failure::io(
        format!(
            "cannot read {} (check the path and its permissions)",
            path.display()
        ),
        error,
    )
}

/// What `std::fs::read` does, with the bytes starting at an [`ALIGN`] boundary: the buffer is
/// reserved for the file's size and the padding, so `read_to_end` fills it in place (no zeroing
/// first, no growth unless the file grew since its size was read).
fn read_file(path: &Path) -> io::Result<InputBytes> {
    let mut file = File::open(path)?;
    let size = file
        .metadata()
        .ok()
        .and_then(|metadata| usize::try_from(metadata.len()).ok())
        .unwrap_or(0);
    let mut buffer: Vec<u8> = Vec::new();
    buffer
        .try_reserve_exact(size.saturating_add(ALIGN))
        .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
    let start = buffer.as_ptr().align_offset(ALIGN).min(ALIGN);
    buffer.resize(start, 0);
    file.read_to_end(&mut buffer)?;
    Ok(InputBytes { buffer, start })
}

/// The name used for `path` in messages.
pub(crate) fn display_name(path: &Path) -> String {
    if path.as_os_str() == "-" {
        "<stdin>".to_owned()
    } else {
        path.display().to_string()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    /// A file of `len` bytes of a repeating pattern in a directory of this test's own.
    fn file_of(name: &str, len: usize) -> (std::path::PathBuf, Vec<u8>) {
        let dir =
            std::env::temp_dir().join(format!("toolgate-input-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("input.json");
        let pattern = b"[{\"name\":\"x\"}]\n";
        let bytes: Vec<u8> = (0..len).map(|i| pattern[i % pattern.len()]).collect();
        std::fs::write(&path, &bytes).unwrap();
        (path, bytes)
    }

    #[test]
    fn a_file_is_read_whole_starting_at_a_cache_line() {
        // Below and above glibc's threshold for a mapping of its own (128 KiB), where the
        // allocation's own offset differs.
        for (name, len) in [("small", 1_000), ("large", 300_001)] {
            let (path, expected) = file_of(name, len);
            let bytes = read_input(&path).unwrap();
            assert_eq!(&*bytes, expected.as_slice(), "{name}");
            assert_eq!(bytes.as_ptr() as usize % ALIGN, 0, "{name}");
            std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
        }
    }

    #[test]
    fn an_empty_file_is_no_bytes() {
        let (path, _) = file_of("empty", 0);
        assert_eq!(&*read_input(&path).unwrap(), b"");
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    #[test]
    fn a_directory_is_an_error_that_names_it() {
        let (path, _) = file_of("directory", 0);
        let directory = path.parent().unwrap();
        let Err(failure) = read_input(directory) else {
            panic!("a directory was read as a file");
        };
        assert_eq!(
            failure.to_string(),
            format!(
                "cannot read {} (check the path and its permissions): Is a directory (os error 21)",
                directory.display()
            )
        );
        std::fs::remove_dir_all(directory).unwrap();
    }
}
