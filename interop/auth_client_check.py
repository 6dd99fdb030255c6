"""Who may call (docs/design.md §7) with the official Python `mcp` client (2.3.0): one line per check.

Every check prints exactly one line, `pass <what>` or `FAIL <what>: <why>`; the exit status is 1
when any line is a FAIL. Keys and tokens are made here with the openssl CLI (RS256 is
RSASSA-PKCS1-v1_5 with SHA-256, which `openssl dgst -sha256 -sign` computes); nothing is
committed.

Subcommands:

- `keys --dir DIR`: an RSA-2048 key `DIR/jwt.key` and its JWKS `DIR/jwks.json` (kid `interop-1`).
- `serve-jwks --port PORT --cert PEM --key PEM --file JWKS`: serves the file over HTTPS on
  127.0.0.1 (any path) until killed, logging one line per request to stderr.
- `bearer --gateway URL --key DIR/jwt.key --issuer ISS --audience AUD --subject SUB --mode MODE
  --audit FILE --tool NAME`: calls the tool with a token minted now (the exact result), checks the
  last `tools/call` audit entry names `User::"SUB"`, and that `initialize` without a token is
  HTTP 401 with the RFC 9728 challenge.
- `mtls --gateway URL --ca PEM --cert PEM --key PEM --principal TEXT --mode MODE --audit FILE
  --tool NAME`: calls the tool over TLS with the client certificate (the exact result), checks
  the audit entry's principal, and that a connection without a certificate gets no HTTP answer
  (run.sh checks the gateway's log line for each refused handshake).
"""

import argparse
import asyncio
import base64
import http.server
import json
import os
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request

import checklines
from checklines import report

KID = "interop-1"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def make_keys(directory: str) -> None:
    key = os.path.join(directory, "jwt.key")
    subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048",
                    "-out", key], check=True, capture_output=True)
    modulus = subprocess.run(["openssl", "rsa", "-noout", "-modulus", "-in", key], check=True,
                             capture_output=True, text=True).stdout.strip()
    n = bytes.fromhex(modulus.removeprefix("Modulus="))
    jwks = {"keys": [{"kty": "RSA", "kid": KID, "use": "sig", "alg": "RS256", "n": b64url(n),
                      "e": "AQAB"}]}
    with open(os.path.join(directory, "jwks.json"), "w") as file:
        json.dump(jwks, file)


def mint(key: str, claims: dict) -> str:
    header = {"alg": "RS256", "typ": "JWT", "kid": KID}
    signing_input = f"{b64url(json.dumps(header).encode())}.{b64url(json.dumps(claims).encode())}"
    signature = subprocess.run(["openssl", "dgst", "-sha256", "-sign", key],
                               input=signing_input.encode(), check=True, capture_output=True).stdout
    return f"{signing_input}.{b64url(signature)}"


def serve_jwks(args) -> None:
    with open(args.file, "rb") as file:
        document = file.read()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (the stdlib's name)
            self.send_response(200)
            self.send_header("Content-Type", "application/jwk-set+json")
            self.send_header("Content-Length", str(len(document)))
            self.end_headers()
            self.wfile.write(document)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(args.cert, args.key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    server.serve_forever()


def last_call(audit: str) -> dict:
    with open(audit) as file:
        calls = [entry for entry in map(json.loads, file) if entry.get("event") == "tools/call"]
    return calls[-1] if calls else {}


def expected_echo(text: str) -> dict:
    """FastMCP's own answer to `echo`, which the gateway passes on unchanged (`_meta` included)."""
    return {"_meta": {"fastmcp": {"wrap_result": True},
                      "io.modelcontextprotocol/serverInfo": {"name": "toolgate-interop-upstream",
                                                             "version": "4.2.3"}},
            "content": [{"type": "text", "text": text}], "structuredContent": {"result": text},
            "isError": False, "resultType": "complete"}


async def call(url: str, mode: str, tool: str, text: str, http_client) -> dict:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with http_client:
        async with Client(streamable_http_client(url, http_client=http_client), mode=mode) as client:
            result = await client.call_tool(tool, {"text": text})
            return result.model_dump(by_alias=True, exclude_none=True, mode="json")


def check_call(args, http_client, credential: str, principal: str) -> None:
    """The tool called with `http_client` answers exactly; its audit entry names `principal`."""
    mode = args.mode
    text = f"{credential}, {mode}"
    try:
        result = asyncio.run(call(args.gateway, mode, args.tool, text, http_client))
    except Exception as error:  # noqa: BLE001 (any failure is this check's failure)
        result = f"{type(error).__name__}: {error}"
    report(result == expected_echo(text),
           f"[{mode}] Python mcp client with a {credential}: {args.tool} answered exactly",
           f"got {result!r}")
    entry = last_call(args.audit)
    report((entry.get("principal"), entry.get("tool"), entry.get("decision")) ==
           (principal, args.tool, "allowed"),
           f"[{mode}] the audit entry names the {credential}'s {principal}", f"got {entry!r}")


def initialize_status(url: str, headers: dict, context=None) -> tuple:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "auth_client_check", "version": "1"}}}).encode()
    request = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        **headers})
    try:
        with urllib.request.urlopen(request, timeout=30, context=context) as response:
            return response.status, response.headers.get_all("WWW-Authenticate") or []
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get_all("WWW-Authenticate") or []


def bearer(args) -> None:
    import httpx2

    mode = args.mode
    now = int(time.time())
    claims = {"iss": args.issuer, "aud": args.audience, "sub": args.subject, "exp": now + 300,
              "nbf": now - 5, "iat": now, "scope": "tools:call"}
    token = mint(args.key, claims)
    client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    check_call(args, client, "bearer token", f'User::"{args.subject}"')

    origin = args.gateway.removesuffix("/mcp")
    challenge = f'Bearer resource_metadata="{origin}/.well-known/oauth-protected-resource/mcp"'
    status = initialize_status(args.gateway, {})
    report(status == (401, [challenge]),
           f"[{mode}] without the token: HTTP 401 with the RFC 9728 challenge", f"got {status!r}")
    wrong = dict(claims, aud="https://another-resource.example/mcp")
    status = initialize_status(args.gateway, {"Authorization": f"Bearer {mint(args.key, wrong)}"})
    report(status == (401, [f'{challenge}, error="invalid_token"']),
           f"[{mode}] a token for another audience: HTTP 401 invalid_token", f"got {status!r}")


def mtls(args) -> None:
    import httpx2

    mode = args.mode
    context = ssl.create_default_context(cafile=args.ca)
    context.load_cert_chain(args.cert, args.key)
    client = httpx2.AsyncClient(verify=context, timeout=30)
    check_call(args, client, "client certificate", args.principal)

    anonymous = ssl.create_default_context(cafile=args.ca)
    # TLS 1.3: the client's side of the handshake completes before the server judges its
    # (absent) certificate, so the refusal arrives under the request: the certificate_required
    # alert, or the connection closing first (either is an SSL error; it varies from run to run).
    try:
        outcome = initialize_status(args.gateway, {}, context=anonymous)
    except urllib.error.URLError as error:
        outcome = error.reason
    except (ssl.SSLError, ConnectionError) as error:
        outcome = error
    report(isinstance(outcome, (ssl.SSLError, ConnectionError)),
           f"[{mode}] without a client certificate: no HTTP answer, the TLS connection is refused",
           f"got {outcome!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    keys = commands.add_parser("keys")
    keys.add_argument("--dir", required=True)
    serve = commands.add_parser("serve-jwks")
    for name in ("--port", "--cert", "--key", "--file"):
        serve.add_argument(name, required=True, type=int if name == "--port" else str)
    token = commands.add_parser("bearer")
    for name in ("--gateway", "--key", "--issuer", "--audience", "--subject", "--mode", "--audit",
                 "--tool"):
        token.add_argument(name, required=True)
    certificate = commands.add_parser("mtls")
    for name in ("--gateway", "--ca", "--cert", "--key", "--principal", "--mode", "--audit",
                 "--tool"):
        certificate.add_argument(name, required=True)
    args = parser.parse_args()
    if args.command == "keys":
        make_keys(args.dir)
        return
    if args.command == "serve-jwks":
        serve_jwks(args)
        return
    {"bearer": bearer, "mtls": mtls}[args.command](args)
    sys.exit(checklines.exit_status())


if __name__ == "__main__":
    main()
