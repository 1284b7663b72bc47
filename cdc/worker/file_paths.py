"""``connector.file.allowed.paths``: where connector configs may make the worker open or create files.

A connector config given over REST can name files the worker opens: ``signal.file`` (read, and once
truncated), a file-based schema history (appended to, its directories created), a ``jdbc:sqlite:`` database
(created), ``snapshot.spark.state.dir``, key and trust stores (``database.ssl.keystore``, a JDBC URL's
``trustCertificateKeyStoreUrl``/``sslkey``…: read, and a client key presented to a server as the worker's
identity). Each connector lists its own (:meth:`Connector.files`); the stores of the Kafka and schema registry
clients a config sets (``producer.override.ssl.keystore.location``,
``value.converter.schema.registry.ssl.truststore.location``, ``signal.consumer.sasl.kerberos.keytab``…) are
the runtime's and listed here (:func:`client_files`). This module confines them all, the way Kafka's
``allowed.paths`` confines the file config providers:

* a **distributed** worker, where REST users are not the operator, allows only the directories its worker
  file lists (none by default: every such path is refused until the operator names a directory);
* a **standalone** worker allows every path by default (its connector files are the operator's own, and
  the seed configs name paths freely); listing directories confines it the same way.

Paths are compared after symlinks and ``..`` are resolved (``os.path.realpath``, which also resolves the
existing part of a path that does not exist yet), component by component, so ``/a/bc`` is not inside
``/a/b`` and ``/allowed/link -> /etc`` is outside. Checked at validate (an error on the key, so create and
update answer 400 naming it) and again when the worker starts a connector or a task, so a config stored
under another worker file does not open anything either. A symlink swapped in after the check by someone who
can write the allowed directory is not caught: that person already has the worker's files.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cdc.api.connector import Connector
from cdc.api.errors import ConfigError, ConnectError
from cdc.kafka.client_files import client_files

__all__ = [
    "ALLOWED_PATHS_CONFIG",
    "FilePolicy",
    "check_connector_files",
    "client_files",
    "file_violations",
    "parse_allowed",
]

ALLOWED_PATHS_CONFIG = "connector.file.allowed.paths"


def parse_allowed(value: Any, strict: bool = True) -> tuple[str, ...]:
    """The worker key's directories, resolved; ConfigError for a relative one, and (``strict``: when the
    worker starts) for a missing one, as Kafka's ``allowed.paths``. A directory removed later allows
    nothing more than before."""
    entries = value if isinstance(value, (list, tuple)) else str(value or "").split(",")
    out = []
    for raw in entries:
        text = str(raw).strip()
        if not text:
            continue
        if not os.path.isabs(text):
            raise ConfigError(f"Path {text} is not absolute", ALLOWED_PATHS_CONFIG, text)
        if strict and not os.path.exists(text):
            raise ConfigError(f"Path {text} does not exist", ALLOWED_PATHS_CONFIG, text)
        out.append(os.path.realpath(text))
    return tuple(out)


@dataclass(frozen=True)
class FilePolicy:
    """``allowed`` None: every path (a standalone worker without the key); else only paths inside them."""

    allowed: tuple[str, ...] | None = None

    @classmethod
    def from_worker(cls, worker: Mapping[str, Any] | None, strict: bool = False) -> FilePolicy:
        """The policy of a worker's parsed config (the key's default says the mode: None standalone,
        empty distributed); ``strict`` when the worker starts."""
        if worker is None:
            return cls(None)
        return cls.of(worker.get(ALLOWED_PATHS_CONFIG), strict)

    @classmethod
    def of(cls, allowed: Any, strict: bool = False) -> FilePolicy:
        """The policy of the key's parsed value (None: a standalone worker without it)."""
        return cls(None if allowed is None else parse_allowed(allowed, strict))

    def refusal(self, path: str) -> str | None:
        """Why ``path`` may not be opened, or None when it may."""
        if self.allowed is None:
            return None
        resolved = os.path.realpath(path)
        if any(
            resolved == root or resolved.startswith(root.rstrip(os.sep) + os.sep) for root in self.allowed
        ):
            return None
        if not self.allowed:
            return (
                f"The path {path} is not allowed to be accessed: this worker opens files named by connector "
                f"configs only inside the directories its {ALLOWED_PATHS_CONFIG} lists, and it lists none"
            )
        shown = path if resolved == os.path.abspath(path) else f"{path} (resolved: {resolved})"
        return f"The path {shown} is not allowed to be accessed: it is outside {ALLOWED_PATHS_CONFIG}"


def file_violations(
    connector: Connector, props: Mapping[str, str], policy: FilePolicy
) -> list[tuple[str, str]]:
    """(key, message) for every file ``props`` name outside ``policy``."""
    if policy.allowed is None:
        return []
    out = []
    for use in [*connector.files(props), *client_files(props)]:
        message = policy.refusal(use.path)
        if message is not None:
            out.append((use.key, message))
    return out


def check_connector_files(
    connector: Connector, configs: Sequence[Mapping[str, str]], policy: FilePolicy
) -> None:
    """ConnectError naming the key when any of ``configs`` (a connector's, a task's) names a file outside
    the worker's ``policy``: what the worker runs before it starts a connector or a task."""
    for config in configs:
        for key, message in file_violations(connector, config, policy):
            raise ConnectError(f"{key}: {message}")
