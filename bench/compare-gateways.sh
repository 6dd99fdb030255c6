#!/usr/bin/env bash
# Installs the other gateways the load harness compares the gateway with (issue 16), pinned in
# bench/requirements-compare.txt, into a venv (default bench/out/compare-venv, the place the
# harness looks), then, with arguments, runs the harness with `--compare` and those arguments:
#
#   bash bench/compare-gateways.sh                     # install (or check) the peers only
#   bash bench/compare-gateways.sh --clients 1,16 --scenario direct,max-age --audit /dev/shm/tg-cmp
#
# Peers: cMCP (`cmcp-runtime` 0.7.1 from PyPI, the tool-identity specification's reference
# gateway). PYTHON picks the interpreter (default python3.11; cmcp-runtime needs >= 3.11);
# VENV the directory (then pass the same path to the harness as --cmcp-venv or
# TOOLGATE_CMCP_VENV). Needs network access to PyPI the first time (about 30 s); a rerun with
# the venv in place only checks it.
set -euo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-python3.11}"
venv="${VENV:-bench/out/compare-venv}"

if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
"$venv/bin/pip" install -q --disable-pip-version-check -r bench/requirements-compare.txt
installed=$("$venv/bin/python" -c "import importlib.metadata as m; print(m.version('cmcp-runtime'))")
echo "cmcp-runtime $installed in $venv ($("$venv/bin/python" --version))" >&2

if [ "$#" -gt 0 ]; then
  exec env TOOLGATE_CMCP_VENV="$(cd "$venv" && pwd)" cargo bench -p toolgate --bench load -- --compare "$@"
fi
