//! Reading a command's input: a file path, or `-` for standard input.

use std::io::Read;
use std::path::Path;

use crate::outcome::Failure;

/// Reads all bytes of `path`, or of standard input when `path` is `-`.
pub(crate) fn read_input(path: &Path) -> Result<Vec<u8>, Failure> {
    if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .lock()
            .read_to_end(&mut bytes)
            .map_err(|e| Failure::io("cannot read standard input", e))?;
        return Ok(bytes);
    }
    std::fs::read(path).map_err(|e| {
        Failure::io(
            format!(
                "cannot read {} (check the path and its permissions)",
                path.display()
            ),
            e,
        )
    })
}

/// The name used for `path` in messages.
pub(crate) fn display_name(path: &Path) -> String {
    if path.as_os_str() == "-" {
        "<stdin>".to_owned()
    } else {
        path.display().to_string()
    }
}
