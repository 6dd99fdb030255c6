#!/usr/bin/env bash
# Two or more builds of `toolgate` timed one after the other on one catalog, the order reversed
# every round, so that a change in the machine's speed falls on all of them alike:
#   bench/alternate_digest.sh ROUNDS FILE BIN...
# Each run is `BIN digest --json FILE` as a whole process (wall time, output discarded); the
# summary gives per binary the median, minimum and quartiles in ms of the wall time, then the
# median and quartiles of the CPU time (user + system, both threads). For a catalog, see
# bench/gen_catalog.rs (bench/compare.sh builds and uses it).
set -euo pipefail
if (( $# < 3 )); then
  echo "usage: $0 ROUNDS FILE BIN..." >&2
  exit 2
fi
exec python3 - "$@" <<'PY'
import resource, statistics, subprocess, sys, time

rounds, path, bins = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
wall = {b: [] for b in bins}
cpu = {b: [] for b in bins}
for r in range(rounds):
    for b in bins if r % 2 else bins[::-1]:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([b, "digest", "--json", path], stdout=subprocess.DEVNULL, check=True)
        wall[b].append((time.perf_counter() - start) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        used = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        cpu[b].append(used * 1000)
for b in bins:
    times, used = sorted(wall[b]), sorted(cpu[b])
    n = len(times)
    print(f"{b}: median {statistics.median(times):.1f} ms  min {times[0]:.1f}  "
          f"p25 {times[n // 4]:.1f}  p75 {times[3 * n // 4]:.1f}  n={n}  "
          f"CPU median {statistics.median(used):.1f} ms  p25 {used[n // 4]:.1f}  "
          f"p75 {used[3 * n // 4]:.1f}")
PY
