//! Where the wall time of digesting one tools/list document read whole goes, phase by phase (as
//! `toolgate digest` spends it on standard input, and spent it on a file before it read files
//! in chunks): reading the file into a fresh buffer, the streaming read of the document (two
//! threads for a large tools array), the fold, and freeing what was built. The
//! first round is what one process run spends: its buffers are new memory, which the kernel
//! faults in page by page. Later rounds reuse memory the allocator kept, so they show what the
//! same work costs without those faults. Printed: the first round, and the median and minimum
//! of the later ones, with the catalog digest so that a run can be checked.
//!
//! ```sh
//! cargo bench -p catalog-fold --bench phases -- FILE [ROUNDS]
//! ```
//!
//! A second table times, in the same process and the same way (first round, later rounds), what
//! `toolgate digest FILE` runs now and the floors it is compared with: `digest_in_chunks` over
//! the file (a window at a time, two threads, keys, fold), the strict reader's
//! `skip_value` over the whole document (every rule checked, nothing written, one thread),
//! serde_json reading it into `IgnoredAny` (no strict rules, nothing kept), and SHA-256 of its
//! bytes.
//!
//! `cargo bench` runs it in `catalog-fold/`, so a relative FILE is taken from there.
//! Without FILE it digests a generated catalog of 10,000 tools (`bench/catalog_gen.rs`), written
//! to a temporary file first. This is a probe for BENCHMARKS.md, not a criterion benchmark:
//! `cargo bench` runs it once and prints one table.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../bench/catalog_gen.rs"]
mod catalog_gen;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use catalog_fold::{
    CatalogDigest, Chunked, DEFAULT_CHUNK, digest_in_chunks, stream_tools_document,
};
use jcs_digest::{Digest, Profile, StreamReader};

const PHASES: [&str; 4] = ["read", "stream", "fold", "free"];

fn main() {
    // `cargo bench` passes `--bench`; the other arguments are FILE and ROUNDS.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with("--"))
        .collect();
    let generated;
    let path = match args.first() {
        Some(path) => PathBuf::from(path),
        None => {
            generated = std::env::temp_dir().join(format!("phases-{}.json", std::process::id()));
            std::fs::write(&generated, catalog_gen::generate_catalog(10_000)).unwrap();
            generated.clone()
        }
    };
    let rounds: usize = args
        .get(1)
        .map_or(15, |rounds| rounds.parse().unwrap())
        .max(2);

    let mut times: Vec<[Duration; 4]> = Vec::with_capacity(rounds);
    let mut catalog = None;
    for _ in 0..rounds {
        let started = Instant::now();
        let bytes = std::fs::read(&path)
            .unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
        let read = started.elapsed();
        let tools = stream_tools_document(&bytes, Profile::Trace).unwrap();
        let streamed = started.elapsed();
        let digest = CatalogDigest::from_streamed(&tools, Profile::Trace).unwrap();
        let folded = started.elapsed();
        drop((tools, bytes));
        let freed = started.elapsed();
        catalog = Some(digest.catalog());
        times.push([read, streamed - read, folded - streamed, freed - folded]);
    }
    let bytes = std::fs::read(&path).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    let len = file.metadata().unwrap().len();
    let chunked = each_round(rounds, || {
        match digest_in_chunks(&file, len, Profile::Trace, DEFAULT_CHUNK).unwrap() {
            Chunked::Digest(digest) => assert_eq!(Some(digest.catalog()), catalog),
            Chunked::WholeDocument => panic!("{}: not read in chunks", path.display()),
        }
    });
    let skip = each_round(rounds, || {
        let mut reader = StreamReader::new(&bytes);
        reader.skip_value().unwrap();
        reader.finish().unwrap();
    });
    let ignored = each_round(rounds, || {
        serde_json::from_slice::<serde::de::IgnoredAny>(&bytes).unwrap();
    });
    let sha256 = each_round(rounds, || {
        std::hint::black_box(Digest::of(&bytes));
    });
    if args.is_empty() {
        std::fs::remove_file(&path).unwrap();
    }

    println!("{} ({rounds} rounds)", path.display());
    println!("| phase | first round ms | later rounds: median ms | min ms |");
    println!("|---|--:|--:|--:|");
    for (index, phase) in PHASES.iter().enumerate() {
        let column: Vec<Duration> = times.iter().map(|round| round[index]).collect();
        print_row(phase, &column);
    }
    println!();
    println!("| in the same process | first round ms | later rounds: median ms | min ms |");
    println!("|---|--:|--:|--:|");
    for (what, times) in [
        (
            "digest_in_chunks (the file, as toolgate digest FILE)",
            chunked,
        ),
        ("skip_value (strict, nothing written, one thread)", skip),
        ("serde_json IgnoredAny (not strict, nothing kept)", ignored),
        ("SHA-256 of the bytes", sha256),
    ] {
        print_row(what, &times);
    }
    println!("catalog {}", catalog.unwrap());
}

/// One table row: the first round, and the median and minimum of the later ones.
fn print_row(what: &str, times: &[Duration]) {
    let mut later = times[1..].to_vec();
    later.sort();
    println!(
        "| {what} | {:.2} | {:.2} | {:.2} |",
        millis(times[0]),
        millis(later[later.len() / 2]),
        millis(later[0]),
    );
}

/// How long each of `rounds` runs of `work` took.
fn each_round(rounds: usize, mut work: impl FnMut()) -> Vec<Duration> {
    (0..rounds)
        .map(|_| {
            let started = Instant::now();
            work();
            started.elapsed()
        })
        .collect()
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}
