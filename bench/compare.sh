#!/usr/bin/env bash
# Whole-process comparison: `toolgate digest` against bench/py_digest.py (Python, rfc8785 0.1.4)
# on the deterministic generated catalogs of 10, 1,000 and 10,000 tools.
# Needs hyperfine (`apt-get install -y hyperfine`). Results go to BENCHMARKS.md by hand, with this command.
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/out
target="${CARGO_TARGET_DIR:-target}"
mkdir -p "$out"

cargo build --release -q -p toolgate
rustc -O --edition 2021 bench/gen_catalog.rs -o "$out/gen_catalog"
[ -x "$out/venv/bin/python" ] || python3 -m venv "$out/venv"
"$out/venv/bin/pip" install -q -r bench/requirements.txt

for n in 10 1000 10000; do
  "$out/gen_catalog" "$n" "$out/catalog-$n.json"
  # Both implementations must print the same object before their speed means anything.
  "$target/release/toolgate" digest --json "$out/catalog-$n.json" > "$out/rust-$n.json"
  "$out/venv/bin/python" bench/py_digest.py "$out/catalog-$n.json" > "$out/python-$n.json"
  cmp "$out/rust-$n.json" "$out/python-$n.json"
  echo "catalog of $n tools: $(wc -c < "$out/catalog-$n.json") bytes, outputs agree"
done

for n in 10 1000 10000; do
  hyperfine --warmup 2 --min-runs 10 --export-markdown "$out/compare-$n.md" \
    -n "toolgate digest ($n tools)" ""$target/release/toolgate" digest --json $out/catalog-$n.json" \
    -n "python rfc8785 ($n tools)" "$out/venv/bin/python bench/py_digest.py $out/catalog-$n.json"
done
cat "$out"/compare-*.md
