"""A loopback TCP forwarder that records what the client sends: to see on the wire what a connection did
(the statements it ran before a binlog dump, whether it said COM_QUIT, whether it was reset).

:class:`TcpTap` listens on 127.0.0.1 (a port of its own, or one given, so that a test can start it after the
client first failed to reach it) and forwards each accepted connection to ``target``, in threads.
``sessions`` holds one :class:`TapSession` per connection: the client's bytes, and how the client's side
ended (``"fin"``: an orderly close, ``"reset"``: RST, ``None``: still open).
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from dataclasses import dataclass, field

__all__ = ["COM_QUIT", "TapSession", "TcpTap"]

COM_QUIT = b"\x01\x00\x00\x00\x01"
"""The MySQL protocol's COM_QUIT packet: length 1, sequence 0, command 0x01."""


@dataclass
class TapSession:
    sent: bytearray = field(default_factory=bytearray)
    ended: str | None = None


class TcpTap:
    def __init__(self, target: tuple[str, int], port: int = 0) -> None:
        self.target = target
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", port))
        self.listener.listen(16)
        self.port = int(self.listener.getsockname()[1])
        self.sessions: list[TapSession] = []
        self._closing = False
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True, name="tcp-tap").start()

    def _accept(self) -> None:
        while not self._closing:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            session = TapSession()
            self.sessions.append(session)
            self._sockets += [client, server]
            threading.Thread(target=self._upstream, args=(client, server, session), daemon=True).start()
            threading.Thread(target=self._downstream, args=(server, client), daemon=True).start()

    @staticmethod
    def _upstream(client: socket.socket, server: socket.socket, session: TapSession) -> None:
        while True:
            try:
                data = client.recv(65536)
            except ConnectionResetError:
                session.ended = "reset"
                break
            except OSError:
                break
            if not data:
                session.ended = "fin"
                break
            session.sent += data
            with contextlib.suppress(OSError):
                server.sendall(data)
        with contextlib.suppress(OSError):
            server.close()

    @staticmethod
    def _downstream(server: socket.socket, client: socket.socket) -> None:
        while True:
            try:
                data = server.recv(65536)
            except OSError:
                return
            if not data:
                with contextlib.suppress(OSError):
                    client.shutdown(socket.SHUT_WR)
                return
            try:
                client.sendall(data)
            except OSError:
                return

    def wait_ended(self, session: TapSession, timeout: float = 10.0) -> str | None:
        deadline = time.monotonic() + timeout
        while session.ended is None and time.monotonic() < deadline:
            time.sleep(0.02)
        return session.ended

    def close(self) -> None:
        self._closing = True
        with contextlib.suppress(OSError):
            self.listener.close()
        for s in self._sockets:
            with contextlib.suppress(OSError):
                s.close()
