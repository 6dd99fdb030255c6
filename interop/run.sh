#!/usr/bin/env bash
# Interop with real third-party MCP peers (../shared/peers/RECIPE.md).
#
# Installs the pinned versions (requirements.txt into .venv, package.json/package-lock.json
# into node_modules; both skipped when already installed from the same pins), makes a CA and a
# leaf certificate with openssl, starts the peers on 127.0.0.1, runs the checks, stops the peers,
# and prints `N passed, M failed` (exit 1 when anything failed).
#
# Checks so far: toolgate's upstream client against FastMCP 4.2.3 over HTTPS (both protocol
# generations, webpki and pin trust, an impostor pin, the rug-pull switch); the official Python
# `mcp` client and inspector-cli against toolgate's demo upstream (both generations, the
# fallback, SSE, pages); and how the TypeScript server-everything refuses `server/discover` (the answer the client
# falls back on).
# To add a check: write a function that prints nothing on success and returns non-zero on
# failure, and call `check NAME FUNCTION` near the end; or use `count_cargo_tests` for a
# cargo test run.
#
# Usage: interop/run.sh            (from any directory; CI calls it from .ci/run)
# Env:   INTEROP_KEEP=1 keeps the work directory (certificates, logs) for a look afterwards.

set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
work="$(mktemp -d "${TMPDIR:-/tmp}/toolgate-interop.XXXXXX")"
passed=0
failed=0
peer_pids=()

cleanup() {
    local pid
    for pid in "${peer_pids[@]}"; do
        kill "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    if [ "${INTEROP_KEEP:-0}" = 1 ]; then
        echo "interop: work directory kept: $work"
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT

log() { echo "interop: $*"; }

# check NAME FUNCTION [ARGS…]: one named check; its output is shown only when it fails.
check() {
    local name="$1"
    shift
    local output
    if output="$("$@" 2>&1)"; then
        passed=$((passed + 1))
        log "ok   $name"
    else
        failed=$((failed + 1))
        log "FAIL $name"
        printf '%s\n' "$output" | sed 's/^/    /'
    fi
}

# count_cargo_tests NAME CARGO-ARGS…: runs cargo test and adds its pass/fail counts.
count_cargo_tests() {
    local name="$1"
    shift
    local output status results
    output="$(cd "$root" && cargo test "$@" 2>&1)"
    status=$?
    results="$(printf '%s\n' "$output" | grep -E '^test result: ' || true)"
    if [ -z "$results" ]; then
        failed=$((failed + 1))
        log "FAIL $name (cargo test ran no test, exit $status)"
        printf '%s\n' "$output" | tail -40 | sed 's/^/    /'
        return
    fi
    local p f
    p="$(printf '%s\n' "$results" | sed -E 's/.* ([0-9]+) passed.*/\1/' | awk '{ s += $1 } END { print s + 0 }')"
    f="$(printf '%s\n' "$results" | sed -E 's/.* ([0-9]+) failed.*/\1/' | awk '{ s += $1 } END { print s + 0 }')"
    passed=$((passed + p))
    failed=$((failed + f))
    printf '%s\n' "$output" | grep -E '^test .* \.\.\. ' | sed 's/^/interop:   /'
    if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
        failed=$((failed + 1))
        log "FAIL $name (cargo test exit $status)"
        printf '%s\n' "$output" | tail -40 | sed 's/^/    /'
    fi
}

# ---------------------------------------------------------------------------------------------
# Install (idempotent: a stamp holds the hash of the pins each install was made from).

install_python() {
    local stamp="$here/.venv/.pins.sha256" want
    want="$(sha256sum "$here/requirements.txt" | cut -d' ' -f1)"
    if [ -x "$here/.venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
        return 0
    fi
    rm -rf "$here/.venv"
    python3 -m venv "$here/.venv" &&
        "$here/.venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt" &&
        echo "$want" > "$stamp"
}

install_node() {
    local stamp="$here/node_modules/.pins.sha256" want
    want="$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -d' ' -f1)"
    if [ -d "$here/node_modules" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
        return 0
    fi
    (cd "$here" && npm ci --no-audit --no-fund --silent) &&
        echo "$want" > "$stamp"
}

started=$SECONDS
if ! install_python; then
    log "FAIL installing requirements.txt"
    echo "0 passed, 1 failed"
    exit 1
fi
if ! install_node; then
    log "FAIL installing package.json"
    echo "0 passed, 1 failed"
    exit 1
fi
log "install: $((SECONDS - started)) s"

# ---------------------------------------------------------------------------------------------
# Certificates: a CA and a leaf for 127.0.0.1 and localhost (ECDSA P-256).

make_certificates() {
    local dir="$1"
    mkdir -p "$dir"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
        -keyout "$dir/ca.key" -out "$dir/ca.pem" -days 2 -subj "/CN=toolgate interop CA" \
        -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null || return 1
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
        -keyout "$dir/leaf.key" -out "$dir/leaf.csr" -subj "/CN=toolgate interop upstream" 2>/dev/null || return 1
    printf '%s\n' "subjectAltName=IP:127.0.0.1,DNS:localhost" "basicConstraints=critical,CA:FALSE" \
        "extendedKeyUsage=serverAuth" "keyUsage=critical,digitalSignature" > "$dir/leaf.ext"
    openssl x509 -req -in "$dir/leaf.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial \
        -out "$dir/leaf.pem" -days 2 -extfile "$dir/leaf.ext" 2>/dev/null || return 1
}

# The key-pinned fingerprint as openssl computes it (SHA-256 of the SubjectPublicKeyInfo DER).
spki_fingerprint() {
    openssl x509 -in "$1" -noout -pubkey | openssl pkey -pubin -outform DER |
        openssl dgst -sha256 -hex | sed -E 's/.*= *//; s/^/SHA256:/'
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_for_https URL CA: until the peer answers TLS (30 s at most).
wait_for_https() {
    local tries=0
    until curl --silent --output /dev/null --cacert "$2" --max-time 2 "$1"; do
        tries=$((tries + 1))
        [ "$tries" -ge 60 ] && return 1
        sleep 0.5
    done
}

wait_for_http() {
    local tries=0
    until curl --silent --output /dev/null --max-time 2 "$1"; do
        tries=$((tries + 1))
        [ "$tries" -ge 60 ] && return 1
        sleep 0.5
    done
}

# ---------------------------------------------------------------------------------------------
# Peers.

fastmcp_dir="$work/fastmcp"
make_certificates "$fastmcp_dir" || { log "FAIL making certificates"; echo "0 passed, 1 failed"; exit 1; }
fastmcp_port="$(free_port)"
fastmcp_url="https://127.0.0.1:$fastmcp_port/mcp"
fastmcp_flag="$fastmcp_dir/rug-pull"
"$here/.venv/bin/python" "$here/fastmcp_upstream.py" --port "$fastmcp_port" \
    --cert "$fastmcp_dir/leaf.pem" --key "$fastmcp_dir/leaf.key" --rug-pull-flag "$fastmcp_flag" \
    > "$work/fastmcp.log" 2>&1 &
peer_pids+=($!)

everything_port="$(free_port)"
everything_url="http://127.0.0.1:$everything_port/mcp"
(cd "$here" && PORT="$everything_port" exec node --require "$here/loopback.cjs" \
    node_modules/@modelcontextprotocol/server-everything/dist/index.js streamableHttp) \
    > "$work/everything.log" 2>&1 &
peer_pids+=($!)

if ! wait_for_https "$fastmcp_url" "$fastmcp_dir/ca.pem"; then
    log "FAIL FastMCP did not start"; sed 's/^/    /' "$work/fastmcp.log"
    echo "0 passed, 1 failed"; exit 1
fi
log "FastMCP 4.2.3 at $fastmcp_url"
if ! wait_for_http "$everything_url"; then
    log "FAIL server-everything did not start"; sed 's/^/    /' "$work/everything.log"
    echo "0 passed, 1 failed"; exit 1
fi
log "server-everything at $everything_url"

# ---------------------------------------------------------------------------------------------
# Checks.

# server-everything (TypeScript SDK, sessions only) refuses server/discover with HTTP 400 and
# JSON-RPC -32000 "Bad Request: Server not initialized"; the upstream client treats an HTTP 4xx
# as a refusal and falls back to initialize (the demo upstream's DiscoverRefusal::BadRequest
# reproduces this answer in the cargo tests).
everything_refuses_discover() {
    local answer
    answer="$(curl --silent --write-out ' HTTP %{http_code}' -X POST "$everything_url" \
        -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \
        -H 'mcp-protocol-version: 2026-07-28' -H 'mcp-method: server/discover' \
        -d '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}')"
    echo "$answer"
    [ "$answer" = '{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null} HTTP 400' ]
}
check "server-everything refuses server/discover with HTTP 400 / -32000" everything_refuses_discover

# FastMCP answers server/discover (it speaks 2026-07-28).
fastmcp_answers_discover() {
    local answer
    answer="$(curl --silent --cacert "$fastmcp_dir/ca.pem" -X POST "$fastmcp_url" \
        -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \
        -H 'mcp-protocol-version: 2026-07-28' -H 'mcp-method: server/discover' \
        -d '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}')"
    echo "$answer"
    printf '%s' "$answer" | grep -q '"supportedVersions":\["2026-07-28"\]'
}
check "FastMCP answers server/discover with 2026-07-28" fastmcp_answers_discover

TOOLGATE_INTEROP_FASTMCP_URL="$fastmcp_url" \
TOOLGATE_INTEROP_FASTMCP_SPKI="$(spki_fingerprint "$fastmcp_dir/leaf.pem")" \
TOOLGATE_INTEROP_FASTMCP_CA="$fastmcp_dir/ca.pem" \
TOOLGATE_INTEROP_FASTMCP_FLAG="$fastmcp_flag" \
TOOLGATE_INTEROP_PYTHON="$here/.venv/bin/python" \
TOOLGATE_INTEROP_NODE_MODULES="$here/node_modules" \
    count_cargo_tests "upstream client against FastMCP; Python client and inspector-cli against the demo upstream" \
    -p gateway --test integration upstream_interop -- --ignored --test-threads=1

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
