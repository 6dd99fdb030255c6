#!/usr/bin/env bash
# System calls per call of the gateway's own threads (`tg-gateway`), counted by the kernel's
# syscall tracepoints while the load harness runs: counts, which the machine's load does not
# change, where CPU figures move by tens of percent between runs.
#
#   bash bench/syscalls.sh LOAD_BINARY SCENARIO CLIENTS CALLS [more load harness options]
#
# LOAD_BINARY: the load harness (`cargo bench -p toolgate --bench load --no-run` prints its
# path); it is run from gateway/. SCENARIO: max-age, per-call, … (one). The audit log goes to
# tmpfs (/dev/shm) unless the options name another --audit. Needs `perf` with tracepoint access
# (root, or kernel.perf_event_paranoid ≤ -1). Prints the harness's row, then per call: each
# system call counted, futex split into waits and wakes, and the threads the gateway's threads
# woke, by name (`sched:sched_wakeup`: a `tg-gateway` waking a `tg-gateway` is one worker
# waking the other); "calls" is the count of audit writes (pwrite64), one per call answered,
# warm-up included.
set -euo pipefail
if [ $# -lt 4 ]; then
  echo "usage: bash bench/syscalls.sh LOAD_BINARY SCENARIO CLIENTS CALLS [options]" >&2
  exit 2
fi
if [ ! -x "$1" ] || [ -d "$1" ]; then
  echo "bench/syscalls.sh: $1 is not an executable file (the load harness's binary)" >&2
  exit 2
fi
load=$(realpath "$1")
scenario=$2
clients=$3
calls=$4
shift 4
command -v perf >/dev/null || { echo "bench/syscalls.sh: perf is not installed (apt-get install linux-perf)" >&2; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
events=""
for call in futex write writev read readv recvfrom sendto sendmsg epoll_wait epoll_pwait pwrite64 fdatasync sched_yield; do
  events+="syscalls:sys_enter_$call,"
done
events+="sched:sched_wakeup,"
audit=(--audit /dev/shm/tg-syscalls)
for option in "$@"; do
  [ "$option" = --audit ] && audit=()
done
mkdir -p /dev/shm/tg-syscalls
cd "$here/gateway"
status=0
perf record -q -e "${events%,}" -o "$work/perf.data" -- "$load" --clients "$clients" \
  --calls "$calls" --warmup 0.5 --scenario "$scenario" "${audit[@]}" "$@" > "$work/run.txt" 2>&1 || status=$?
grep -E '^\| (gateway|scenario)' "$work/run.txt" || true
if [ "$status" -ne 0 ]; then
  echo "bench/syscalls.sh: the load harness (or perf) exited with status $status; its last lines:" >&2
  tail -n 20 "$work/run.txt" >&2
  exit 1
fi
perf script -i "$work/perf.data" -F comm,tid,event,trace 2>/dev/null | python3 -c '
import collections, re, sys
counts = collections.Counter()
woken = collections.Counter()
for line in sys.stdin:
    wakeup = re.match(r"\s*(\S+)\s+\d+\s+sched:sched_wakeup:.*\bcomm=(\S+)", line)
    if wakeup:
        if wakeup.group(1) == "tg-gateway":
            woken[wakeup.group(2)] += 1
        continue
    found = re.match(r"\s*(\S+)\s+\d+\s+syscalls:sys_enter_(\w+):(.*)", line)
    if not found or found.group(1) != "tg-gateway":
        continue
    call, arguments = found.group(2), found.group(3)
    if call == "futex":
        op = re.search(r"op: (0x[0-9a-f]+)", arguments)
        # FUTEX_WAIT 0, FUTEX_WAKE 1, FUTEX_WAIT_BITSET 9, FUTEX_WAKE_BITSET 10 (private flag masked)
        kind = int(op.group(1), 16) & 0x7F if op else -1
        call += {0: " wait", 9: " wait", 1: " wake", 10: " wake"}.get(kind, " op %d" % kind)
    counts[call] += 1
calls = counts["pwrite64"]
if calls == 0:
    sys.exit("bench/syscalls.sh: no audit write in the gateway threads: did the run fail?")
print("gateway threads, system calls per call (%d calls):" % calls)
for call, count in sorted(counts.items()):
    print("  %-12s %6.2f" % (call, count / calls))
print("threads woken by the gateway threads, per call (at least 0.01):")
for name, count in woken.most_common():
    if count / calls >= 0.01:
        print("  %-16s %6.2f" % (name, count / calls))
'
