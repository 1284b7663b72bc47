"""Run the REST app with uvicorn in a background thread, one uvicorn server per listener.

The sockets are bound in :meth:`RestServer.start` itself, so a busy port fails there, and a listener on
port 0 knows its real port before the first request (needed for the advertised URL). Each listener gets
its own uvicorn ``Server`` so ``https`` listeners can carry their own TLS context; all of them run on
one event loop in one thread. ``stop()`` asks them to exit and waits for open requests to finish.

Constructing a server checks its exposure first (:mod:`cdc.worker.rest.exposure`): a listener the user
opened to every interface without authentication stops the worker before anything starts. TLS contexts
come from :mod:`cdc.worker.rest.tls`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
import time
from typing import Any

import uvicorn
from starlette.applications import Starlette

from cdc.metrics import MetricSource
from cdc.worker.herder import Herder
from cdc.worker.rest.app import create_app
from cdc.worker.rest.client import set_peer_client
from cdc.worker.rest.exposure import check_exposure
from cdc.worker.rest.loggers import Loggers
from cdc.worker.rest.protocol import header_timeout_protocol
from cdc.worker.rest.settings import Listener, RestSettings
from cdc.worker.rest.tls import server_context

__all__ = ["RestServer"]

log = logging.getLogger(__name__)


def _bind(listener: Listener) -> socket.socket:
    if not listener.host:
        # Every interface: dual-stack where IPv6 exists, else IPv4 only.
        try:
            sock = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("::", listener.port))
            return sock
        except OSError:
            with contextlib.suppress(NameError):
                sock.close()
        infos: list[tuple[int, Any]] = [(socket.AF_INET, ("0.0.0.0", listener.port))]
    else:
        found = socket.getaddrinfo(listener.host, listener.port, type=socket.SOCK_STREAM)
        infos = [(int(family), addr) for family, _, _, _, addr in found]
    error: OSError | None = None
    for family, addr in infos:
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(addr)
            return sock
        except OSError as e:
            sock.close()
            error = e
    raise OSError(f"Unable to bind REST listener {listener}: {error}")


class _Server(uvicorn.Server):
    """uvicorn's server, but idle connections do not hold up shutdown.

    A TLS connection whose client went away sits up to 30 s in asyncio's close handshake; requests in
    flight are still let finish, then what is left gets a second to close and is aborted.
    """

    async def _wait_tasks_to_complete(self) -> None:
        while self.server_state.tasks and not self.force_exit:
            await asyncio.sleep(0.05)
        deadline = time.monotonic() + 1.0
        while self.server_state.connections and time.monotonic() < deadline and not self.force_exit:
            await asyncio.sleep(0.05)
        for connection in list(self.server_state.connections):
            transport = getattr(connection, "transport", None)
            if transport is not None:
                transport.abort()
        for server in self.servers:
            server.close()


class RestServer:
    def __init__(
        self,
        herder: Herder,
        settings: RestSettings,
        *,
        app: Starlette | None = None,
        loggers: Loggers | None = None,
        worker_metrics: MetricSource | None = None,
    ) -> None:
        check_exposure(settings)  # before anything starts: an open door stops the worker here
        self.settings = settings
        self.app = (
            app
            if app is not None
            else create_app(herder, settings, loggers=loggers, worker_metrics=worker_metrics)
        )
        self._servers: list[_Server] = []
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._ports: list[int] = []  # of settings.listeners, then of settings.admin_listeners

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self, timeout: float = 30.0) -> None:
        """Bind every listener and serve; returns once all of them accept connections."""
        if self._thread is not None:
            raise RuntimeError("REST server already started")
        listeners = [*self.settings.listeners, *(self.settings.admin_listeners or [])]
        sockets: list[socket.socket] = []
        try:
            for listener in listeners:
                sockets.append(_bind(listener))
            contexts = [server_context(self.settings.ssl) if x.scheme == "https" else None for x in listeners]
        except BaseException:
            for sock in sockets:
                sock.close()
            raise
        self._ports = [sock.getsockname()[1] for sock in sockets]
        self.app.state.admin_ports = set(self._ports[len(self.settings.listeners) :])
        for context in contexts:
            config = uvicorn.Config(
                self.app,
                lifespan="off",
                log_config=None,
                access_log=False,
                http=header_timeout_protocol(self.settings.header_timeout_s),
                timeout_keep_alive=max(1, round(self.settings.idle_timeout_s)),
            )
            config.load()
            config.ssl = context
            self._servers.append(_Server(config))
        self._thread = threading.Thread(target=self._run, args=(sockets,), name="rest-server", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not all(server.started for server in self._servers):
            if self._error is not None or not self._thread.is_alive():
                raise RuntimeError(f"REST server failed to start: {self._error}")
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError("REST server did not start in time")
            time.sleep(0.01)
        rest = getattr(self.app.state, "rest", None)
        if rest is not None:
            set_peer_client(rest.call.client)  # the herder's requests to peers use this worker's TLS trust
        log.info("REST server listening on %s, advertised URL %s", self.urls, self.advertised_url)

    def _run(self, sockets: list[socket.socket]) -> None:
        async def serve_all() -> None:
            await asyncio.gather(
                *(server.serve(sockets=[sock]) for server, sock in zip(self._servers, sockets, strict=True))
            )

        try:
            asyncio.run(serve_all())
        except BaseException as e:  # SystemExit from uvicorn's startup included
            self._error = e
            log.error("REST server stopped with an error", exc_info=e)
        finally:
            for sock in sockets:
                sock.close()

    def stop(self, timeout: float = 30.0) -> None:
        """Stop accepting, let open requests finish (up to ``timeout``), then return."""
        for server in self._servers:
            server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                for server in self._servers:
                    server.force_exit = True
                self._thread.join(5.0)

    # -- addresses ---------------------------------------------------------------------------------
    @property
    def ports(self) -> list[int]:
        """The bound port of each of ``settings.listeners`` (after ``start``)."""
        return self._ports[: len(self.settings.listeners)]

    @property
    def admin_ports(self) -> list[int]:
        return self._ports[len(self.settings.listeners) :]

    @property
    def urls(self) -> list[str]:
        """Local URLs to reach each listener (``localhost`` for listeners on every interface)."""
        out = []
        for listener, port in zip(self.settings.listeners, self.ports, strict=False):
            host = listener.host or "localhost"
            host = f"[{host}]" if ":" in host else host
            out.append(f"{listener.scheme}://{host}:{port}/")
        return out

    @property
    def advertised_url(self) -> str:
        """``scheme://host:port/`` published to other workers (Connect's ``RestServer.advertisedUrl``)."""
        return self.settings.advertised_url(self.ports or None)

    @property
    def worker_id(self) -> str:
        return self.settings.worker_id(self.ports or None)
