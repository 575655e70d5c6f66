"""A TCP proxy on 127.0.0.1 in front of PostgreSQL that can lose the answer to a COMMIT.

Armed, it passes the next COMMIT to the server, waits for the server's answer (so the
commit has happened), throws that answer away and cuts the connection: the client
sees the connection drop mid-commit, as through a NAT or a network that failed then.
"""

from __future__ import annotations

import contextlib
import socket
import threading

_COMMIT = b"Q\x00\x00\x00\x0bCOMMIT\x00"  # a simple-protocol Query message: "COMMIT"


class CuttingProxy:
    """Forwards every connection to `host:port`; `arm()` makes it lose one COMMIT's answer."""

    def __init__(self, host: str, port: int):
        self.target = (host, port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.cut = threading.Event()  # set once an answer was lost
        self._armed = threading.Event()
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def arm(self) -> None:
        """Lose the answer to the next COMMIT that passes."""
        self._armed.set()

    def close(self) -> None:
        """Stop listening and cut every connection."""
        self.listener.close()
        for sock in self._sockets:
            _cut(sock)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            self._sockets += [client, server]
            dropping = threading.Event()
            threading.Thread(target=self._up, args=(client, server, dropping), daemon=True).start()
            threading.Thread(
                target=self._down, args=(server, client, dropping), daemon=True
            ).start()

    def _up(self, client: socket.socket, server: socket.socket, dropping: threading.Event) -> None:
        while data := _receive(client):
            if self._armed.is_set() and _COMMIT in data:
                self._armed.clear()
                dropping.set()
            server.sendall(data)
        _cut(server)

    def _down(
        self, server: socket.socket, client: socket.socket, dropping: threading.Event
    ) -> None:
        while data := _receive(server):
            if dropping.is_set():  # the server has committed: its answer never arrives
                _cut(client)
                _cut(server)
                self.cut.set()
                return
            client.sendall(data)
        _cut(client)


def _receive(sock: socket.socket) -> bytes:
    try:
        return sock.recv(65536)
    except OSError:
        return b""


def _cut(sock: socket.socket) -> None:
    """End a connection now, waking a thread blocked reading it (close alone does not)."""
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
