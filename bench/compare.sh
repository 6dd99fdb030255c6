#!/usr/bin/env bash
# Whole-process comparison on the deterministic generated catalogs of 10, 1,000 and 10,000 tools:
#   toolgate digest --json        (this repository, the streaming path)
#   bench/py_digest.py            (Python, rfc8785 pinned in bench/requirements.txt)
#   bench/node_digest.js          (Node, JSON.parse + a small JCS serializer, no dependencies)
#   sha256sum FILE                (the floor: read the file once and hash it)
# All four must print the same thing (the first three the same JSON object) before their speed
# means anything. The runs are interleaved: ROUNDS rounds (default 5), each running every
# catalog size and every command RUNS times (default 5), the command order reversed every other
# round, so that load from other processes falls on all of them alike. bench/summarize.py then
# reports the median over all runs, and the peak memory (VmHWM) of toolgate on 10,000 tools.
# BASELINE=PATH adds a fifth command, another build of `toolgate` (e.g. main's, built into
# another target directory), checked to print the same and timed in the same rounds.
# Needs hyperfine (`apt-get install -y hyperfine`) and node. Results go to BENCHMARKS.md by
# hand, with this command.
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/out
target="${CARGO_TARGET_DIR:-target}"
rounds="${ROUNDS:-5}"
runs="${RUNS:-5}"
baseline="${BASELINE:-}"
mkdir -p "$out"

cargo build --release -q -p toolgate
toolgate="$target/release/toolgate"
rustc -O --edition 2021 bench/gen_catalog.rs -o "$out/gen_catalog"
[ -x "$out/venv/bin/python" ] || python3 -m venv "$out/venv"
"$out/venv/bin/pip" install -q -r bench/requirements.txt

for n in 10 1000 10000; do
  "$out/gen_catalog" "$n" "$out/catalog-$n.json"
  "$toolgate" digest --json "$out/catalog-$n.json" > "$out/rust-$n.json"
  "$out/venv/bin/python" bench/py_digest.py "$out/catalog-$n.json" > "$out/python-$n.json"
  node bench/node_digest.js "$out/catalog-$n.json" > "$out/node-$n.json"
  cmp "$out/rust-$n.json" "$out/python-$n.json"
  cmp "$out/rust-$n.json" "$out/node-$n.json"
  if [ -n "$baseline" ]; then
    "$baseline" digest --json "$out/catalog-$n.json" | cmp "$out/rust-$n.json" -
  fi
  echo "catalog of $n tools: $(wc -c < "$out/catalog-$n.json") bytes, outputs agree"
done

rm -f "$out"/round-*.json
for round in $(seq 1 "$rounds"); do
  for n in 10 1000 10000; do
    file="$out/catalog-$n.json"
    commands=(
      -n "toolgate" "$toolgate digest --json $file"
      -n "python" "$out/venv/bin/python bench/py_digest.py $file"
      -n "node" "node bench/node_digest.js $file"
      -n "sha256sum" "sha256sum $file"
    )
    if [ -n "$baseline" ]; then
      commands+=(-n "baseline" "$baseline digest --json $file")
    fi
    if (( round % 2 == 0 )); then
      # Each command is three words (-n NAME COMMAND); reverse their order.
      reversed=()
      for (( i = ${#commands[@]} - 3; i >= 0; i -= 3 )); do
        reversed+=("${commands[@]:i:3}")
      done
      commands=("${reversed[@]}")
    fi
    hyperfine -N --style none --warmup 1 --runs "$runs" \
      --export-json "$out/round-$round-$n.json" "${commands[@]}" > /dev/null
  done
done

/usr/bin/time -v "$toolgate" digest --json "$out/catalog-10000.json" > /dev/null 2> "$out/time-v.txt"
python3 bench/summarize.py "$out" "$rounds" "$(wc -c < "$out/catalog-10000.json")" \
  "$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$out/time-v.txt")" | tee "$out/compare.md"
