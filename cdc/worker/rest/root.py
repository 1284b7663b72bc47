"""``/``, ``/health``, ``/connector-plugins``: Connect's ``RootResource`` and ``ConnectorPluginsResource``."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from cdc.worker.config import CONNECTOR_CLASS_CONFIG
from cdc.worker.rest.body import as_string_map, read_json
from cdc.worker.rest.context import bool_param, context, endpoint, json, path_param, relay
from cdc.worker.rest.errors import RestError
from cdc.worker.rest.forwarding import Forwarded
from cdc.worker.rest.overrides import add_override_errors
from cdc.worker.security import redact_json

__all__ = ["routes"]

_HEALTH_STATUS = {"healthy": 200, "starting": 503, "unhealthy": 500}
_UNHEALTHY = "Worker was unable to handle this request and may be unable to handle other requests."
_ALIAS_SUFFIX = "Connector"


@endpoint
async def server_info(request: Request) -> Response:
    ctx = context(request)
    result = await ctx.call(request, ctx.herder.server_info)
    return relay(result) if isinstance(result, Forwarded) else json(result)


@endpoint
async def health(request: Request) -> Response:
    ctx = context(request)
    try:
        result = await ctx.call(request, ctx.herder.health, timeout_s=ctx.settings.health_timeout_s)
    except RestError as e:
        if e.message != "Request timed out":
            raise
        return json({"status": "unhealthy", "message": _UNHEALTHY}, 500)
    if isinstance(result, Forwarded):
        return relay(result)
    status, message = result
    return json({"status": status, "message": message}, _HEALTH_STATUS.get(status, 500))


@endpoint
async def list_plugins(request: Request) -> Response:
    ctx = context(request)
    connectors_only = bool_param(request, "connectorsOnly", True)
    result = await ctx.call(request, lambda: ctx.herder.plugins(connectors_only))
    return relay(result) if isinstance(result, Forwarded) else json(result)


@endpoint
async def plugin_config(request: Request) -> Response:
    ctx = context(request)
    plugin = path_param(request, "plugin")
    result = await ctx.call(request, lambda: ctx.herder.plugin_config(plugin))
    return relay(result) if isinstance(result, Forwarded) else json(result)


def _normalized(name: str) -> str:
    # A simple name may drop the "Connector" suffix; FQCNs and simple names then compare by suffix.
    if name.endswith(_ALIAS_SUFFIX) and len(name) > len(_ALIAS_SUFFIX):
        return name[: -len(_ALIAS_SUFFIX)]
    return name


@endpoint
async def validate(request: Request) -> Response:
    ctx = context(request)
    plugin = path_param(request, "plugin")
    config = as_string_map(await read_json(request, numbers_as_text=True))
    included = config.get(CONNECTOR_CLASS_CONFIG)
    if included is not None and not _normalized(included).endswith(_normalized(plugin)):
        raise RestError(400, f"Included connector type {included} does not match request type {plugin}")
    result = await ctx.call(request, lambda: ctx.herder.validate_connector_config(config))
    if isinstance(result, Forwarded):
        return relay(result)
    return json(
        redact_json(
            add_override_errors(
                result, config, ctx.settings.client_override_policy, ctx.settings.spark_allowed_masters
            )
        )
    )


routes = [
    Route("/", server_info, methods=["GET"]),
    Route("/health", health, methods=["GET"]),
    Route("/connector-plugins", list_plugins, methods=["GET"]),
    Route("/connector-plugins/{plugin}/config", plugin_config, methods=["GET"]),
    Route("/connector-plugins/{plugin}/config/validate", validate, methods=["PUT"]),
]
