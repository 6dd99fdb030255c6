"""Checks toolgate's audit log after an interop run: one line per check, `pass …` or `FAIL …: why`.

- `toolgate audit verify AUDIT --catalog CATALOG --json` exits 0 and reports `verified: true`;
- the decisions it tallies are exactly the expected counts (`--expect allowed=9 …`), and the
  same tally made here from the raw JSON Lines agrees with it;
- each `definition_mismatch` entry names the expected (catalog) digest and a different observed
  one; each `identity_mismatch` entry records the impostor's key (`--impostor-spki`) as the
  observed identity and no observed definition (nothing was listed from it).

Usage: python audit_check.py --toolgate BIN --audit FILE --catalog FILE \
    --expect allowed=9 --expect definition_mismatch=1 … [--impostor-spki SHA256:…]
"""

import argparse
import collections
import json
import subprocess
import sys

import checklines
from checklines import report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--toolgate", required=True)
    parser.add_argument("--audit", required=True)
    parser.add_argument("--catalog", required=True)
    parser.add_argument("--expect", action="append", default=[], metavar="DECISION=COUNT")
    parser.add_argument("--impostor-spki")
    args = parser.parse_args()
    expected = {k: int(v) for k, v in (item.split("=", 1) for item in args.expect)}
    expected = {k: v for k, v in expected.items() if v}

    run = subprocess.run([args.toolgate, "audit", "verify", args.audit, "--catalog", args.catalog, "--json"],
                         capture_output=True, text=True, timeout=60)
    summary = {}
    try:
        summary = json.loads(run.stdout)
    except ValueError:
        pass
    report(run.returncode == 0 and summary.get("verified") is True,
           "toolgate audit verify AUDIT --catalog CATALOG exits 0 (chain intact, starts at the catalog measurement)",
           f"exit {run.returncode}: {run.stdout}{run.stderr}".strip())
    report(summary.get("decisions") == expected, f"audit verify tallies exactly {expected}",
           f"it tallies {summary.get('decisions')}")

    with open(args.catalog) as file:
        approved = {e["tool_name"]: e["definition_hash"] for e in json.load(file)["entries"]}
    with open(args.audit) as file:
        entries = [json.loads(line) for line in file if line.strip()]
    calls = [e for e in entries if e.get("event") == "tools/call"]
    tally = dict(collections.Counter(e.get("decision") for e in calls))
    report(tally == expected, f"the raw log's tools/call entries tally {expected}", f"they tally {tally}")

    for entry in calls:
        decision, tool = entry.get("decision"), entry.get("tool")
        if decision == "definition_mismatch":
            ok = (entry.get("expected_definition") == approved.get(tool)
                  and entry.get("observed_definition") not in (None, approved.get(tool)))
            report(ok, f"definition_mismatch entry seq {entry.get('seq')} ({tool}) records the approved "
                   f"and a different observed digest", json.dumps(entry))
        elif decision == "identity_mismatch":
            observed = (entry.get("identity") or {}).get("fingerprints") or []
            ok = (args.impostor_spki is None or args.impostor_spki in observed) \
                and entry.get("observed_definition") is None
            report(ok, f"identity_mismatch entry seq {entry.get('seq')} ({tool}) records the impostor's key "
                   f"{args.impostor_spki} and no observed definition", json.dumps(entry))
    sys.exit(checklines.exit_status())


if __name__ == "__main__":
    main()
