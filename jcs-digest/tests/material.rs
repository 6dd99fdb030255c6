//! The test material is committed in the repository's `corpus/` (vectors under `corpus/jcs`,
//! served catalogs under `corpus/catalogs`; provenance in `corpus/PROVENANCE.md`).

use std::path::PathBuf;

/// The path of `relative` inside `corpus/`, failing clearly if it is missing.
pub fn material_path(relative: &str) -> PathBuf {
    let path = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus")).join(relative);
    assert!(
        path.exists(),
        "the test material {} is missing (it is committed under corpus/)",
        path.display()
    );
    path
}

/// The bytes of `relative` inside `corpus/`.
pub fn read_material(relative: &str) -> Vec<u8> {
    let path = material_path(relative);
    std::fs::read(&path)
        .unwrap_or_else(|error| panic!("cannot read test material {}: {error}", path.display()))
}

/// The text of `relative` inside `corpus/`.
pub fn read_material_text(relative: &str) -> String {
    String::from_utf8(read_material(relative))
        .unwrap_or_else(|error| panic!("test material {relative} is not UTF-8: {error}"))
}
