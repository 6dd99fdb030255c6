//! The tree loader, kept as the reference the streaming loader is checked against by the unit
//! tests and the `fuzz_catalog` target. Behind the `reference-loader` feature (off by
//! default): not part of the crate's stable API, and nothing but tests and fuzzing needs it.

use std::fmt;

use crate::catalog::Catalog;
use crate::error::CatalogLoadError;
use crate::halves::Threads;

/// The ways a catalog is loaded, each compared with the tree loader.
const LOADERS: [(Threads, &str); 2] = [
    (
        Threads::Two,
        "the streaming loader, two threads whatever the size",
    ),
    (
        Threads::UpToTwo,
        "the streaming loader as Catalog::from_slice runs it",
    ),
];

/// A loader whose outcome for some bytes is not the tree loader's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disagreement {
    /// Which loader disagreed.
    pub loader: &'static str,
    /// The tree loader's outcome, as text.
    pub reference: String,
    /// That loader's outcome, as text.
    pub found: String,
}

impl fmt::Display for Disagreement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} disagrees with the tree loader\n--- tree loader:\n{}\n--- {}:\n{}",
            self.loader, self.reference, self.loader, self.found
        )
    }
}

/// Loads `bytes` with the tree loader (a strict `Value` tree of the whole file, entries read
/// one after the other on one thread) and with the streaming loader on two threads and as
/// [`Catalog::from_slice`] runs it: the first whose outcome (every entry, server, warning and
/// the measurement, or every error in order) differs from the tree loader's.
pub fn disagreement(bytes: &[u8]) -> Option<Disagreement> {
    let reference = outcome(&Catalog::from_bytes_with(bytes, None, Threads::One));
    LOADERS.into_iter().find_map(|(threads, loader)| {
        let found = outcome(&Catalog::from_bytes_with(bytes, None, threads));
        (found != reference).then(|| Disagreement {
            loader,
            reference: reference.clone(),
            found,
        })
    })
}

/// Everything a load gives, as text to compare (a `Catalog`'s index is a `HashMap`, so it is
/// compared through `lookup`).
fn outcome(result: &Result<Catalog, CatalogLoadError>) -> String {
    match result {
        Ok(catalog) => {
            let misplaced: Vec<usize> = (0..catalog.entries().len())
                .filter(|&index| {
                    let entry = &catalog.entries()[index];
                    !catalog
                        .lookup(entry.tool_name())
                        .is_some_and(|found| std::ptr::eq(found, entry))
                })
                .collect();
            format!(
                "{:?}\n{:?}\n{:?}\n{:?}\n{:?}\nlookup misses {misplaced:?}",
                catalog.catalog_version(),
                catalog.entries(),
                catalog.servers(),
                catalog.warnings(),
                catalog.measurement()
            )
        }
        Err(error) => format!("{error:?}\n{error}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loaders_agree_on_a_catalog_and_on_an_error() {
        let example = include_bytes!("../../examples/catalog.json");
        assert_eq!(disagreement(example), None);
        assert_eq!(disagreement(b"{\"entries\": [}"), None);
        let refused = outcome(&Catalog::from_slice(b"{\"entries\": [}"));
        assert_eq!(
            refused.lines().last(),
            Some(
                "the catalog is not strict JSON: expected a JSON value, found '}' at line 1 \
                 column 14 (byte 13): the input is not JSON (RFC 8259); fix the syntax"
            )
        );
    }

    #[test]
    fn a_disagreement_shows_both_outcomes_under_the_loader_s_name() {
        let disagreement = Disagreement {
            loader: LOADERS[0].1,
            reference: "one".to_owned(),
            found: "two".to_owned(),
        };
        assert_eq!(
            disagreement.to_string(),
            "the streaming loader, two threads whatever the size disagrees with the tree \
             loader\n--- tree loader:\none\n--- the streaming loader, two threads whatever the \
             size:\ntwo"
        );
    }
}
