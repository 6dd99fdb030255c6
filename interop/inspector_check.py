"""inspector-cli 1.0.3 (TypeScript SDK, session generation 2025-11-25) against `toolgate serve`.

One line per check, `pass <what>` or `FAIL <what>: <why>`; exit 1 when any check failed:
`--method tools/list` names exactly the catalog's tools, and `--method tools/call` of `fast.echo`
returns exactly the upstream's `echo` result. inspector-cli resolves `../package.json` from its
working directory, so it runs from `node_modules` (a subfolder of the folder holding
`package.json`); it prints a deprecation banner before its JSON.

Usage: python inspector_check.py --gateway URL --node-modules DIR --catalog FILE
"""

import argparse
import json
import os
import subprocess
import sys

import checklines
from checklines import report


def inspector(node_modules: str, gateway: str, *arguments: str) -> dict:
    command = ["node", os.path.join(node_modules, ".bin", "mcp-inspector-cli"),
               "--cli", gateway, "--transport", "http", *arguments]
    run = subprocess.run(command, cwd=node_modules, capture_output=True, text=True, timeout=60)
    if run.returncode != 0:
        raise RuntimeError(f"exit {run.returncode}: {run.stdout}{run.stderr}".strip())
    start = run.stdout.find("{")
    if start < 0:
        raise RuntimeError(f"no JSON in its output: {run.stdout}{run.stderr}".strip())
    return json.loads(run.stdout[start:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gateway", required=True)
    parser.add_argument("--node-modules", required=True)
    parser.add_argument("--catalog", required=True)
    parser.add_argument("--tool", default="fast.echo",
                        help="the catalog tool to call (an echo of FastMCP's; default fast.echo)")
    args = parser.parse_args()
    with open(args.catalog) as file:
        names = sorted(entry["tool_name"] for entry in json.load(file)["entries"])

    what = f"[inspector-cli] tools/list names are the catalog's {names}"
    try:
        listed = inspector(args.node_modules, args.gateway, "--method", "tools/list")
        got = sorted(tool.get("name") for tool in listed.get("tools", []))
        report(got == names, what, f"got {got}")
    except Exception as error:
        report(False, what, f"{type(error).__name__}: {error}")

    expected = {
        "content": [{"type": "text", "text": "hello from inspector"}],
        "structuredContent": {"result": "hello from inspector"},
        "isError": False,
    }
    what = f"[inspector-cli] tools/call {args.tool} returns exactly {expected}"
    try:
        called = inspector(args.node_modules, args.gateway, "--method", "tools/call",
                           "--tool-name", args.tool, "--tool-arg", "text=hello from inspector")
        got = {key: called.get(key) for key in expected}
        report(got == expected, what, f"got {called}")
    except Exception as error:
        report(False, what, f"{type(error).__name__}: {error}")
    sys.exit(checklines.exit_status())


if __name__ == "__main__":
    main()
