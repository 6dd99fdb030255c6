//! The shared test material lives in `../shared` beside the repository (read-only, not copied
//! into the project).

use std::path::PathBuf;

/// The path of `relative` inside the shared material, failing clearly if it is missing.
pub fn shared_path(relative: &str) -> PathBuf {
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared"));
    assert!(
        root.is_dir(),
        "the shared test material is missing: expected a directory at {} \
         (`../shared` beside the repository root)",
        root.display()
    );
    root.join(relative)
}

/// The bytes of `relative` inside the shared material.
pub fn read_shared(relative: &str) -> Vec<u8> {
    let path = shared_path(relative);
    std::fs::read(&path)
        .unwrap_or_else(|error| panic!("cannot read shared test file {}: {error}", path.display()))
}

/// The text of `relative` inside the shared material.
pub fn read_shared_text(relative: &str) -> String {
    String::from_utf8(read_shared(relative))
        .unwrap_or_else(|error| panic!("shared test file {relative} is not UTF-8: {error}"))
}
