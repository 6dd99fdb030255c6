//! Writes the deterministic benchmark catalog of N tools to a file:
//! `rustc -O --edition 2021 bench/gen_catalog.rs -o /tmp/gen_catalog && /tmp/gen_catalog N OUT`.

#[path = "catalog_gen.rs"]
mod catalog_gen;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(n), Some(out)) = (args.get(1).and_then(|n| n.parse().ok()), args.get(2)) else {
        eprintln!("usage: gen_catalog N OUT");
        std::process::exit(2);
    };
    if let Err(e) = std::fs::write(out, catalog_gen::generate_catalog(n)) {
        eprintln!("gen_catalog: cannot write {out}: {e}");
        std::process::exit(2);
    }
}
