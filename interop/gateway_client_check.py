"""The official Python `mcp` client (2.3.0) against `toolgate serve`: one line per check.

Every check prints exactly one line, `pass <what>` or `FAIL <what>: <why>`; the exit status is 1
when any line is a FAIL. Modes are the client's: `legacy` (initialize, session generation,
negotiates 2025-11-25) and `2026-07-28` (server/discover, stateless).

Subcommands:

- `basic --gateway URL --upstream URL --ca CA --catalog FILE --mode MODE`: the negotiated
  protocol version; `tools/list` (every page) names exactly the catalog's tool names and serves
  their approved definitions under those names; `fast.echo` returns exactly the expected result;
  `fast.add` through the gateway returns the same result, member for member, as `add` called
  directly on the upstream (in 2026-07-28, the generation toolgate speaks to FastMCP); an unknown tool is a JSON-RPC error -32602 with
  `data.reason == "tool_not_in_catalog"`.
- `call --gateway URL --mode MODE --tool NAME --args JSON --label TEXT` and either
  `--expect-text TEXT` (allowed: the first content item's text) or `--expect-reason REASON
  --expect-code CODE` (denied: the JSON-RPC error's code and `data.reason`).
"""

import argparse
import asyncio
import json
import os
import sys

from mcp import Client
from mcp.shared.exceptions import MCPError

import checklines
from checklines import report

EXPECTED_VERSION = {"legacy": "2025-11-25", "2026-07-28": "2026-07-28"}
HASHED_MEMBERS = ("title", "description", "inputSchema", "outputSchema", "annotations")


def dump(result) -> dict:
    return result.model_dump(by_alias=True, exclude_none=True, mode="json")


async def list_all(client: Client) -> list:
    tools, cursor = [], None
    for _ in range(100):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            return tools
    raise RuntimeError("tools/list never ended (100 pages)")


async def basic(args) -> None:
    mode = args.mode
    with open(args.catalog) as file:
        catalog = json.load(file)["entries"]
    approved = {entry["tool_name"]: entry["approved_definition"] for entry in catalog}

    async with Client(args.gateway, mode=mode) as client:
        want = EXPECTED_VERSION[mode]
        report(client.protocol_version == want, f"[{mode}] negotiated protocol version {want}",
               f"got {client.protocol_version!r}")

        tools = await list_all(client)
        names = [tool.name for tool in tools]
        report(sorted(names) == sorted(approved),
               f"[{mode}] tools/list names are the catalog's {sorted(approved)}", f"got {names}")
        wrong = []
        for tool in tools:
            served = tool.model_dump(by_alias=True, exclude_none=True, mode="json")
            expected = approved.get(tool.name, {})
            for member in HASHED_MEMBERS:
                if served.get(member) != expected.get(member):
                    wrong.append(f"{tool.name}.{member}: served {served.get(member)!r}, "
                                 f"approved {expected.get(member)!r}")
        report(not wrong, f"[{mode}] tools/list serves the approved definitions", "; ".join(wrong))

        echoed = dump(await client.call_tool("fast.echo", {"text": "hello through toolgate"}))
        expected_echo = {
            "content": [{"type": "text", "text": "hello through toolgate"}],
            "structuredContent": {"result": "hello through toolgate"},
            "isError": False,
        }
        got = {key: echoed.get(key) for key in expected_echo}
        report(got == expected_echo, f"[{mode}] fast.echo -> echo returns exactly {expected_echo}",
               f"got {echoed}")

        through = dump(await client.call_tool("fast.add", {"a": 2, "b": 3}))

        try:
            result = await client.call_tool("no.such.tool", {})
            report(False, f"[{mode}] unknown tool denied", f"it was answered: {dump(result)}")
        except MCPError as error:
            data = error.error.data if isinstance(error.error.data, dict) else {}
            report(error.error.code == -32602 and data.get("reason") == "tool_not_in_catalog",
                   f"[{mode}] unknown tool -> -32602 tool_not_in_catalog",
                   f"got code {error.error.code}, data {error.error.data!r}")

    # The same call made directly on the upstream, in the generation toolgate itself speaks to
    # FastMCP (2026-07-28, whatever the client speaks): the gateway must return that result
    # unchanged, `_meta` included (FastMCP puts its serverInfo there in 2026-07-28).
    os.environ["SSL_CERT_FILE"] = args.ca
    async with Client(args.upstream, mode="2026-07-28") as direct:
        straight = dump(await direct.call_tool("add", {"a": 2, "b": 3}))
    report(through == straight and through.get("structuredContent") == {"result": 5.0},
           f"[{mode}] fast.add -> add returns the upstream's own result unchanged ({straight})",
           f"through the gateway {through}, direct {straight}")


async def call(args) -> None:
    what = f"[{args.mode}] {args.label}"
    async with Client(args.gateway, mode=args.mode) as client:
        try:
            result = dump(await client.call_tool(args.tool, json.loads(args.args)))
        except MCPError as error:
            data = error.error.data if isinstance(error.error.data, dict) else {}
            if args.expect_reason is None:
                report(False, what, f"denied: {error.error.code} {error.error.message}")
            else:
                report(error.error.code == args.expect_code and data.get("reason") == args.expect_reason,
                       what, f"got code {error.error.code}, data {error.error.data!r}, "
                       f"message {error.error.message!r}")
            return
    if args.expect_reason is not None:
        report(False, what, f"it was answered: {result}")
        return
    content = result.get("content") or [{}]
    report(content[0].get("text") == args.expect_text and not result.get("isError"), what,
           f"got {result}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    b = commands.add_parser("basic")
    b.add_argument("--gateway", required=True)
    b.add_argument("--upstream", required=True)
    b.add_argument("--ca", required=True)
    b.add_argument("--catalog", required=True)
    b.add_argument("--mode", required=True, choices=sorted(EXPECTED_VERSION))
    c = commands.add_parser("call")
    c.add_argument("--gateway", required=True)
    c.add_argument("--mode", required=True, choices=sorted(EXPECTED_VERSION))
    c.add_argument("--tool", required=True)
    c.add_argument("--args", default="{}")
    c.add_argument("--label", required=True)
    c.add_argument("--expect-text")
    c.add_argument("--expect-reason")
    c.add_argument("--expect-code", type=int)
    args = parser.parse_args()
    try:
        asyncio.run(basic(args) if args.command == "basic" else call(args))
    except Exception as error:  # a crash is one FAIL line that says what happened
        report(False, f"{args.command} [{args.mode}]", f"{type(error).__name__}: {error}")
    sys.exit(checklines.exit_status())


if __name__ == "__main__":
    main()
