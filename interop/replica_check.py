"""Two `toolgate serve` replicas behind HAProxy: one line per check, `pass …` or `FAIL …: why`.

The official Python `mcp` client (2026-07-28, stateless: no session ties a client to a replica)
sends `--calls` calls of `TOOL` through the load balancer, `--workers` at a time, each with its
own argument (`{"text": "replica-call-N"}`). After `--stop-after` answers it stops the first
replica with SIGTERM while calls are in flight. Then:

- every answered call returned exactly its own text;
- both replicas answered calls before the stop (the balancer spread them), and calls kept being
  answered after it (by the other replica);
- every answered call has an `allowed` entry in exactly one of the two audit logs, found by its
  argument digest (SHA-256 of the RFC 8785 form of the arguments, computed here with `rfc8785`),
  and no log holds an allowed entry for a call nobody sent;
- `toolgate audit verify LOG --catalog CATALOG` accepts each log.

Usage: python replica_check.py --balancer URL --toolgate BIN --catalog FILE --tool NAME \
    --audit LOG1 --audit LOG2 --stop-pid PID [--calls 60] [--workers 4] [--stop-after 20]
"""

import argparse
import asyncio
import hashlib
import json
import os
import signal
import subprocess
import sys

import rfc8785
from mcp import Client

import checklines
from checklines import report


def argument_digest(arguments: dict) -> str:
    return "sha256:" + hashlib.sha256(rfc8785.dumps(arguments)).hexdigest()


def allowed_digests(log: str, tool: str) -> list:
    digests = []
    with open(log) as file:
        for line in file:
            entry = json.loads(line)
            if entry.get("decision") == "allowed" and entry.get("tool") == tool:
                digests.append(entry.get("arguments_digest"))
    return digests


async def run_calls(args) -> tuple:
    answered, wrong, failed = {}, [], []
    queue = asyncio.Queue()
    for n in range(args.calls):
        queue.put_nowait(n)
    stopped = asyncio.Event()
    answered_before_stop = []

    async def call(text: str):
        # A client per call: a connection the stopping replica closes under a request fails
        # that call (and only that call) inside the client's own task group.
        async with Client(args.balancer, mode="2026-07-28") as client:
            return await asyncio.wait_for(client.call_tool(args.tool, {"text": text}), 60)

    async def worker() -> None:
        while True:
            try:
                n = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            text = f"replica-call-{n}"
            try:
                result = await call(text)
            except BaseException as error:  # a call lost with the stopped replica is allowed
                if isinstance(error, (KeyboardInterrupt, SystemExit)):
                    raise
                failed.append((n, f"{type(error).__name__}: {error}"))
                continue
            got = result.content[0].text if result.content else None
            if got != text:
                wrong.append((n, got))
                continue
            answered[n] = stopped.is_set()
            if len(answered) == args.stop_after and not stopped.is_set():
                answered_before_stop.extend(answered)
                os.kill(args.stop_pid, signal.SIGTERM)
                stopped.set()

    await asyncio.gather(*(worker() for _ in range(args.workers)))
    return answered, wrong, failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--balancer", required=True)
    parser.add_argument("--toolgate", required=True)
    parser.add_argument("--catalog", required=True)
    parser.add_argument("--tool", required=True)
    parser.add_argument("--audit", action="append", required=True)
    parser.add_argument("--stop-pid", type=int, required=True)
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--stop-after", type=int, default=20)
    args = parser.parse_args()
    if len(args.audit) != 2:
        parser.error("give --audit twice, one log per replica")

    answered, wrong, failed = asyncio.run(run_calls(args))
    after_stop = sum(1 for late in answered.values() if late)
    print(f"info {len(answered)} of {args.calls} calls answered ({after_stop} after the stop), "
          f"{len(failed)} lost with the stopped replica", flush=True)
    for n, why in failed[:5]:
        print(f"info   call {n}: {why}", flush=True)
    report(not wrong, "every answered call returned exactly its own text", f"{wrong[:5]}")
    # Only a call in flight on the stopping replica may be lost: one per worker at most.
    report(len(failed) <= args.workers,
           f"at most {args.workers} calls (those in flight at the stop) were lost",
           f"{len(failed)} lost")
    report(len(answered) >= args.stop_after and after_stop > 0,
           "calls were answered before and after one replica was stopped",
           f"{len(answered)} answered, {after_stop} after the stop")

    logs = {log: allowed_digests(log, args.tool) for log in args.audit}
    first, second = (logs[log] for log in args.audit)
    print(f"info allowed entries: {len(first)} in {os.path.basename(args.audit[0])}, "
          f"{len(second)} in {os.path.basename(args.audit[1])}", flush=True)
    report(len(first) > 0 and len(second) > 0, "both replicas decided calls (the balancer spread them)",
           f"allowed entries: {len(first)} and {len(second)}")
    sent = {argument_digest({"text": f"replica-call-{n}"}): n for n in range(args.calls)}
    recorded = {}
    for log, digests in logs.items():
        for digest in digests:
            recorded.setdefault(digest, []).append(log)
    missing = [n for n in answered if len(recorded.get(argument_digest({"text": f"replica-call-{n}"}), [])) != 1]
    report(not missing, f"each of the {len(answered)} answered calls is audited in exactly one of the two logs",
           f"calls not audited exactly once: {missing[:10]}")
    strangers = [digest for digest in recorded if digest not in sent]
    report(not strangers, "no allowed entry for a call that was not sent", f"{strangers[:5]}")

    for log in args.audit:
        run = subprocess.run([args.toolgate, "audit", "verify", log, "--catalog", args.catalog],
                             capture_output=True, text=True, timeout=60)
        report(run.returncode == 0, f"toolgate audit verify accepts {os.path.basename(log)}",
               f"exit {run.returncode}: {run.stdout}{run.stderr}".strip())
    sys.exit(checklines.exit_status())


if __name__ == "__main__":
    main()
