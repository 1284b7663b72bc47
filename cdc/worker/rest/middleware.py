"""ASGI middleware: request body limits, Jersey-like path matching, admin listeners, and
``response.http.headers.config``."""

from __future__ import annotations

import time
from collections.abc import Sequence
from email.utils import formatdate

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cdc.worker.rest.errors import RestError, error_response, jersey_message
from cdc.worker.rest.settings import HeaderAction

__all__ = [
    "AdminListenerMiddleware",
    "BodyLimitMiddleware",
    "ResponseHeadersMiddleware",
    "TrailingSlashMiddleware",
]


def _too_large(limit: int) -> str:
    return (
        f"Request body is larger than {limit} bytes (rest.request.body.max.bytes); "
        "the request was refused without being read"
    )


class BodyLimitMiddleware:
    """Every request body bounded before it is read: ``rest.request.body.max.bytes``, answered 413.

    Outermost, so it holds for every path, authenticated or not. A ``Content-Length`` above the limit is
    refused at once, before any byte of the body is read; a body without one (chunked) is counted as the
    route reads it, and the read that crosses the limit raises a 413 :class:`RestError` (routes answer it
    as any other error). What a refused client still sends is discarded by uvicorn without being kept.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for key, value in scope.get("headers", []):
            if key.lower() == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    await error_response(400, "Invalid Content-Length header")(scope, receive, send)
                    return
                if declared > self.max_bytes:
                    await error_response(413, _too_large(self.max_bytes))(scope, receive, send)
                    return
        received = 0

        async def bounded_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise RestError(413, _too_large(self.max_bytes))
            return message

        await self.app(scope, bounded_receive, send)


class TrailingSlashMiddleware:
    """Jersey matches ``/connectors/`` like ``/connectors``; answer it instead of redirecting."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            path: str = scope["path"]
            if len(path) > 1 and path.endswith("/"):
                scope = dict(scope)
                scope["path"] = path.rstrip("/") or "/"
                raw = scope.get("raw_path")
                if isinstance(raw, bytes):
                    scope["raw_path"] = raw.rstrip(b"/") or b"/"
        await self.app(scope, receive, send)


class AdminListenerMiddleware:
    """With ``admin.listeners`` set, ``/admin`` is served only on those ports, and nothing else is.

    The ports are read from ``app.state.admin_ports`` at request time: listeners on port 0 get theirs
    only when the server binds them.
    """

    def __init__(self, app: ASGIApp, enabled: bool) -> None:
        self.app = app
        self.enabled = enabled

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.enabled and scope["type"] == "http":
            server = scope.get("server")
            port = server[1] if server else None
            admin_ports: set[int] = scope["app"].state.admin_ports
            is_admin_path = scope["path"] == "/admin" or scope["path"].startswith("/admin/")
            if is_admin_path != (port in admin_ports):
                await error_response(404, jersey_message(404))(scope, receive, send)
                return
        await self.app(scope, receive, send)


class ResponseHeadersMiddleware:
    """Jetty's ``HeaderFilter``: set, add, setDate, addDate (a date is now + value ms)."""

    def __init__(self, app: ASGIApp, actions: Sequence[HeaderAction]) -> None:
        self.app = app
        self.actions = list(actions)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.actions:
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                for action in self.actions:
                    value = action.value
                    if action.action.endswith("Date"):
                        value = formatdate(time.time() + int(value) / 1000.0, usegmt=True)
                    name = action.name.lower().encode("latin-1")
                    if action.action.startswith("set"):
                        headers = [(k, v) for k, v in headers if k.lower() != name]
                    headers.append((name, value.encode("latin-1")))
                message = dict(message)
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)
