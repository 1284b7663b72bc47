"""``connector.client.config.override.policy`` at the REST API: overrides a policy forbids are config errors.

Connect's ``AbstractHerder.validateClientOverrides`` adds one error per forbidden ``producer.override.*``,
``consumer.override.*`` or ``admin.override.*`` key to the validate answer, so create/update fail with
400 and the usual "Connector configuration is invalid …" message, and validate reports them per field.
The worker refuses the same overrides again when it builds a task (a config written under another
policy), see :func:`cdc.kafka.clients.connector_client_settings`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cdc.config import mask_secrets
from cdc.kafka.clients import override_violations
from cdc.worker import validation
from cdc.worker.rest.errors import RestError

__all__ = ["add_override_errors", "check_overrides"]


def add_override_errors(infos: dict[str, Any], config: Mapping[str, Any], policy: str) -> dict[str, Any]:
    """``infos`` (a ConfigInfos) with the policy's errors added to the override keys."""
    violations = override_violations(config, policy)
    if not violations:
        return infos
    by_name = {entry["value"]["name"]: entry for entry in infos.get("configs", [])}
    for key, message in violations:
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
    infos["error_count"] = int(infos.get("error_count", 0)) + len(violations)
    return infos


def check_overrides(config: Mapping[str, Any], policy: str) -> None:
    """400 with Connect's invalid-config message when ``config`` sets an override the policy forbids."""
    if not override_violations(config, policy):
        return
    try:
        infos = validation.validate({k: str(v) for k, v in config.items() if v is not None})
    except Exception:  # no usable class: report the overrides alone
        infos = {"error_count": 0, "configs": []}
    raise RestError(400, validation.invalid_config_message(add_override_errors(infos, config, policy)))
