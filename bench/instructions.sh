#!/usr/bin/env bash
# Instructions, not time: each build of `toolgate` given runs `digest --json FILE` once under
# valgrind's callgrind, and the count of instructions it executed is printed, in all and
# outside SHA-256's block function (under valgrind sha2 runs its portable code, not the CPU's
# SHA extensions, so that part is large and the same in every build). The count does not move
# with the load of the machine, so two builds that differ by a few percent can be told apart
# where their wall times cannot (bench/alternate_digest.sh).
#   bench/instructions.sh FILE BIN...
# Needs valgrind (`apt-get install -y valgrind`). Results go to BENCHMARKS.md by hand.
set -euo pipefail
if [ "$#" -lt 2 ]; then
  echo "usage: bench/instructions.sh FILE BIN..." >&2
  exit 2
fi
file="$1"
shift
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
printf '| build | instructions | outside SHA-256 |\n|---|--:|--:|\n'
for bin in "$@"; do
  valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.out" \
    "$bin" digest --json "$file" > /dev/null 2> "$out/valgrind.err"
  total="$(sed -n 's/.*I *refs: *//p' "$out/valgrind.err" | tr -d ,)"
  sha="$(callgrind_annotate --inclusive=no --auto=no "$out/callgrind.out" \
    | awk '/compress256/ { gsub(",", "", $1); sum += $1 } END { print sum + 0 }')"
  printf '| %s | %s | %s |\n' "$bin" "$total" "$((total - sha))"
done
