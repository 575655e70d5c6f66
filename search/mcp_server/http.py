"""The MCP server over streamable HTTP, behind the same guard as `ctxsearch serve`.

`search.server.guard.RequestGuard` sits in front of the SDK's app and answers from a
request's head alone, before reading its body: a Host name the server was not started
for gets 400 (DNS rebinding), a cross-origin `Origin` 403, a request without the token
(when there is one) 401, a body declared over the cap 413. The token is compared as
`serve` compares it. The SDK's own Host check is switched off: the guard's rules
(loopback names, the --host address, --allowed-host) are the ones `serve` documents,
and two lists would disagree.
"""

from __future__ import annotations

import socket
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from search.server.guard import MAX_BODY_BYTES, MAX_WRITE_BODY_BYTES, AllowedHosts, RequestGuard

MCP_PATH = "/mcp"


def guarded_app(
    server: MCPServer, hosts: AllowedHosts, token: str | None, writable: bool
) -> RequestGuard:
    """The SDK's streamable HTTP app at `MCP_PATH`, behind the guard (and the token)."""
    # upsert_records may carry many records: writes get the write cap of `serve`
    cap = MAX_WRITE_BODY_BYTES if writable else MAX_BODY_BYTES
    app: Any = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        max_request_body_size=cap,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    return RequestGuard(app, hosts=hosts, token=token, large_bodies=(MCP_PATH,) if writable else ())


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
