"""What the worker file decides about connector configs, at the REST API: violations are config errors.

* ``connector.client.config.override.policy``: overrides a policy forbids, and client settings no connector
  may make (:func:`cdc.kafka.clients.override_violations`: ``producer.override.*``, ``signal.consumer.*``,
  ``schema.history.internal.{producer,consumer}.*`` …).
* ``snapshot.spark.allowed.masters``: a ``snapshot.spark.master`` the worker does not allow
  (:mod:`cdc.snapshot.spark_conf`).

Connect's ``AbstractHerder.validateClientOverrides`` adds one error per forbidden ``producer.override.*``,
``consumer.override.*`` or ``admin.override.*`` key to the validate answer, so create/update fail with
400 and the usual "Connector configuration is invalid …" message, and validate reports them per field.
The worker refuses the same overrides again when it builds a task (a config written under another
policy), see :func:`cdc.kafka.clients.connector_client_settings`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cdc.config import mask_secrets
from cdc.kafka.clients import override_violations
from cdc.snapshot.spark_conf import MASTER_KEY, master_error
from cdc.worker import validation
from cdc.worker.rest.errors import RestError

__all__ = ["add_override_errors", "check_overrides"]


def violations(
    config: Mapping[str, Any], policy: str, spark_masters: Sequence[str] = ()
) -> list[tuple[str, str]]:
    """``(key, message)`` for each setting of ``config`` the worker file does not allow."""
    out = override_violations(config, policy)
    master = config.get(MASTER_KEY)
    if master is not None:
        message = master_error(str(master), spark_masters)
        if message:
            out.append((MASTER_KEY, message))
    return out


def add_override_errors(
    infos: dict[str, Any], config: Mapping[str, Any], policy: str, spark_masters: Sequence[str] = ()
) -> dict[str, Any]:
    """``infos`` (a ConfigInfos) with the worker file's errors added to the keys they concern."""
    found = violations(config, policy, spark_masters)
    if not found:
        return infos
    by_name = {entry["value"]["name"]: entry for entry in infos.get("configs", [])}
    for key, message in found:
        entry = by_name.get(key)
        if entry is None:
            entry = {
                "definition": {
                    "name": key,
                    "type": "STRING",
                    "required": False,
                    "default_value": None,
                    "importance": "LOW",
                    "documentation": "",
                    "group": None,
                    "width": "NONE",
                    "display_name": key,
                    "dependents": [],
                    "order": -1,
                },
                "value": {
                    "name": key,
                    "value": mask_secrets({key: config.get(key)})[key],
                    "recommended_values": [],
                    "errors": [],
                    "visible": True,
                },
            }
            infos.setdefault("configs", []).append(entry)
            by_name[key] = entry
        entry["value"]["errors"].append(message)
    infos["error_count"] = int(infos.get("error_count", 0)) + len(found)
    return infos


def check_overrides(config: Mapping[str, Any], policy: str, spark_masters: Sequence[str] = ()) -> None:
    """400 with Connect's invalid-config message when ``config`` sets what the worker file forbids."""
    if not violations(config, policy, spark_masters):
        return
    try:
        infos = validation.validate({k: str(v) for k, v in config.items() if v is not None})
    except Exception:  # no usable class: report the overrides alone
        infos = {"error_count": 0, "configs": []}
    infos = add_override_errors(infos, config, policy, spark_masters)
    raise RestError(400, validation.invalid_config_message(infos))
