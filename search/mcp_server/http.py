"""The MCP server over streamable HTTP, behind the same guard as `ctxsearch serve`.

`search.server.guard.RequestGuard` sits in front of the SDK's app: requests for a Host
name the server was not started for get 400 (DNS rebinding), a cross-origin `Origin`
403, a body over the cap 413. With a token, every request must also carry it as a
bearer token (401 otherwise), compared as `serve` compares it. The SDK's own Host check
is switched off: the guard's rules (loopback names, the --host address, --allowed-host)
are the ones `serve` documents, and two lists would disagree.
"""

from __future__ import annotations

import json
import secrets
import socket
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from search.server.guard import AllowedHosts, Receive, RequestGuard, Scope, Send

MCP_PATH = "/mcp"


class BearerToken:
    """ASGI middleware: answer only HTTP requests carrying `Authorization: Bearer TOKEN`."""

    def __init__(self, app: Any, token: str):
        self.app = app
        self.token = token.encode("utf-8")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = b""
        for name, value in scope["headers"]:
            if name.lower() == b"authorization" and value[:7].lower() == b"bearer ":
                given = value[7:].strip()
        if secrets.compare_digest(given, self.token):
            await self.app(scope, receive, send)
            return
        detail = "missing bearer token" if not given else "wrong bearer token"
        body = json.dumps({"detail": detail}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", b"Bearer"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def guarded_app(
    server: MCPServer, hosts: AllowedHosts, token: str | None, writable: bool
) -> RequestGuard:
    """The SDK's streamable HTTP app at `MCP_PATH`, behind the guard (and the token)."""
    app: Any = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    if token is not None:
        app = BearerToken(app, token)
    # upsert_records may carry many records: writes get the write cap of `serve`
    return RequestGuard(app, hosts=hosts, large_bodies=(MCP_PATH,) if writable else ())


def run_http(
    server: MCPServer,
    listener: socket.socket,
    hosts: AllowedHosts,
    token: str | None,
    writable: bool,
) -> None:
    """Serve MCP over streamable HTTP on an open socket until interrupted."""
    from search.server.app import serve_on_socket

    serve_on_socket(guarded_app(server, hosts, token, writable), listener, "warning")
