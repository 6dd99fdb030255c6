"""The MCP conformance suite (@modelcontextprotocol/conformance 0.1.13) against `toolgate serve`.

Runs `conformance server --url URL --suite all -o DIR` once (every server scenario, the pending
ones included) and reads each scenario's `checks.json`. A tools-only gateway can pass only the
scenarios in APPLICABLE; each of them is one line, `pass conformance NAME (k checks)` or
`FAIL conformance NAME: why`. Every other scenario is printed as an `info` line (not counted)
with its result and the first failure message, which says why it does not apply: a method the
gateway does not offer (-32601: logging, completion, resources, prompts) or a fixture tool of
the suite's own reference server (`test_simple_text`, …) that no catalog approves
(-32602 tool_not_in_catalog). With `--table FILE` the per-scenario results are also written as
a Markdown table (the one in README.md).

Usage: python conformance_check.py --url http://127.0.0.1:PORT/mcp --interop-dir DIR --out DIR
"""

import argparse
import glob
import json
import os
import re
import subprocess
import sys

import checklines
from checklines import report

# The scenarios that apply to a tools-only server whose tools are the catalog's, not the suite's
# fixtures (interop/README.md has the whole table and why the others do not apply).
APPLICABLE = (
    "server-initialize",
    "ping",
    "tools-list",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
)
DIRECTORY = re.compile(r"^server-(?P<name>.+)-\d{4}-\d\d-\d\dT[\d-]+Z$")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--interop-dir", required=True, help="the folder holding node_modules")
    parser.add_argument("--out", required=True, help="where the suite writes its results")
    parser.add_argument("--table", help="also write the per-scenario results as Markdown here")
    args = parser.parse_args()

    args.out = os.path.abspath(args.out)
    binary = os.path.join(args.interop_dir, "node_modules", ".bin", "conformance")
    run = subprocess.run([binary, "server", "--url", args.url, "--suite", "all", "-o", args.out],
                         cwd=args.interop_dir, capture_output=True, text=True, timeout=240)
    results = {}
    for path in glob.glob(os.path.join(args.out, "*", "checks.json")):
        match = DIRECTORY.match(os.path.basename(os.path.dirname(path)))
        if match:
            with open(path) as file:
                results[match["name"]] = json.load(file)
    if not results:
        report(False, "conformance server --suite all", f"no results (exit {run.returncode}): "
               f"{(run.stdout + run.stderr)[-2000:]}")
        sys.exit(1)

    rows = []
    for name in sorted(results, key=lambda n: (n not in APPLICABLE, n)):
        checks = results[name]
        passed = [c for c in checks if c.get("status") == "SUCCESS"]
        failed = [c for c in checks if c.get("status") in ("FAILURE", "ERROR")]
        why = failed[0].get("errorMessage", "") if failed else ""
        verdict = "fail" if failed else ("pass" if passed else "no pass/fail check")
        rows.append((name, name in APPLICABLE, verdict, len(passed), len(failed), why))
        if name in APPLICABLE:
            report(bool(passed) and not failed, f"conformance {name} ({len(passed)} checks)",
                   "; ".join(f"{c.get('id')}: {c.get('errorMessage')}" for c in failed) or "no check passed")
        else:
            print(f"info conformance {name}: {verdict} ({len(passed)} passed, {len(failed)} failed)"
                  + (f": {why[:160]}" if why else ""), flush=True)
    for name in APPLICABLE:
        if name not in results:
            report(False, f"conformance {name}", "the suite did not run it")

    if args.table:
        with open(args.table, "w") as table:
            table.write("| scenario | applies | result | checks passed / failed | first failure |\n")
            table.write("|---|---|---|---|---|\n")
            for name, applies, verdict, p, f, why in rows:
                why = why.replace("|", "\\|")
                table.write(f"| `{name}` | {'yes' if applies else 'no'} | {verdict} | {p} / {f} | {why} |\n")
    sys.exit(checklines.exit_status())


if __name__ == "__main__":
    main()
