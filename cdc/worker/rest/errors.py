"""Error bodies: every failure is ``{"error_code": <status>, "message": "..."}`` with ``error_code`` = status.

:class:`RestError` is raised by the REST layer itself (bad bodies, hop limit, timeouts); the runtime's
errors (:mod:`cdc.worker.errors`) are mapped with :func:`~cdc.worker.errors.status_of`. Anything else is a
500 whose body carries the exception's message only; the trace goes to the server log, never to a body.
"""

from __future__ import annotations

import json
import logging

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from cdc.api.errors import ConnectError
from cdc.worker.errors import status_of
from cdc.worker.security import redact

__all__ = [
    "CONFLICTING_OPERATION",
    "NO_LEADER_URL",
    "STALE_CONFIGURATION",
    "ConnectJSONResponse",
    "RestError",
    "error_response",
    "install_error_handlers",
    "response_for",
]

log = logging.getLogger(__name__)

NO_LEADER_URL = (
    "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."
)
CONFLICTING_OPERATION = "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"
STALE_CONFIGURATION = (
    "Cannot complete request momentarily due to stale configuration "
    "(typically caused by a concurrent config change)"
)

# Jersey's texts for its own WebApplicationExceptions.
_REASONS = {
    400: "Bad Request",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    406: "Not Acceptable",
    409: "Conflict",
    415: "Unsupported Media Type",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


class RestError(Exception):
    """An error the REST layer answers with ``status`` and ``message`` as they are."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class ConnectJSONResponse(JSONResponse):
    """Compact UTF-8 JSON as Jackson writes it; text with lone surrogates falls back to ``\\u`` escapes."""

    def render(self, content: object) -> bytes:
        try:
            return json.dumps(content, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        except UnicodeEncodeError:
            return json.dumps(content, separators=(",", ":")).encode("ascii")


def error_response(status: int, message: str) -> JSONResponse:
    """An error body; known secrets (values config providers gave, passwords) are masked in ``message``."""
    return ConnectJSONResponse({"error_code": status, "message": redact(message)}, status_code=status)


def jersey_message(status: int) -> str:
    return f"HTTP {status} {_REASONS.get(status, 'Error')}"


async def _http_exception(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    response = error_response(exc.status_code, jersey_message(exc.status_code))
    if exc.headers:
        response.headers.update(exc.headers)
    return response


def response_for(exc: BaseException, path: str) -> JSONResponse:
    """The error response for ``exc``; 500s are logged here with their trace."""
    if isinstance(exc, RestError):
        return error_response(exc.status, exc.message)
    status = status_of(exc) if isinstance(exc, ConnectError) else 500
    if status >= 500:
        log.error("Uncaught exception in REST call to %s", path, exc_info=exc)
    return error_response(status, str(exc) or type(exc).__name__)


async def _unexpected(request: Request, exc: Exception) -> Response:
    return response_for(exc, request.url.path)


def install_error_handlers(handlers: dict[object, object]) -> None:
    """Fill Starlette's ``exception_handlers`` mapping (routes catch their own errors; this is the net)."""
    handlers[HTTPException] = _http_exception
    handlers[RestError] = _unexpected
    handlers[ConnectError] = _unexpected
