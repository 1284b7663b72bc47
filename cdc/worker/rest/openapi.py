"""An OpenAPI 3.0 description of the REST API, served at ``GET /openapi.json``.

Kafka Connect does not serve this; it is ours, for clients and for fuzzing the API (schemathesis). It is
a static document: when a route changes, change it here too (a unit test checks both list the same
routes and methods).
"""

from __future__ import annotations

from typing import Any

__all__ = ["OPENAPI"]

JSON = dict[str, Any]


def _ref(name: str) -> JSON:
    return {"$ref": f"#/components/schemas/{name}"}


def _body(schema: JSON, description: str) -> JSON:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


_ERR = _body(_ref("Error"), "Error")
_STRINGS: JSON = {"type": "object", "additionalProperties": {"type": "string"}}
# Jackson reads numbers and booleans into a Map<String, String> as their text.
_SCALAR: JSON = {"anyOf": [{"type": "string"}, {"type": "number"}, {"type": "boolean"}]}
_SCALAR_OR_NULL: JSON = {"anyOf": [*_SCALAR["anyOf"], {"type": "string", "nullable": True}]}


def _op(summary: str, ok: dict[str, JSON], errors: tuple[int, ...], **extra: Any) -> JSON:
    responses: JSON = dict(ok)
    for code in errors:
        responses[str(code)] = _ERR
    responses.setdefault("500", _ERR)
    return {"summary": summary, "responses": responses, **extra}


def _ok(code: int, schema: JSON | None, description: str = "OK") -> dict[str, JSON]:
    return {str(code): _body(schema, description) if schema is not None else {"description": description}}


def _param(name: str, where: str, schema: JSON, description: str = "", required: bool = False) -> JSON:
    param: JSON = {"name": name, "in": where, "schema": schema, "required": required or where == "path"}
    if description:
        param["description"] = description
    return param


_CONNECTOR = _param("connector", "path", {"type": "string"}, "Connector name")
_TASK = _param("task", "path", {"type": "integer", "minimum": 0}, "Task id")
_PLUGIN = _param("plugin", "path", {"type": "string"}, "Connector class: FQCN, simple name or alias")
_LOGGER = _param("logger", "path", {"type": "string"}, "Logger name or namespace; 'root' for the root")
_FORWARD = _param("forward", "query", {"type": "boolean"}, "Set between workers when forwarding")
_JSON_IN = (400, 415)


def _json_in(schema: JSON, required: bool = True) -> JSON:
    return {"required": required, "content": {"application/json": {"schema": schema}}}


_SCHEMAS: JSON = {
    "Error": {
        "type": "object",
        "required": ["error_code", "message"],
        "properties": {"error_code": {"type": "integer"}, "message": {"type": "string"}},
    },
    "ServerInfo": {
        "type": "object",
        "properties": {
            "version": {"type": "string"},
            "commit": {"type": "string"},
            "kafka_cluster_id": {"type": "string", "nullable": True},
        },
    },
    "WorkerStatus": {
        "type": "object",
        "required": ["status", "message"],
        "properties": {
            "status": {"type": "string", "enum": ["healthy", "starting", "unhealthy"]},
            "message": {"type": "string"},
        },
    },
    "ConnectorTaskId": {
        "type": "object",
        "properties": {"connector": {"type": "string"}, "task": {"type": "integer"}},
    },
    "ConnectorInfo": {
        "type": "object",
        "required": ["name", "config", "tasks"],
        "properties": {
            "name": {"type": "string"},
            "config": _STRINGS,
            "tasks": {"type": "array", "items": _ref("ConnectorTaskId")},
            "type": {"type": "string", "enum": ["source", "sink", "unknown"]},
        },
    },
    "State": {
        "type": "object",
        "properties": {
            "state": {"type": "string"},
            "worker_id": {"type": "string"},
            "trace": {"type": "string"},
        },
    },
    "TaskState": {
        "type": "object",
        "properties": {
            "id": {"type": "integer"},
            "state": {"type": "string"},
            "worker_id": {"type": "string"},
            "trace": {"type": "string"},
        },
    },
    "ConnectorStateInfo": {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "connector": _ref("State"),
            "tasks": {"type": "array", "items": _ref("TaskState")},
            "type": {"type": "string"},
        },
    },
    "TaskInfo": {
        "type": "object",
        "properties": {"id": _ref("ConnectorTaskId"), "config": _STRINGS},
    },
    "CreateConnectorRequest": {
        "type": "object",
        "required": ["name", "config"],
        "properties": {
            "name": {"type": "string"},
            "config": {"type": "object", "additionalProperties": _SCALAR},
            "initial_state": {"type": "string", "enum": ["RUNNING", "PAUSED", "STOPPED"]},
        },
    },
    "ConfigMap": {"type": "object", "additionalProperties": _SCALAR},
    "ConfigPatch": {"type": "object", "additionalProperties": _SCALAR_OR_NULL},
    "ConnectorOffset": {
        "type": "object",
        "required": ["partition"],
        "properties": {
            "partition": {"type": "object"},
            "offset": {"type": "object", "nullable": True},
        },
    },
    "ConnectorOffsets": {
        "type": "object",
        "required": ["offsets"],
        "properties": {"offsets": {"type": "array", "items": _ref("ConnectorOffset")}},
    },
    "Message": {"type": "object", "properties": {"message": {"type": "string"}}},
    "PluginInfo": {
        "type": "object",
        "properties": {
            "class": {"type": "string"},
            "type": {"type": "string"},
            "version": {"type": "string"},
        },
    },
    "ConfigKeyInfo": {"type": "object", "additionalProperties": True},
    "ConfigInfos": {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "error_count": {"type": "integer"},
            "groups": {"type": "array", "items": {"type": "string"}},
            "configs": {"type": "array", "items": {"type": "object"}},
        },
    },
    "LoggerLevel": {
        "type": "object",
        "properties": {
            "level": {"type": "string"},
            "last_modified": {"type": "integer", "nullable": True},
        },
    },
    "LevelRequest": {
        "type": "object",
        "required": ["level"],
        "properties": {
            "level": {
                "type": "string",
                "enum": ["ALL", "TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "OFF"],
            }
        },
    },
}

_C = "/connectors/{connector}"

_PATHS: JSON = {
    "/": {"get": _op("Worker version and Kafka cluster id", _ok(200, _ref("ServerInfo")), ())},
    "/health": {
        "get": _op(
            "Worker health",
            {
                "200": _body(_ref("WorkerStatus"), "Healthy"),
                "503": _body(_ref("WorkerStatus"), "Starting"),
                "500": _body(_ref("WorkerStatus"), "Unhealthy"),
            },
            (),
        )
    },
    "/metrics": {
        "get": _op(
            "The worker's, its tasks' and its connectors' metrics in the Prometheus text format",
            {"200": {"description": "Metrics", "content": {"text/plain": {"schema": {"type": "string"}}}}},
            (),
        )
    },
    "/ui": {
        "get": _op(
            "The status page (HTML; it refreshes itself from /ui/status)",
            {"200": {"description": "The page", "content": {"text/html": {"schema": {"type": "string"}}}}},
            (),
        )
    },
    "/ui/status": {
        "get": _op(
            "What the status page shows: connectors, tasks, lag, snapshot progress, recent history",
            _ok(200, {"type": "object"}),
            (),
        )
    },
    "/connectors": {
        "get": _op(
            "List connectors (names, or a map expanded with status and/or info)",
            _ok(200, {"oneOf": [{"type": "array", "items": {"type": "string"}}, {"type": "object"}]}),
            (),
            parameters=[
                _param(
                    "expand",
                    "query",
                    {"type": "array", "items": {"type": "string", "enum": ["status", "info"]}},
                    "Repeatable",
                ),
                _FORWARD,
            ],
        ),
        "post": _op(
            "Create a connector",
            _ok(201, _ref("ConnectorInfo"), "Created; Location names the connector"),
            (*_JSON_IN, 409),
            parameters=[_FORWARD],
            requestBody=_json_in(_ref("CreateConnectorRequest")),
        ),
    },
    _C: {
        "parameters": [_CONNECTOR],
        "get": _op("Connector info", _ok(200, _ref("ConnectorInfo")), (404, 409), parameters=[_FORWARD]),
        "delete": _op("Delete a connector", _ok(204, None, "Deleted"), (404, 409), parameters=[_FORWARD]),
    },
    f"{_C}/config": {
        "parameters": [_CONNECTOR],
        "get": _op("Connector config", _ok(200, _STRINGS), (404, 409), parameters=[_FORWARD]),
        "put": _op(
            "Create or replace a connector's config",
            {**_ok(200, _ref("ConnectorInfo"), "Updated"), **_ok(201, _ref("ConnectorInfo"), "Created")},
            (*_JSON_IN, 409),
            parameters=[_FORWARD],
            requestBody=_json_in(_ref("ConfigMap")),
        ),
        "patch": _op(
            "Patch a connector's config (null removes a key)",
            _ok(200, _ref("ConnectorInfo")),
            (*_JSON_IN, 404, 409),
            parameters=[_FORWARD],
            requestBody=_json_in(_ref("ConfigPatch")),
        ),
    },
    f"{_C}/status": {
        "parameters": [_CONNECTOR],
        "get": _op("Connector and task states", _ok(200, _ref("ConnectorStateInfo")), (404,)),
    },
    f"{_C}/tasks": {
        "parameters": [_CONNECTOR],
        "get": _op(
            "Task configs",
            _ok(200, {"type": "array", "items": _ref("TaskInfo")}),
            (404, 409),
            parameters=[_FORWARD],
        ),
        "post": _op(
            "Internal: a follower's task configs for the leader (signed)",
            _ok(204, None, "Accepted"),
            (400, 403, 404, 409, 415),
            parameters=[_FORWARD],
            requestBody=_json_in({"type": "array", "items": _STRINGS}),
        ),
    },
    f"{_C}/tasks-config": {
        "parameters": [_CONNECTOR],
        "get": _op(
            "Task configs by task id (deprecated)",
            _ok(200, {"type": "object", "additionalProperties": _STRINGS}),
            (404, 409),
            parameters=[_FORWARD],
        ),
    },
    f"{_C}/tasks/{{task}}/status": {
        "parameters": [_CONNECTOR, _TASK],
        "get": _op("Task state", _ok(200, _ref("TaskState")), (404,)),
    },
    f"{_C}/tasks/{{task}}/restart": {
        "parameters": [_CONNECTOR, _TASK],
        "post": _op("Restart a task", _ok(204, None, "Restarted"), (404, 409), parameters=[_FORWARD]),
    },
    f"{_C}/restart": {
        "parameters": [_CONNECTOR],
        "post": _op(
            "Restart a connector (and, with includeTasks, its tasks)",
            {
                **_ok(202, _ref("ConnectorStateInfo"), "Restart requested"),
                **_ok(204, None, "Connector restarted"),
            },
            (404, 409),
            parameters=[
                _param("includeTasks", "query", {"type": "boolean", "default": False}),
                _param("onlyFailed", "query", {"type": "boolean", "default": False}),
                _FORWARD,
            ],
        ),
    },
    f"{_C}/pause": {
        "parameters": [_CONNECTOR],
        "put": _op("Pause a connector", _ok(202, None, "Accepted"), (404,)),
    },
    f"{_C}/resume": {
        "parameters": [_CONNECTOR],
        "put": _op("Resume a connector", _ok(202, None, "Accepted"), (404,)),
    },
    f"{_C}/stop": {
        "parameters": [_CONNECTOR],
        "put": _op("Stop a connector", _ok(204, None, "Stopped"), (404, 409), parameters=[_FORWARD]),
    },
    f"{_C}/topics": {
        "parameters": [_CONNECTOR],
        "get": _op(
            "Topics the connector has used",
            _ok(200, {"type": "object", "additionalProperties": {"type": "object"}}),
            (403, 404),
        ),
    },
    f"{_C}/topics/reset": {
        "parameters": [_CONNECTOR],
        "put": _op("Forget the connector's topics", _ok(202, None, "Accepted"), (403, 404)),
    },
    f"{_C}/offsets": {
        "parameters": [_CONNECTOR],
        "get": _op("Connector offsets", _ok(200, _ref("ConnectorOffsets")), (400, 404)),
        "patch": _op(
            "Alter offsets (the connector must be STOPPED)",
            _ok(200, _ref("Message")),
            (*_JSON_IN, 404, 409),
            parameters=[_FORWARD],
            requestBody=_json_in(_ref("ConnectorOffsets")),
        ),
        "delete": _op(
            "Reset offsets (the connector must be STOPPED)",
            _ok(200, _ref("Message")),
            (400, 404, 409),
            parameters=[_FORWARD],
        ),
    },
    f"{_C}/fence": {
        "parameters": [_CONNECTOR],
        "put": _op(
            "Internal: fence zombie source tasks (signed)",
            _ok(204, None, "Fenced"),
            (400, 403, 404, 409),
            parameters=[_FORWARD],
        ),
    },
    "/connector-plugins": {
        "get": _op(
            "Installed plugins",
            _ok(200, {"type": "array", "items": _ref("PluginInfo")}),
            (),
            parameters=[_param("connectorsOnly", "query", {"type": "boolean", "default": True})],
        )
    },
    "/connector-plugins/{plugin}/config": {
        "parameters": [_PLUGIN],
        "get": _op(
            "A plugin's config definition",
            _ok(200, {"type": "array", "items": _ref("ConfigKeyInfo")}),
            (400, 404),
        ),
    },
    "/connector-plugins/{plugin}/config/validate": {
        "parameters": [_PLUGIN],
        "put": _op(
            "Validate a connector config",
            _ok(200, _ref("ConfigInfos")),
            (*_JSON_IN, 404),
            requestBody=_json_in(_ref("ConfigMap")),
        ),
    },
    "/admin/loggers": {
        "get": _op(
            "Loggers with an explicit level, and the root logger",
            _ok(200, {"type": "object", "additionalProperties": _ref("LoggerLevel")}),
            (404,),
        )
    },
    "/admin/loggers/{logger}": {
        "parameters": [_LOGGER],
        "get": _op("A logger's level", _ok(200, _ref("LoggerLevel")), (404,)),
        "put": _op(
            "Set the level of a logger namespace",
            {
                **_ok(200, {"type": "array", "items": {"type": "string"}}, "Affected loggers"),
                **_ok(204, None, "Cluster-wide change requested"),
            },
            (*_JSON_IN, 404),
            parameters=[_param("scope", "query", {"type": "string", "enum": ["worker", "cluster"]})],
            requestBody=_json_in(_ref("LevelRequest")),
        ),
    },
    "/openapi.json": {
        "get": {"summary": "This document", "responses": {"200": {"description": "OpenAPI 3.0 document"}}}
    },
}

OPENAPI: JSON = {
    "openapi": "3.0.3",
    "info": {
        "title": "cdc worker REST API (Kafka Connect compatible)",
        "version": "3.9",
        "description": "Kafka Connect's REST API. Every error body is {error_code, message}.",
    },
    "paths": _PATHS,
    "components": {"schemas": _SCHEMAS},
}
