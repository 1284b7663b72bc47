"""What every route needs: the herder, the settings, the herder caller, and response helpers."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from cdc.worker.herder import Herder
from cdc.worker.rest.errors import ConnectJSONResponse, RestError, response_for
from cdc.worker.rest.forwarding import Forwarded, HerderCaller
from cdc.worker.rest.loggers import Loggers
from cdc.worker.rest.settings import RestSettings

__all__ = ["RestContext", "context", "endpoint", "json", "no_content", "relay"]

Endpoint = Callable[[Request], Awaitable[Response]]


@dataclass
class RestContext:
    herder: Herder
    settings: RestSettings
    call: HerderCaller
    loggers: Loggers


def context(request: Request) -> RestContext:
    ctx: RestContext = request.app.state.rest
    return ctx


def endpoint(fn: Endpoint) -> Endpoint:
    """Turn every error of a route into its ``{"error_code","message"}`` response."""

    @functools.wraps(fn)
    async def wrapper(request: Request) -> Response:
        try:
            return await fn(request)
        except Exception as e:
            return response_for(e, request.url.path)

    return wrapper


def json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> JSONResponse:
    return ConnectJSONResponse(body, status_code=status, headers=headers)


def no_content(status: int = 204) -> Response:
    return Response(status_code=status)


def relay(result: Forwarded) -> Response:
    """Answer with what the worker a request was forwarded to answered."""
    if result.body is None or result.status == 204:
        return no_content(result.status)
    return json(result.body, result.status)


def path_param(request: Request, name: str) -> str:
    value = request.path_params[name]
    assert isinstance(value, str)
    return value


def task_param(request: Request) -> int:
    """Jersey answers 404 when an ``Integer`` path parameter does not parse."""
    raw = path_param(request, "task")
    try:
        return int(raw)
    except ValueError:
        raise RestError(404, "HTTP 404 Not Found") from None


def bool_param(request: Request, name: str, default: bool) -> bool:
    """Jersey's ``Boolean.valueOf``: only "true" (any case) is true."""
    value = request.query_params.get(name)
    return default if value is None else value.strip().lower() == "true"
