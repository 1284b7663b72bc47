"""The connector's schema history store, opened as Debezium opens it, on the worker's brokers if need be.

Debezium requires the history's brokers; the seed 1.x config misspells that key, so when a config names
none the worker's own brokers stand in, and the history's clients then get the worker's security
settings too (:func:`cdc.kafka.clients.history_client_defaults`). The task and the ``cdc snapshot``
command open it the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cdc.history.factory import history_from_config
from cdc.history.store import SchemaHistory
from cdc.kafka.clients import HISTORY_CLIENT_PREFIXES, connector_client_overrides, history_client_defaults

__all__ = ["HISTORY_BOOTSTRAP_KEYS", "open_history"]

HISTORY_BOOTSTRAP_KEYS = (
    "schema.history.internal.kafka.bootstrap.servers",
    "database.history.kafka.bootstrap.servers",
)


def open_history(config: Mapping[str, str], worker_clients: Mapping[str, str]) -> SchemaHistory:
    """The started history store of a connector ``config``; ``worker_clients``: the worker's client
    settings (``bootstrap.servers``, security, the client override policy …; empty when there is no
    worker). The connector's own ``schema.history.internal.{producer,consumer}.*`` go through the worker's
    policy as ``producer.override.*`` do."""
    connector_client_overrides(config, HISTORY_CLIENT_PREFIXES, worker_clients)
    props: dict[str, Any] = {**history_client_defaults(worker_clients, config), **config}
    if not any(props.get(key) for key in HISTORY_BOOTSTRAP_KEYS) and worker_clients.get("bootstrap.servers"):
        props["schema.history.internal.kafka.bootstrap.servers"] = worker_clients["bootstrap.servers"]
    history = history_from_config(props)
    # Create the topic with Debezium's settings before anything could let the broker auto-create it
    # with the default (expiring) retention.
    if not history.storage_exists():
        history.initialize_storage()
    history.start()
    return history
