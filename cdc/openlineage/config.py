"""The ``openlineage.integration.*`` keys as typed settings, and the transport ``openlineage.yml`` names.

Debezium reads ``openlineage.integration.config.file.path`` with OpenLineage's Java client, so the files
users have are in the Java client's spelling (``transport.location``, ``topicName``, ``properties``,
``auth.apiKey``, ``timeoutInMillis``); :func:`load_transport` reads that spelling (and the Python client's)
into a transport of ``openlineage-python``. Only the transports both clients have are accepted: ``console``,
``file``, ``http``, ``kafka`` (and ``noop``); any other is refused with the list.

Security: the file is opened by the worker, so its path goes through ``connector.file.allowed.paths``
(:meth:`cdc.mysql.connector.MySqlConnector.files`), and so do the files *it* names (the ``file`` transport's
log, a Kafka transport's key and trust stores), checked here with the worker's policy before anything is
opened. A transport's URL or brokers make the worker connect where the file says (docs/security.md).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from cdc.api.errors import ConfigError

__all__ = [
    "CONFIG_FILE_KEY",
    "LineageSettings",
    "load_transport",
    "parse_pairs",
    "transport_config",
]

CONFIG_FILE_KEY = "openlineage.integration.config.file.path"
TRANSPORTS = ("console", "file", "http", "kafka", "noop")

Refusal = Callable[[str], "str | None"]
"""Why the worker may not open a path (None: it may): :meth:`cdc.worker.file_paths.FilePolicy.refusal`."""


def parse_pairs(value: str | None, key: str) -> tuple[tuple[str, str], ...]:
    """``a=b,c=d`` (Debezium's tags and owners: a comma-separated list of ``key=value``), trimmed. Debezium
    fails the task on an entry without ``=`` (an index error); it is refused here when the config is
    validated."""
    out = []
    for entry in (value or "").split(","):
        entry = entry.strip()
        if not entry:
            continue
        parts = entry.split("=")
        if len(parts) < 2 or not parts[0].strip():
            raise ConfigError(
                f"'{entry}' is not a key=value pair (a comma-separated list of them)", key, value
            )
        out.append((parts[0].strip(), parts[1].strip()))
    return tuple(out)


@dataclass(frozen=True)
class LineageSettings:
    """The seven ``openlineage.integration.*`` keys Debezium 3.6 reads (``enabled`` off: none of the rest)."""

    enabled: bool = False
    config_file: str = "./openlineage.yml"
    job_namespace: str | None = None
    """None: the job's namespace is ``topic.prefix``, as Debezium's."""
    job_description: str | None = None
    """None or blank: ``Debezium CDC job for <topic.prefix>``, Debezium's text."""
    job_tags: tuple[tuple[str, str], ...] = ()
    job_owners: tuple[tuple[str, str], ...] = ()
    kafka_bootstrap_servers: str | None = None
    """The output datasets' namespace, ``kafka://<this>``; None: the first of
    ``schema.history.internal.kafka.bootstrap.servers``."""

    def description(self, prefix: str) -> str:
        if self.job_description is None or not self.job_description.strip():
            return f"Debezium CDC job for {prefix}"
        return self.job_description


def _checked(path: str, refusal: Refusal, what: str) -> str:
    if "://" in path:  # the Python client would hand a URL to fsspec: a remote write a REST user chose
        raise ConfigError(f"{what} must be a local file path, not {path}", CONFIG_FILE_KEY, path)
    message = refusal(path)
    if message is not None:
        raise ConfigError(f"{what}: {message}", CONFIG_FILE_KEY, path)
    return path


def transport_config(raw: Any, refusal: Refusal) -> dict[str, Any]:
    """The Python client's transport config for the ``transport`` section of an ``openlineage.yml``."""
    if not isinstance(raw, Mapping):
        raise ConfigError("The OpenLineage configuration has no 'transport' section", CONFIG_FILE_KEY, None)
    kind = str(raw.get("type") or "").strip().lower()
    if kind not in TRANSPORTS:
        raise ConfigError(
            f"OpenLineage transport type '{kind}' is not supported: cdc supports {', '.join(TRANSPORTS)}",
            CONFIG_FILE_KEY,
            kind,
        )
    if kind in ("console", "noop"):
        return {"type": kind}
    if kind == "file":
        location = raw.get("location") or raw.get("log_file_path")
        if not location:
            raise ConfigError("The file transport needs a 'location'", CONFIG_FILE_KEY, None)
        path = _checked(os.path.expanduser(str(location)), refusal, "The file transport's location")
        # The Java client appends one event a line to one file; the Python client's default is a new file
        # per event.
        return {"type": "file", "log_file_path": path, "append": bool(raw.get("append", True))}
    if kind == "http":
        url = str(raw.get("url") or "")
        if urlparse(url).scheme not in ("http", "https"):
            raise ConfigError(f"The http transport needs an http(s) url, not '{url}'", CONFIG_FILE_KEY, url)
        out: dict[str, Any] = {"type": "http", "url": url, "endpoint": raw.get("endpoint", "api/v1/lineage")}
        if "timeoutInMillis" in raw:
            out["timeout"] = float(raw["timeoutInMillis"]) / 1000
        elif "timeout" in raw:
            out["timeout"] = float(raw["timeout"])
        auth = raw.get("auth")
        if isinstance(auth, Mapping):
            key = auth.get("apiKey", auth.get("api_key"))
            out["auth"] = {"type": str(auth.get("type") or "api_key"), "api_key": key}
        headers = raw.get("headers", raw.get("custom_headers"))
        if isinstance(headers, Mapping):
            out["custom_headers"] = {str(k): str(v) for k, v in headers.items()}
        if raw.get("compression"):
            out["compression"] = str(raw["compression"])
        # The Java client's http transport sends once; the Python client's retries five times with back-off,
        # which would hold a stopping task for seconds when the backend is down. A file's own `retry` wins.
        out["retry"] = dict(raw["retry"]) if isinstance(raw.get("retry"), Mapping) else {"total": 0}
        return out
    return _kafka(raw, refusal)


def _kafka(raw: Mapping[str, Any], refusal: Refusal) -> dict[str, Any]:
    from cdc.kafka.client_files import client_files
    from cdc.kafka.clients import to_librdkafka

    topic = raw.get("topicName") or raw.get("topic")
    if not topic:
        raise ConfigError("The kafka transport needs a 'topicName'", CONFIG_FILE_KEY, None)
    properties = raw.get("properties") or raw.get("config") or {}
    if not isinstance(properties, Mapping):
        raise ConfigError("The kafka transport's 'properties' must be a map", CONFIG_FILE_KEY, None)
    java = {str(k): str(v) for k, v in properties.items()}
    # key and trust stores the producer would read are confined as a connector config's own are
    for use in client_files(java):
        _checked(use.path, refusal, f"The kafka transport's {use.key}")
    # the Java serializers a Java producer needs mean nothing to librdkafka
    java = {k: v for k, v in java.items() if not k.endswith(("key.serializer", "value.serializer"))}
    out: dict[str, Any] = {"type": "kafka", "topic": str(topic), "config": to_librdkafka(java), "flush": True}
    if raw.get("messageKey"):
        out["messageKey"] = str(raw["messageKey"])
    return out


def load_transport(settings: LineageSettings, refusal: Refusal) -> dict[str, Any]:
    """Read ``openlineage.integration.config.file.path`` (already allowed by the worker, checked again
    here: a task started outside the worker is checked the same way) into a transport config."""
    import yaml

    path = _checked(os.path.expanduser(settings.config_file), refusal, "The OpenLineage configuration")
    if not os.path.isfile(path):
        raise ConfigError(f"The OpenLineage configuration file {path} does not exist", CONFIG_FILE_KEY, path)
    with open(path, encoding="utf-8") as f:
        try:
            content = yaml.safe_load(f)
        except yaml.YAMLError as exc:
            raise ConfigError(
                f"The OpenLineage configuration file {path} is not YAML ({type(exc).__name__})",
                CONFIG_FILE_KEY,
                path,
            ) from None
    if not isinstance(content, Mapping):
        raise ConfigError(f"The OpenLineage configuration file {path} is not a map", CONFIG_FILE_KEY, path)
    return transport_config(content.get("transport"), refusal)
