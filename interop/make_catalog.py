"""Builds a toolgate catalog from what live upstreams serve (the approval step, scripted).

For each `--server LABEL URL TRUST CA`: the key to pin is the `spki_sha256` that
`toolgate identity URL --ca CA --json` reports, and the tools come from the upstream's live
`tools/list` (2026-07-28, stateless, every page), fetched over TLS verified against CA (for a
self-signed `pin` upstream, CA is its own certificate). For each `--tool LABEL TOOL_NAME
UPSTREAM_NAME`: one entry whose approved definition is the live tool's hashed members (name,
title, description, inputSchema, outputSchema, annotations; `_meta` is never hashed, so a
catalog refuses it) and whose `definition_hash` is the per-tool digest `toolgate digest --json`
computes for exactly that definition. `toolgate catalog check` must then accept the file.

For each `--local LABEL CWD ARGV_JSON`: a local (stdio) server started with that argv in CWD
(with only PATH and HOME inherited, as the catalog says); its `entrypoint_digests` are what
`toolgate identity --command --json -- ARGV` reports (run in CWD), plus every
`--local-pin LABEL PATH`; its tools come from its live `tools/list` over stdio
(`server/discover` first, `initialize` when refused, as toolgate does).

Usage: python make_catalog.py --toolgate target/debug/toolgate --out catalog.json \
    --server fast https://127.0.0.1:PORT/mcp webpki ca.pem --tool fast fast.echo echo
"""

import argparse
import json
import os
import queue
import ssl
import subprocess
import sys
import tempfile
import threading
import urllib.request

HASHED_MEMBERS = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")
PROTOCOL = "2026-07-28"


def rpc(url: str, ca: str, method: str, params: dict) -> dict:
    """One stateless 2026-07-28 request; FastMCP answers it with JSON."""
    params = dict(params)
    params["_meta"] = {
        "io.modelcontextprotocol/protocolVersion": PROTOCOL,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    request = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": PROTOCOL,
            "mcp-method": method,
        },
    )
    context = ssl.create_default_context(cafile=ca)
    with urllib.request.urlopen(request, context=context, timeout=20) as response:
        answer = json.loads(response.read())
    if "result" not in answer:
        raise SystemExit(f"make_catalog: {url} answered {method} with {answer}")
    return answer["result"]


def live_tools(url: str, ca: str) -> dict:
    tools, cursor = {}, None
    for _ in range(100):
        page = rpc(url, ca, "tools/list", {"cursor": cursor} if cursor else {})
        for tool in page["tools"]:
            tools[tool["name"]] = {k: tool[k] for k in HASHED_MEMBERS if tool.get(k) is not None}
        cursor = page.get("nextCursor")
        if not cursor:
            return tools
    raise SystemExit(f"make_catalog: {url} tools/list never ended")


def local_tools(argv: list, cwd: str) -> dict:
    """Every tool a stdio server lists, spoken to as toolgate speaks to it."""
    env = {name: os.environ[name] for name in ("PATH", "HOME") if name in os.environ}
    child = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in child.stdout], daemon=True).start()
    next_id = [0]

    def request(method: str, params: dict):
        next_id[0] += 1
        child.stdin.write(json.dumps({"jsonrpc": "2.0", "id": next_id[0], "method": method,
                                      "params": params}) + "\n")
        child.stdin.flush()
        while True:
            message = json.loads(lines.get(timeout=30))
            if message.get("id") == next_id[0]:
                return message

    meta = {"io.modelcontextprotocol/protocolVersion": PROTOCOL,
            "io.modelcontextprotocol/clientCapabilities": {}}
    try:
        stateless = "result" in request("server/discover", {"_meta": meta})
        if not stateless:
            request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                   "clientInfo": {"name": "make_catalog", "version": "1"}})
            child.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
            child.stdin.flush()
        tools, cursor = {}, None
        for _ in range(100):
            params = {"cursor": cursor} if cursor else {}
            if stateless:
                params["_meta"] = meta
            page = request("tools/list", params)["result"]
            for tool in page["tools"]:
                tools[tool["name"]] = {k: tool[k] for k in HASHED_MEMBERS if tool.get(k) is not None}
            cursor = page.get("nextCursor")
            if not cursor:
                return tools
        raise SystemExit(f"make_catalog: {argv} tools/list never ended")
    finally:
        child.stdin.close()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()


def toolgate(binary: str, *args: str) -> str:
    return subprocess.run([binary, *args], check=True, capture_output=True, text=True, timeout=30).stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--toolgate", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--server", nargs=4, action="append", default=[],
                        metavar=("LABEL", "URL", "TRUST", "CA"))
    parser.add_argument("--local", nargs=3, action="append", default=[],
                        metavar=("LABEL", "CWD", "ARGV_JSON"))
    parser.add_argument("--local-pin", nargs=2, action="append", default=[],
                        metavar=("LABEL", "PATH"))
    parser.add_argument("--tool", nargs=3, action="append", required=True,
                        metavar=("LABEL", "TOOL_NAME", "UPSTREAM_NAME"))
    args = parser.parse_args()

    servers = {}
    for label, url, trust, ca in args.server:
        identity = json.loads(toolgate(args.toolgate, "identity", url, "--ca", ca, "--json"))
        servers[label] = {
            "binding": {
                "display_name": f"FastMCP interop upstream ({label})",
                "url": url,
                "tls_fingerprint": identity["spki_sha256"],
                "rotation_mode": "key-pinned",
                "tls_trust": trust,
            },
            "tools": live_tools(url, ca),
        }

    for label, cwd, argv_json in args.local:
        argv = json.loads(argv_json)
        identity = json.loads(subprocess.run(
            [args.toolgate, "identity", "--command", "--json", "--", *argv], cwd=cwd, check=True,
            capture_output=True, text=True, timeout=60).stdout)
        digests = dict(identity["entrypoint_digests"])
        for pin_label, path in args.local_pin:
            if pin_label == label:
                digest = json.loads(subprocess.run(
                    [args.toolgate, "identity", "--command", "--json", "--", path], cwd=cwd,
                    check=True, capture_output=True, text=True, timeout=60).stdout)
                digests.update(digest["entrypoint_digests"])
        servers[label] = {
            "binding": {
                "display_name": f"local interop server ({label})",
                "command": argv,
                "cwd": cwd,
                "inherit_env": ["PATH", "HOME"],
                "entrypoint_digests": digests,
            },
            "tools": local_tools(argv, cwd),
        }

    entries = []
    for label, tool_name, upstream_name in args.tool:
        definition = servers[label]["tools"].get(upstream_name)
        if definition is None:
            raise SystemExit(f"make_catalog: {label} does not serve {upstream_name!r}")
        with tempfile.NamedTemporaryFile("w", suffix=".json") as document:
            json.dump([definition], document)
            document.flush()
            digests = json.loads(toolgate(args.toolgate, "digest", "--json", document.name))
        key = toolgate(args.toolgate, "key", upstream_name).strip()
        entries.append({
            "tool_name": tool_name,
            "upstream_name": upstream_name,
            "server": servers[label]["binding"],
            "approved_definition": definition,
            "definition_hash": digests["tools"][key],
            "added_at": "2026-11-30T00:00:00Z",
            "approved_by": "interop/run.sh",
        })

    with open(args.out, "w") as out:
        json.dump({"catalog_version": "interop", "entries": entries}, out, indent=2)
        out.write("\n")
    print(f"make_catalog: {len(entries)} entries, {len(servers)} servers -> {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
