//! Differential fuzzing of the catalog loader: for any bytes, the streaming loader
//! (`Catalog::from_slice`, and with its halves forced onto two threads) gives the tree
//! loader's outcome: the same entries, normalized definitions, servers, warnings and
//! measurement, or the same errors in the same order (`catalog_store::reference`).
//!
//! Built by cargo-fuzz (`--cfg fuzzing`), jcs-digest reads every entry array that has a
//! guessed middle in two halves on two threads, however small, so where the halves meet is
//! fuzzed too. Seed it with catalogs (catalog-store/examples, the README's examples): random
//! bytes rarely make one.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(disagreement) = catalog_store::reference::disagreement(data) {
        panic!("{disagreement}");
    }
});
