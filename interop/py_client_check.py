"""Talks to an MCP server with the official Python client (mcp 2.3.0) and prints one JSON line.

Connects in the given mode (`auto`: server/discover first, falling back to initialize;
`legacy`: initialize; `2026-07-28`: stateless), lists every tool page, calls `echo` with
{"text": "hi"}, and prints {"protocol_version", "tools", "echo", "is_error"}. The server's CA
comes from --ca (through SSL_CERT_FILE, which the client's HTTP stack reads).

Usage: python py_client_check.py --url https://127.0.0.1:PORT/mcp --ca ca.pem [--mode auto]
"""

import argparse
import asyncio
import json
import os


async def check(url: str, mode: str) -> dict:
    from mcp import Client

    async with Client(url, mode=mode) as client:
        names = []
        cursor = None
        for _ in range(100):
            page = await client.list_tools(cursor=cursor)
            names.extend(tool.name for tool in page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        result = await client.call_tool("echo", {"text": "hi"})
        text = result.content[0].text if result.content else None
        return {
            "protocol_version": client.protocol_version,
            "tools": names,
            "echo": text,
            "is_error": bool(result.is_error),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--ca", required=True, help="CA certificate of the server, PEM")
    parser.add_argument("--mode", default="auto")
    args = parser.parse_args()
    os.environ["SSL_CERT_FILE"] = args.ca
    print(json.dumps(asyncio.run(check(args.url, args.mode)), sort_keys=True))


if __name__ == "__main__":
    main()
