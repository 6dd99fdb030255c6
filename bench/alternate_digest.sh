#!/usr/bin/env bash
# Two or more builds of `toolgate` timed one after the other on one catalog, the order reversed
# every round, so that a change in the machine's speed falls on all of them alike:
#   bench/alternate_digest.sh ROUNDS FILE BIN...
# Each run is `BIN digest --json FILE` as a whole process (wall time, output discarded); the
# summary gives per binary the median, minimum and quartiles in ms. For a catalog, see
# bench/gen_catalog.rs (bench/compare.sh builds and uses it).
set -euo pipefail
if (( $# < 3 )); then
  echo "usage: $0 ROUNDS FILE BIN..." >&2
  exit 2
fi
rounds=$1
file=$2
shift 2
for ((r = 0; r < rounds; r++)); do
  if (( r % 2 )); then
    order=("$@")
  else
    order=()
    for ((i = $#; i >= 1; i--)); do order+=("${!i}"); done
  fi
  for bin in "${order[@]}"; do
    start=$(date +%s%N)
    "$bin" digest --json "$file" > /dev/null
    end=$(date +%s%N)
    echo "$bin $(( (end - start) / 1000 ))"
  done
done | python3 -c '
import statistics, sys
runs = {}
for line in sys.stdin:
    name, micros = line.rsplit(maxsplit=1)
    runs.setdefault(name, []).append(int(micros) / 1000)
for name, times in runs.items():
    times.sort()
    n = len(times)
    print(f"{name}: median {statistics.median(times):.1f} ms  min {times[0]:.1f}  "
          f"p25 {times[n // 4]:.1f}  p75 {times[3 * n // 4]:.1f}  n={n}")
'
