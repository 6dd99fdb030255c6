#!/usr/bin/env python3
"""A straightforward Python implementation of the tool-catalog digest (seed 000, sections 2-5).

The comparison point for `toolgate digest`: the same derivation, written the obvious way on the
`rfc8785` package (pinned in bench/requirements.txt). Prints the same JSON object as
`toolgate digest --json`, so bench/compare.sh also checks that the two agree.

Usage: python3 bench/py_digest.py FILE
"""
import hashlib
import json
import sys

import rfc8785

MEMBERS = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")
LABEL = "trace.mcp-tool-definition.v1"


def tool_digest(tool):
    restricted = {m: tool[m] for m in MEMBERS if tool.get(m) is not None}
    wrapped = {"profile": LABEL, "tool": restricted}
    return "sha256:" + hashlib.sha256(rfc8785.dumps(wrapped)).hexdigest()


def tool_key(name):
    if not name:
        return "tool:unnamed"
    body = []
    for ch in name:
        if 0x21 <= ord(ch) <= 0x7E and ch not in "%=":
            body.append(ch)
        else:
            body.extend("%%%02X" % b for b in ch.encode("utf-8"))
    body = "".join(body)
    if len(body) > 128:
        body = body[:96] + "~" + hashlib.sha256(name.encode("utf-8")).hexdigest()[:16]
    return "tool:" + body


def fold(per_key):
    entries = {}
    for key, digests in per_key.items():
        if len(digests) == 1:
            entries[key] = digests[0]
        else:
            text = LABEL + ".duplicates\n" + "\n".join(sorted(digests))
            entries[key] = "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
    keys = sorted(entries)
    lines = [k + "=" + entries[k] for k in keys[:500]]
    if len(keys) > 500:
        rest = "\n".join(k + "=" + entries[k] for k in keys[500:])
        text = LABEL + ".overflow\n" + rest
        # "tools:overflow" sorts after every "tool:" key (':' < 's'), so it is the last line.
        lines.append("tools:overflow=sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest())
    catalog = "sha256:" + hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()
    return entries, catalog


def main():
    with open(sys.argv[1], "rb") as f:
        doc = json.loads(f.read())
    if isinstance(doc, dict):
        doc = doc.get("result", doc)["tools"]
    per_key = {}
    for tool in doc:
        per_key.setdefault(tool_key(tool.get("name")), []).append(tool_digest(tool))
    entries, catalog = fold(per_key)
    json.dump({"label": LABEL, "tools": dict(sorted(entries.items())), "catalog": catalog}, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
