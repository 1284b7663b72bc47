"""``/admin/loggers``: Connect's ``LoggingResource`` over :class:`~cdc.worker.rest.loggers.Loggers`.

``PUT ?scope=cluster`` asks the herder to spread the level to every worker (Connect's KIP-976): the
distributed herder writes ``logger-cluster-<namespace>`` to the config topic from whichever worker took the
request, and every worker applies it as it reads the record; a standalone worker applies it at once. The
answer is 204.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from cdc.worker.rest.body import as_string_map, read_json
from cdc.worker.rest.context import context, endpoint, json, no_content, path_param
from cdc.worker.rest.errors import RestError
from cdc.worker.rest.loggers import to_python_level

__all__ = ["routes"]


@endpoint
async def list_loggers(request: Request) -> Response:
    return json(context(request).loggers.all_levels())


@endpoint
async def get_logger(request: Request) -> Response:
    name = path_param(request, "logger")
    level = context(request).loggers.level(name)
    if level is None:
        raise RestError(404, f"Logger {name} not found.")
    return json(level)


@endpoint
async def set_logger(request: Request) -> Response:
    ctx = context(request)
    namespace = path_param(request, "logger")
    body = as_string_map(await read_json(request), allow_null=True)
    level = body.get("level")
    if level is None:
        raise RestError(400, "Desired 'level' parameter was not specified in request.")
    if to_python_level(level) is None:
        raise RestError(404, f"invalid log level '{level}'.")
    scope = (request.query_params.get("scope") or "worker").lower()
    if scope == "cluster":
        await run_in_threadpool(ctx.herder.set_cluster_logger_level, namespace, level)
        return no_content()
    return json(ctx.loggers.set_level(namespace, level))


routes = [
    Route("/admin/loggers", list_loggers, methods=["GET"]),
    Route("/admin/loggers/{logger}", get_logger, methods=["GET"]),
    Route("/admin/loggers/{logger}", set_logger, methods=["PUT"]),
]
