"""``/connectors``: Connect's ``ConnectorsResource`` and the internal ``/connectors/{n}/tasks|fence``."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from cdc.api.errors import NotFoundError
from cdc.worker.config import NAME_CONFIG
from cdc.worker.names import name_error, printable
from cdc.worker.rest.body import as_object, as_string_map, read_json
from cdc.worker.rest.context import (
    bool_param,
    context,
    endpoint,
    json,
    no_content,
    path_param,
    relay,
    task_param,
)
from cdc.worker.rest.errors import RestError
from cdc.worker.rest.forwarding import Forwarded
from cdc.worker.rest.overrides import check_overrides
from cdc.worker.rest.signature import RequestSignature
from cdc.worker.security import redact_json
from cdc.worker.stores.base import TargetState, TaskId

__all__ = ["routes"]

_INITIAL_STATES = {
    "RUNNING": TargetState.STARTED,
    "PAUSED": TargetState.PAUSED,
    "STOPPED": TargetState.STOPPED,
}
_JAVA_TRIM = "".join(chr(c) for c in range(0x21))
_OFFSETS_REQUIRED = "Partitions / offsets need to be provided for an alter offsets request"


def _location(request: Request, name: str) -> str:
    base = str(request.base_url).rstrip("/")
    return f"{base}/connectors/{quote(name, safe='', errors='surrogatepass')}"


def _check_name(name: str) -> None:
    """The name rules of :mod:`cdc.worker.names`, with Connect's message for an empty name."""
    problem = name_error(name)
    if problem is None:
        return
    if not name:
        raise RestError(
            400,
            "Connector configuration is invalid and contains the following 1 error(s):\n"
            "Invalid value  for configuration name: String must be non-empty\n"
            "You can also find the above list of errors at the endpoint "
            "`/connector-plugins/{connectorType}/config/validate`",
        )
    raise RestError(400, f"Connector name {printable(name)} is invalid: {problem}")


def _check_and_put_name(name: str, config: dict[str, Any]) -> None:
    included = config.get(NAME_CONFIG)
    if included is not None:
        if included != name:
            raise RestError(
                400,
                f"Connector name configuration ({included}) doesn't match connector name in the URL ({name})",
            )
    else:
        config[NAME_CONFIG] = name


@endpoint
async def list_connectors(request: Request) -> Response:
    ctx = context(request)
    expand = request.query_params.getlist("expand")
    if "expand" not in request.query_params:
        names = await ctx.call(request, ctx.herder.connectors)
        return relay(names) if isinstance(names, Forwarded) else json(names)

    def expanded() -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for name in ctx.herder.connectors():
            try:
                item: dict[str, Any] = {}
                for kind in expand:
                    if kind == "status":
                        item["status"] = ctx.herder.connector_status(name)
                    elif kind == "info":
                        item["info"] = ctx.herder.connector_info(name)
                out[name] = item
            except NotFoundError:
                continue  # deleted while we looked it up
        return out

    result = await ctx.call(request, expanded)
    return relay(result) if isinstance(result, Forwarded) else json(redact_json(result))


@endpoint
async def create_connector(request: Request) -> Response:
    ctx = context(request)
    body = as_object(await read_json(request, numbers_as_text=True), "CreateConnectorRequest")
    raw_name = body.get("name")
    if isinstance(raw_name, (dict, list)):
        raise RestError(400, "Cannot deserialize value of type `java.lang.String` for 'name'")
    name = "" if raw_name is None else str(raw_name).lower() if isinstance(raw_name, bool) else str(raw_name)
    name = name.strip(_JAVA_TRIM)  # Java's String.trim(): code points up to U+0020 only
    if body.get("config") is None:
        raise RestError(400, "Connector config is missing from the request body ('config' is required)")
    config = as_string_map(body["config"])
    state_name = body.get("initial_state")
    initial: TargetState | None = None
    if state_name is not None:
        initial = _INITIAL_STATES.get(str(state_name).upper())
        if initial is None:
            raise RestError(
                400, f"Invalid initial_state {state_name}: must be one of RUNNING, PAUSED, STOPPED"
            )
    _check_name(name)
    _check_and_put_name(name, config)
    check_overrides(config, ctx.settings.client_override_policy, ctx.settings.spark_allowed_masters)
    forward_body: dict[str, Any] = {"name": name, "config": config}
    if state_name is not None:
        forward_body["initial_state"] = str(state_name).upper()
    result = await ctx.call(
        request,
        lambda: ctx.herder.put_connector_config(name, config, False, initial).info,
        write=True,
        body=forward_body,
    )
    info = result.body if isinstance(result, Forwarded) else result
    return json(info, 201, {"Location": _location(request, name)})


@endpoint
async def get_connector(request: Request) -> Response:
    ctx = context(request)
    name = path_param(request, "connector")
    result = await ctx.call(request, lambda: ctx.herder.connector_info(name))
    return relay(result) if isinstance(result, Forwarded) else json(result)


@endpoint
async def delete_connector(request: Request) -> Response:
    ctx = context(request)
    name = path_param(request, "connector")
    result = await ctx.call(request, lambda: ctx.herder.delete_connector(name), write=True)
    return relay(result) if isinstance(result, Forwarded) else no_content()


@endpoint
async def get_config(request: Request) -> Response:
    ctx = context(request)
    name = path_param(request, "connector")
    result = await ctx.call(request, lambda: ctx.herder.connector_config(name))
    return relay(result) if isinstance(result, Forwarded) else json(result)


@endpoint
async def put_config(request: Request) -> Response:
    ctx = context(request)
    name = path_param(request, "connector")
    _check_name(name)
    config = as_string_map(await read_json(request, numbers_as_text=True))
    _check_and_put_name(name, config)
    check_overrides(config, ctx.settings.client_override_policy, ctx.settings.spark_allowed_masters)
    result = await ctx.call(
        request, lambda: ctx.herder.put_connector_config(name, config, True), write=True, body=config
    )
    if isinstance(result, Forwarded):
        created, info = result.status == 201, result.body
    else:
        created, info = result.created, result.info
    if created:
        return json(info, 201, {"Location": _location(request, name)})
    return json(info)


@endpoint
async def patch_config(request: Request) -> Response:
    ctx = context(request)
    name = path_param(request, "connector")
    patch = as_string_map(await read_json(request, numbers_as_text=True), allow_null=True)
    included = patch.get(NAME_CONFIG)
    if included is not None and included != name:
        raise RestError(
            400,
            f"Connector name configuration ({included}) doesn't match connector name in the URL ({name})",
        )
    check_overrides(
        {k: v for k, v in patch.items() if v is not None},
        ctx.settings.client_override_policy,
        ctx.settings.spark_allowed_masters,
    )
    result = await ctx.call(
        request, lambda: ctx.herder.patch_connector_config(name, patch), write=True, body=patch
    )
    return json(result.body if isinstance(result, Forwarded) else result)


def _simple_get(method: str, *, redacted: bool = False) -> Any:
    """``redacted``: the answer shows what the worker did with a resolved config (status traces)."""

    @endpoint
    async def handler(request: Request) -> Response:
        ctx = context(request)
        name = path_param(request, "connector")
        result = await ctx.call(request, lambda: getattr(ctx.herder, method)(name))
        if isinstance(result, Forwarded):
            return relay(result)
        return json(redact_json(result) if redacted else result)

    return handler


@endpoint
async def task_status(request: Request) -> Response:
    ctx = context(request)
    task = TaskId(path_param(request, "connector"), task_param(request))
    result = await ctx.call(request, lambda: ctx.herder.task_status(task))
    return relay(result) if isinstance(result, Forwarded) else json(redact_json(result))


@endpoint
async def restart_connector(request: Request) -> Response:
    ctx = context(request)
    name = path_param(request, "connector")
    include_tasks = bool_param(request, "includeTasks", False)
    only_failed = bool_param(request, "onlyFailed", False)
    result = await ctx.call(
        request, lambda: ctx.herder.restart_connector(name, include_tasks, only_failed), write=True
    )
    if isinstance(result, Forwarded):
        return relay(result)
    return no_content() if result is None else json(result, 202)


@endpoint
async def restart_task(request: Request) -> Response:
    ctx = context(request)
    task = TaskId(path_param(request, "connector"), task_param(request))
    result = await ctx.call(request, lambda: ctx.herder.restart_task(task), write=True)
    return relay(result) if isinstance(result, Forwarded) else no_content()


def _target_state(method: str, status: int) -> Any:
    @endpoint
    async def handler(request: Request) -> Response:
        ctx = context(request)
        name = path_param(request, "connector")
        result = await ctx.call(request, lambda: getattr(ctx.herder, method)(name), write=True)
        return relay(result) if isinstance(result, Forwarded) else no_content(status)

    return handler


@endpoint
async def active_topics(request: Request) -> Response:
    ctx = context(request)
    if not ctx.settings.topic_tracking_enable:
        raise RestError(403, "Topic tracking is disabled.")
    name = path_param(request, "connector")
    result = await ctx.call(request, lambda: ctx.herder.connector_active_topics(name))
    if isinstance(result, Forwarded):
        return relay(result)
    # A topic named by a placeholder (``"topic": "${file:…}"``) is the resolved value: masked here.
    return json(redact_json({name: {"topics": list(result)}}))


@endpoint
async def reset_topics(request: Request) -> Response:
    ctx = context(request)
    if not ctx.settings.topic_tracking_enable:
        raise RestError(403, "Topic tracking is disabled.")
    if not ctx.settings.topic_tracking_allow_reset:
        raise RestError(403, "Topic tracking reset is disabled.")
    name = path_param(request, "connector")
    result = await ctx.call(request, lambda: ctx.herder.reset_connector_active_topics(name), write=True)
    return relay(result) if isinstance(result, Forwarded) else no_content(202)


@endpoint
async def alter_offsets(request: Request) -> Response:
    ctx = context(request)
    name = path_param(request, "connector")
    body = as_object(await read_json(request), "ConnectorOffsets")
    offsets = body.get("offsets")
    if offsets is None or offsets == []:
        raise RestError(400, _OFFSETS_REQUIRED)
    if not isinstance(offsets, list) or not all(isinstance(o, dict) for o in offsets):
        raise RestError(400, "Cannot deserialize `ConnectorOffsets`: 'offsets' must be a list of objects")
    for item in offsets:
        offset = item.get("offset")
        if not isinstance(item.get("partition"), dict) or not (offset is None or isinstance(offset, dict)):
            raise RestError(400, "Each entry needs a 'partition' object and an 'offset' object or null")
    result = await ctx.call(
        request,
        lambda: ctx.herder.alter_connector_offsets(name, offsets),
        write=True,
        body={"offsets": offsets},
    )
    return relay(result) if isinstance(result, Forwarded) else json({"message": result})


@endpoint
async def reset_offsets(request: Request) -> Response:
    ctx = context(request)
    name = path_param(request, "connector")
    result = await ctx.call(request, lambda: ctx.herder.reset_connector_offsets(name), write=True)
    return relay(result) if isinstance(result, Forwarded) else json({"message": result})


async def _checked_signature(request: Request) -> RequestSignature | None:
    """The request's KIP-507 signature, verified by the herder when it requires one (else passed on)."""
    ctx = context(request)
    signature = RequestSignature.from_headers(await request.body(), request.headers)
    await run_in_threadpool(ctx.herder.verify_internal_request, signature)
    return signature


@endpoint
async def put_task_configs(request: Request) -> Response:
    ctx = context(request)
    name = path_param(request, "connector")
    # The signature is checked on the raw bytes before anything is parsed or looked up: a request
    # without the session key learns nothing (not even whether the connector exists) and costs no parsing.
    signature = await _checked_signature(request)
    body = await read_json(request, numbers_as_text=True)
    if not isinstance(body, list):
        raise RestError(400, "Cannot deserialize value of type `java.util.List` from a non-array value")
    configs = [as_string_map(item) for item in body]
    result = await ctx.call(
        request, lambda: ctx.herder.put_task_configs(name, configs, signature), write=True
    )
    return relay(result) if isinstance(result, Forwarded) else no_content()


@endpoint
async def fence_zombies(request: Request) -> Response:
    ctx = context(request)
    name = path_param(request, "connector")
    signature = await _checked_signature(request)
    try:
        result = await ctx.call(request, lambda: ctx.herder.fence_zombies(name, signature), write=True)
    except NotImplementedError:  # a herder without exactly-once support: a refusal, not a server fault
        raise RestError(
            400,
            f"Cannot fence zombie tasks of connector {name}: this worker does not "
            "support exactly-once source delivery (exactly.once.source.support)",
        ) from None
    return relay(result) if isinstance(result, Forwarded) else no_content()


routes = [
    Route("/connectors", list_connectors, methods=["GET"]),
    Route("/connectors", create_connector, methods=["POST"]),
    Route("/connectors/{connector}", get_connector, methods=["GET"]),
    Route("/connectors/{connector}", delete_connector, methods=["DELETE"]),
    Route("/connectors/{connector}/config", get_config, methods=["GET"]),
    Route("/connectors/{connector}/config", put_config, methods=["PUT"]),
    Route("/connectors/{connector}/config", patch_config, methods=["PATCH"]),
    Route("/connectors/{connector}/status", _simple_get("connector_status", redacted=True), methods=["GET"]),
    Route("/connectors/{connector}/tasks", _simple_get("task_configs"), methods=["GET"]),
    Route("/connectors/{connector}/tasks", put_task_configs, methods=["POST"]),
    Route("/connectors/{connector}/tasks-config", _simple_get("tasks_config"), methods=["GET"]),
    Route("/connectors/{connector}/tasks/{task}/status", task_status, methods=["GET"]),
    Route("/connectors/{connector}/tasks/{task}/restart", restart_task, methods=["POST"]),
    Route("/connectors/{connector}/restart", restart_connector, methods=["POST"]),
    Route("/connectors/{connector}/pause", _target_state("pause_connector", 202), methods=["PUT"]),
    Route("/connectors/{connector}/resume", _target_state("resume_connector", 202), methods=["PUT"]),
    Route("/connectors/{connector}/stop", _target_state("stop_connector", 204), methods=["PUT"]),
    Route("/connectors/{connector}/topics", active_topics, methods=["GET"]),
    Route("/connectors/{connector}/topics/reset", reset_topics, methods=["PUT"]),
    Route("/connectors/{connector}/offsets", _simple_get("connector_offsets"), methods=["GET"]),
    Route("/connectors/{connector}/offsets", alter_offsets, methods=["PATCH"]),
    Route("/connectors/{connector}/offsets", reset_offsets, methods=["DELETE"]),
    Route("/connectors/{connector}/fence", fence_zombies, methods=["PUT"]),
]
