"""uvicorn's h11 protocol with a header timeout: a client gets ``rest.request.header.timeout.ms`` from the
moment its connection opens (or its previous response ends) to send a whole request line and headers.

uvicorn bounds only the idle time between two requests, and cancels even that at the first byte a client
sends, so a client dripping one header byte a second (slowloris) holds a connection, a file descriptor and
a slot of the event loop for as long as it likes; a few thousand such clients starve the worker's REST
port, and with it the group's request forwarding. Jetty, Connect's server, closes a connection idle for 30 s
(``rest.idle.timeout.ms`` here sets uvicorn's keep-alive to the same).

The timer is armed in ``connection_made`` and after every response, and disarmed once h11 has parsed the
request's headers (the client's state leaves ``IDLE``). When it fires with the headers still incomplete,
the connection is closed without an answer.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["header_timeout_protocol"]

log = logging.getLogger(__name__)


class _HeaderTimeoutProtocol(H11Protocol):
    header_timeout_s: float = 20.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._disarm_header_timer()  # the headers are in: the request is the app's to time

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._arm_header_timer()

    def _arm_header_timer(self) -> None:
        self._disarm_header_timer()
        self._header_timer = self.loop.call_later(self.header_timeout_s, self._header_timed_out)

    def _disarm_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _header_timed_out(self) -> None:
        self._header_timer = None
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            return
        log.debug("Closing a REST connection from %s: no complete request headers in time", self.client)
        self.transport.close()


def header_timeout_protocol(header_timeout_s: float) -> type[H11Protocol]:
    """The protocol class for one uvicorn ``Config(http=…)``, with its header timeout."""
    return type("HeaderTimeoutProtocol", (_HeaderTimeoutProtocol,), {"header_timeout_s": header_timeout_s})
