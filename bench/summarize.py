#!/usr/bin/env python3
"""Summarizes bench/compare.sh: the median, minimum and spread of every command over all rounds,
the ratios to toolgate, and toolgate's peak memory on 10,000 tools.

Usage: python3 bench/summarize.py OUT_DIR ROUNDS INPUT_BYTES VMHWM_KB
"""
import json
import statistics
import sys

out, rounds, input_bytes, hwm_kb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
names = ["toolgate", "python", "node", "sha256sum"]
with open(f"{out}/round-1-10.json") as f:
    # compare.sh with BASELINE= times a fifth command.
    if any(result["command"] == "baseline" for result in json.load(f)["results"]):
        names.append("baseline")
print("| tools | command | median ms | min ms | max ms | runs | median ÷ toolgate | CPU ms (user+sys, mean) |")
print("|---:|---|---:|---:|---:|---:|---:|---:|")
for n in (10, 1000, 10000):
    times = {name: [] for name in names}
    cpu = {name: [] for name in names}
    for round in range(1, rounds + 1):
        with open(f"{out}/round-{round}-{n}.json") as f:
            for result in json.load(f)["results"]:
                times[result["command"]].extend(result["times"])
                cpu[result["command"]].append(result["user"] + result["system"])
    ours = statistics.median(times["toolgate"])
    for name in names:
        median = statistics.median(times[name])
        print(
            f"| {n:,} | {name} | {median * 1e3:.1f} | {min(times[name]) * 1e3:.1f} "
            f"| {max(times[name]) * 1e3:.1f} | {len(times[name])} | {median / ours:.2f} "
            f"| {statistics.mean(cpu[name]) * 1e3:.1f} |"
        )
print()
print(
    f"toolgate digest on 10,000 tools: peak resident memory (VmHWM) {hwm_kb:,} KiB for an input "
    f"of {input_bytes:,} bytes ({hwm_kb * 1024 / input_bytes:.2f}× the input)"
)
