"""Requests between workers: a follower's task configs go to the leader, signed under ``sessioned``.

Only the leader writes task configs. A follower that runs a connector sends the configs its connector
generated to the leader's internal ``POST /connectors/{name}/tasks`` (Connect's
``DistributedHerder.reconfigureConnector``); with the ``sessioned`` protocol the raw body is signed with the
group's session key (KIP-507) and the leader refuses a missing (400) or wrong (403) signature.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import requests

from cdc.api.errors import ConnectError
from cdc.worker.errors import BadRequestError, ForbiddenError, RebalanceNeededError
from cdc.worker.stores.base import SessionKey

__all__ = ["check_signature", "send_task_configs"]

MISSING_SIGNATURE = "Internal request missing required signature"
INVALID_SIGNATURE = "Internal request contained invalid signature."


def send_task_configs(
    leader_url: str,
    connector: str,
    configs: list[dict[str, str]],
    key: SessionKey | None,
    timeout: float = 30.0,
) -> None:
    """POST ``configs`` to the leader (``forward=false``: the leader must not forward it again)."""
    body = json.dumps(configs, separators=(",", ":")).encode("utf-8")
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if key is not None:
        from cdc.worker.rest.signature import sign

        headers.update(sign(key.key, body, key.algorithm))
    url = f"{leader_url.rstrip('/')}/connectors/{quote(connector, safe='')}/tasks"
    from cdc.worker.rest.client import peer_client  # https peers: the worker's trust store

    try:
        response = peer_client().post(
            url, data=body, headers=headers, params={"forward": "false"}, timeout=timeout
        )
    except requests.RequestException as exc:
        raise ConnectError(
            f"Could not send task configs of {connector} to the leader {leader_url}: {exc}"
        ) from exc
    if response.status_code >= 300:
        raise ConnectError(
            f"The leader {leader_url} refused the task configs of {connector}: "
            f"{response.status_code} {response.text[:500]}"
        )


def check_signature(key: SessionKey | None, signature: Any, allowed: list[str] | None = None) -> None:
    """The check of an internal request under ``sessioned`` (``signature``: a RequestSignature), as
    Connect's ``DistributedHerder.requestNotSignedProperly``: missing 400, an algorithm outside
    ``allowed`` (``inter.worker.verification.algorithms``) 400, wrong 403."""
    if signature is None:
        raise BadRequestError(MISSING_SIGNATURE)
    if allowed is not None and signature.algorithm not in allowed:
        raise BadRequestError(
            f"This worker does not support the '{signature.algorithm}' key signing algorithm used by other "
            f"workers. This worker is currently configured to use: [{', '.join(allowed)}]. "
            "Check that all workers' configuration files permit the same set of signature algorithms, "
            "and correct any misconfigured worker and restart it."
        )
    if key is None:
        raise RebalanceNeededError("Request cannot be completed because the session key is not known yet")
    if not signature.is_valid(key.key):
        raise ForbiddenError(INVALID_SIGNATURE)
