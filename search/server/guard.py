"""Who may talk to the server: the Host names it answers for, same-origin browsers only,
the bearer token, and a cap on the request body. An ASGI middleware in front of every
route, which knows the caller before it reads a body: a request it refuses is answered
from its head alone, and its body is never read.

DNS rebinding: a web page on `attacker.example` can make its own name resolve to
127.0.0.1, and then read `http://attacker.example:8765/documents/1` as same-origin. The
browser still sends `Host: attacker.example:8765`, so a server that answers only for the
names it was started for (loopback names by default) cannot be read that way. An IP
address cannot be rebound, so when the server listens on every address (`0.0.0.0`,
`::`) any IP literal is accepted; names need `--allowed-host`.

Cross-origin requests: a browser sends `Origin` with every cross-origin fetch and form
post; the server's own page sends none (same-origin GET) or its own. Any `Origin` whose
host and port are not the request's own `Host` gets 403.

A path whose %-escapes do not decode to UTF-8 names nothing here, and gets 400.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import re
import secrets
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote_to_bytes

from indexer.errors import CtxsearchError
from search.server.write_queue import WriteQueue, WritesQueueFull

# The largest request body accepted (POST /search): a query of the most characters,
# every one an escaped astral character (12 bytes of JSON), still fits.
MAX_BODY_BYTES = 64 * 1024
# The largest body of a write (`serve --writable`: POST and DELETE /records).
MAX_WRITE_BODY_BYTES = 16 * 1024 * 1024
# The largest request line and headers uvicorn parses: a GET /search of the longest
# query, every character percent-encoded, fits.
MAX_HEAD_BYTES = 64 * 1024
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
# On every answer: no other site may frame the page (clickjacking) or embed an answer
# with <script> or <img> (no-cors reads), and no answer is sniffed as another type.
SECURITY_HEADERS = (
    (b"x-frame-options", b"DENY"),
    (b"content-security-policy", b"frame-ancestors 'none'"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"x-content-type-options", b"nosniff"),
)
_WILDCARDS = {"0.0.0.0", "[::]", ""}
_NAME = re.compile(r"^(\[[0-9a-f:.]+\]|[a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?)$")

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class BadHostName(CtxsearchError):
    """An `--allowed-host` value that is not a host name or IP address (with a port)."""


def split_host(value: str) -> tuple[str, int | None] | None:
    """A Host header (or --allowed-host) as (lower-cased name, port or None); None if
    it is not a name or IP literal. IPv6 literals keep their brackets."""
    value = value.strip().lower()
    if value.startswith("["):
        name, _, rest = value.partition("]")
        name += "]"
    elif value.count(":") > 1:  # a bare IPv6 address
        name, rest = value, ""
        try:
            name = f"[{ipaddress.IPv6Address(value)}]"
        except ValueError:
            return None
    else:
        name, colon, rest = value.partition(":")
        rest = colon + rest
    port: int | None = None
    if rest:
        if not rest.startswith(":") or not rest[1:].isdigit() or len(rest) > 6:
            return None
        port = int(rest[1:])
        if port > 65535:
            return None
    if not _NAME.match(name):
        return None
    return name, port


def _is_ip_literal(name: str) -> bool:
    try:
        ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class AllowedHosts:
    """The Host names a server answers for, and its port (None: any port).

    A Host header is answered when its name is one of `names` and its port is the
    server's or absent (a reverse proxy may send the bare name), or when it is one of
    the `exact` (name, port) pairs."""

    names: frozenset[str]
    port: int | None = None
    exact: frozenset[tuple[str, int]] = field(default_factory=frozenset)
    any_ip_literal: bool = False

    @classmethod
    def for_server(
        cls, bind_host: str, port: int | None, extra: Iterable[str] = ()
    ) -> AllowedHosts:
        """Loopback names, the address bound (unless it is a wildcard), and `extra`
        (each `NAME` or `NAME:PORT`); any IP literal too when bound to a wildcard."""
        names = set(LOOPBACK_NAMES)
        exact = set()
        bound = split_host(bind_host)
        wildcard = bind_host.strip() in _WILDCARDS or (bound is not None and bound[0] == "[::]")
        if bound is not None and not wildcard:
            names.add(bound[0])
        for value in extra:
            parsed = split_host(value)
            if parsed is None or not value.strip():
                raise BadHostName(
                    f"--allowed-host {value!r} is not a host name or IP address "
                    "(give NAME or NAME:PORT, without a scheme or path)"
                )
            if parsed[1] is None:
                names.add(parsed[0])
            else:
                exact.add(parsed)
        return cls(frozenset(names), port, frozenset(exact), wildcard)

    def allows(self, host_header: str) -> bool:
        """Whether a request with this Host header is one this server answers."""
        parsed = split_host(host_header)
        if parsed is None:
            return False
        name, port = parsed
        if (name, port) in self.exact:
            return True
        if port is not None and self.port is not None and port != self.port:
            return False
        return name in self.names or (self.any_ip_literal and _is_ip_literal(name))


def _origin_authority(origin: str) -> str | None:
    """`host[:port]` of an Origin header such as `http://127.0.0.1:8765`; None for
    `null` or anything else that names no host."""
    scheme, separator, authority = origin.strip().lower().partition("://")
    if not separator or scheme not in ("http", "https") or not authority or "/" in authority:
        return None
    return authority


@dataclass(frozen=True)
class _Refusal:
    """An answer the guard gives itself, instead of the application's."""

    status: int
    detail: str
    headers: tuple[tuple[bytes, bytes], ...] = ()


class RequestGuard:
    """ASGI middleware, in front of every route. Before a request's body is read, refuse
    other Host names and paths that are not UTF-8 (400), cross-origin requests (403),
    requests without the bearer token when the server has one (401, on every path but
    `open_paths`), bodies declared over the cap (413), and writes for which the write
    queue has no room (503, with Retry-After); then read the body, never more than the
    cap, and add `SECURITY_HEADERS` to every answer.

    The cap is `max_body`, or `max_large_body` for a POST or DELETE on `large_bodies`
    (and under them): the writes, which take their place in `write_queue` (when given)
    before their body is read. So a client without the token, or a write that would be
    refused, costs the server no body."""

    def __init__(
        self,
        app: Any,
        hosts: AllowedHosts,
        token: str | None = None,
        open_paths: tuple[str, ...] = (),
        max_body: int = MAX_BODY_BYTES,
        large_bodies: tuple[str, ...] = (),
        max_large_body: int = MAX_WRITE_BODY_BYTES,
        write_queue: WriteQueue | None = None,
    ):
        self.app = app
        self.hosts = hosts
        # compared as the UTF-8 bytes a client sends (curl, httpx, the search page)
        self.token = token.encode("utf-8") if token is not None else None
        # answered without the token: each path exactly, and all under one ending in /*
        self.open_paths = open_paths
        self.max_body = max_body
        self.large_bodies = large_bodies
        self.max_large_body = max_large_body
        self.write_queue = write_queue

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        send = _with_security_headers(send)
        headers = _headers(scope)
        refusal = self._refusal(scope, headers)
        large = scope["type"] == "http" and self._is_large(scope)
        cap = self.max_large_body if large else self.max_body
        declared = headers.get("content-length", [""])[0]
        if refusal is None and declared.isdigit() and int(declared) > cap:
            refusal = _too_large(cap)
        with contextlib.ExitStack() as held:
            if refusal is None and large and self.write_queue is not None:
                try:
                    held.enter_context(self.write_queue.place())
                except WritesQueueFull as error:
                    retry = str(error.retry_after).encode()
                    refusal = _Refusal(503, str(error), ((b"retry-after", retry),))
            if refusal is None and scope["type"] == "http":
                receive, refusal = await _read_body(receive, cap)
            if refusal is None:
                await self.app(scope, receive, send)
            elif scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            else:
                await _send_json(send, refusal)

    def _refusal(self, scope: Scope, headers: dict[str, list[str]]) -> _Refusal | None:
        """Why this request is refused before its body is read, from its head alone."""
        hosts = headers.get("host", [])
        host = hosts[0] if len(hosts) == 1 else ""
        if len(hosts) != 1 or len(headers.get("origin", [])) > 1:
            return _Refusal(400, "a request needs exactly one Host header and at most one Origin")
        if not self.hosts.allows(host):
            return _Refusal(400, f"this server does not answer for host {host!r}")
        if "origin" in headers and _origin_authority(headers["origin"][0]) != host.lower():
            return _Refusal(403, f"cross-origin request from {headers['origin'][0]!r} refused")
        if not _path_is_utf8(scope):
            return _Refusal(400, "the request path is not UTF-8 once its %-escapes are decoded")
        return self._token_refusal(scope, headers)

    def _token_refusal(self, scope: Scope, headers: dict[str, list[str]]) -> _Refusal | None:
        if self.token is None or _is_open(scope.get("path", ""), self.open_paths):
            return None
        given = _bearer_token(headers)
        # header values are latin-1 text of their bytes: compared as the bytes sent
        if secrets.compare_digest(given.encode("latin-1"), self.token):
            return None
        detail = "wrong bearer token" if given else "missing bearer token"
        return _Refusal(401, detail, ((b"www-authenticate", b"Bearer"),))

    def _is_large(self, scope: Scope) -> bool:
        """Whether this request may carry a write's body."""
        path = scope.get("path", "")
        large = any(path == p or path.startswith(p + "/") for p in self.large_bodies)
        return large and scope.get("method") in ("POST", "DELETE")


def _is_open(path: str, open_paths: tuple[str, ...]) -> bool:
    return any(path == p or (p.endswith("/*") and path.startswith(p[:-1])) for p in open_paths)


def _bearer_token(headers: dict[str, list[str]]) -> str:
    """The token of the request's one `Authorization: Bearer TOKEN` header, or ""."""
    values = headers.get("authorization", [])
    if len(values) != 1:
        return ""
    scheme, _, token = values[0].strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def _too_large(cap: int) -> _Refusal:
    return _Refusal(413, f"the request body is over the {cap:,}-byte limit")


async def _read_body(receive: Receive, cap: int) -> tuple[Receive, _Refusal | None]:
    """The whole body, read ahead (never more than the cap plus one message), and a
    `receive` that hands it to the application as it arrived."""
    messages: list[dict[str, Any]] = []
    size = 0
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            break
        size += len(message.get("body", b""))
        if size > cap:
            return receive, _too_large(cap)
        if not message.get("more_body", False):
            break

    async def replay() -> dict[str, Any]:
        return messages.pop(0) if messages else await receive()

    return replay, None


def _path_is_utf8(scope: Scope) -> bool:
    """Whether the path's %-escapes decode to UTF-8. The server decodes a bad one to
    U+FFFD, so `DELETE /records/%FF` would name the record whose id is "\ufffd"."""
    raw = scope.get("raw_path") or b""
    try:
        unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _with_security_headers(send: Send) -> Send:
    async def sending(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            headers = [*message.get("headers", []), *SECURITY_HEADERS]
            message = {**message, "headers": headers}
        await send(message)

    return sending


def _headers(scope: Scope) -> dict[str, list[str]]:
    """The request's header values by lower-cased name, as latin-1 text."""
    headers: dict[str, list[str]] = {}
    for name, value in scope["headers"]:
        headers.setdefault(name.decode("latin-1").lower(), []).append(value.decode("latin-1"))
    return headers


async def _send_json(send: Send, refusal: _Refusal) -> None:
    """The refusal as JSON; the connection is closed after it, so that a body the
    client still sends is never read."""
    body = json.dumps({"detail": refusal.detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": refusal.status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
                *refusal.headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
