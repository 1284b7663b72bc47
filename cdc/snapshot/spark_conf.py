"""Who may set which Spark setting: a connector (a REST user) a few sizes, the worker file the rest.

A connector's ``snapshot.spark.conf.<spark key>`` reaches the Spark session the worker process creates
(and, for the first session of the process, the command line of the driver's JVM). Spark settings can run
code on the worker host (``spark.driver.extraJavaOptions=-XX:OnOutOfMemoryError=<command>``), load jars,
classes, native libraries, listeners and plugins, pick the Python interpreter of the executors, or bind the
driver's unauthenticated RPC to any interface. So a connector may set only :data:`CONNECTOR_SPARK_KEYS`
(parallelism, memory, partitions, shuffle, executor counts and cores, time-outs), each with a plain value
(digits, letters, ``.``, ``_``, ``-``: ``4``, ``2g``, ``120s``, ``true``); every other Spark key is refused
at validate, on create and again when a task starts, naming the key.

The worker file gives the rest, as ``snapshot.spark.conf.<spark key>`` in the worker properties (any Spark
key but ``spark.master``): they apply to every Spark snapshot the worker runs, under the connector's keys
(a connector's allowed key wins over the worker's default for the same key). The master is the
connector's ``snapshot.spark.master``: a local one (``local``, ``local[N]``, ``local[*]``, ``local[N,F]``:
Spark inside the worker process) always, any other only when the worker file lists it in
``snapshot.spark.allowed.masters``.

``cdc snapshot`` (the command an operator runs with files of their own) is not a REST user: its
``--conf``/``--properties-file`` settings pass whole (:func:`cdc.cli.snapshot.spark_settings`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from cdc.api.errors import ConfigError

__all__ = [
    "CONNECTOR_SPARK_KEYS",
    "SPARK_CONF_PREFIX",
    "WORKER_MASTERS_KEY",
    "allowed_masters",
    "connector_spark_errors",
    "is_local_master",
    "master_error",
    "session_conf",
]

SPARK_CONF_PREFIX = "snapshot.spark.conf."
"""Spark settings, in a connector config (the allowed ones) and in the worker file (any)."""

WORKER_MASTERS_KEY = "snapshot.spark.allowed.masters"
"""The worker file's list of non-local Spark masters connectors may name in ``snapshot.spark.master``."""

MASTER_KEY = "snapshot.spark.master"

CONNECTOR_SPARK_KEYS: frozenset[str] = frozenset(
    {
        # parallelism and partitions
        "spark.default.parallelism",
        "spark.sql.shuffle.partitions",
        "spark.task.cpus",
        "spark.task.maxFailures",
        "spark.locality.wait",
        # memory
        "spark.driver.memory",
        "spark.driver.maxResultSize",
        "spark.executor.memory",
        "spark.executor.memoryOverhead",
        "spark.memory.fraction",
        "spark.memory.storageFraction",
        "spark.memory.offHeap.enabled",
        "spark.memory.offHeap.size",
        # shuffle
        "spark.shuffle.compress",
        "spark.shuffle.spill.compress",
        "spark.shuffle.file.buffer",
        "spark.reducer.maxSizeInFlight",
        # executors on a cluster the worker allows
        "spark.executor.cores",
        "spark.executor.instances",
        "spark.cores.max",
        "spark.dynamicAllocation.enabled",
        "spark.dynamicAllocation.minExecutors",
        "spark.dynamicAllocation.maxExecutors",
        "spark.dynamicAllocation.initialExecutors",
        # time-outs
        "spark.network.timeout",
        "spark.executor.heartbeatInterval",
    }
)
"""The Spark keys a connector may set (docs/snapshots.md, "Spark settings")."""

_PLAIN_VALUE = re.compile(r"[A-Za-z0-9._-]{1,64}")
_LOCAL = re.compile(r"local(\[(\*|\d+)(,\d+)?\])?")


def is_local_master(master: str) -> bool:
    """``local``, ``local[N]``, ``local[*]``, ``local[N,F]``: Spark inside this process (``local-cluster``
    starts processes: not local)."""
    return _LOCAL.fullmatch(master.strip()) is not None


def allowed_masters(worker: Mapping[str, object]) -> tuple[str, ...]:
    """The worker file's ``snapshot.spark.allowed.masters`` (comma-separated)."""
    raw = worker.get(WORKER_MASTERS_KEY)
    items: Iterable[object] = raw if isinstance(raw, (list, tuple)) else str(raw or "").split(",")
    return tuple(s for s in (str(i).strip() for i in items) if s)


def master_error(master: str, allowed: Iterable[str]) -> str | None:
    """Why a connector may not use ``master`` on a worker that allows ``allowed``, or None."""
    text = master.strip()
    if is_local_master(text) or text in set(allowed):
        return None
    return (
        f"The Spark master '{text}' is not allowed on this worker: a connector may name a local master "
        f"(local[*], local[N]) or one the worker file lists in {WORKER_MASTERS_KEY}"
    )


def _key_error(key: str, value: str) -> str | None:
    spark_key = key[len(SPARK_CONF_PREFIX) :]
    if not spark_key.startswith("spark."):
        return (
            f"{key}: not a Spark setting ({SPARK_CONF_PREFIX} must be followed by a key that starts "
            "with 'spark.')"
        )
    if spark_key not in CONNECTOR_SPARK_KEYS:
        return (
            f"Invalid value for configuration {key}: the Spark setting {spark_key} cannot be set by a "
            f"connector; only the worker file may set it ({SPARK_CONF_PREFIX}{spark_key} in the worker "
            "properties). A connector may set: " + ", ".join(sorted(CONNECTOR_SPARK_KEYS))
        )
    if not _PLAIN_VALUE.fullmatch(value.strip()):
        return (
            f"Invalid value {value} for configuration {key}: a number, size, duration or boolean "
            "(letters, digits, '.', '_', '-') is expected"
        )
    return None


def connector_spark_errors(props: Mapping[str, object]) -> dict[str, str]:
    """Validate errors by key for the connector's ``snapshot.spark.conf.*`` keys."""
    errors: dict[str, str] = {}
    for key, value in props.items():
        if key.startswith(SPARK_CONF_PREFIX):
            message = _key_error(key, str(value))
            if message:
                errors[key] = message
    return errors


def session_conf(props: Mapping[str, object], worker: Mapping[str, object]) -> dict[str, str]:
    """The Spark settings of a connector's session: the worker file's, then the connector's allowed ones.

    ``props``: the connector config; ``worker``: the worker's entries (the task context's
    ``worker_client_config``, which carries the worker file's ``snapshot.spark.*``). Raises
    :class:`ConfigError` naming the key for a setting the connector may not make, a master the worker does
    not allow, or ``spark.master`` in the worker file.
    """
    errors = connector_spark_errors(props)
    if errors:
        raise ConfigError("; ".join(errors[k] for k in sorted(errors)))
    master = props.get(MASTER_KEY)
    if master is not None:
        message = master_error(str(master), allowed_masters(worker))
        if message:
            raise ConfigError(f"{MASTER_KEY}: {message}")
    conf = {k[len(SPARK_CONF_PREFIX) :]: str(v) for k, v in worker.items() if k.startswith(SPARK_CONF_PREFIX)}
    if "spark.master" in conf:
        raise ConfigError(
            f"{SPARK_CONF_PREFIX}spark.master in the worker file: connectors name their master in "
            f"{MASTER_KEY}; list the masters they may use in {WORKER_MASTERS_KEY}"
        )
    wrong = sorted(k for k in conf if not k.startswith("spark."))
    if wrong:
        raise ConfigError(
            f"{', '.join(SPARK_CONF_PREFIX + k for k in wrong)} in the worker file: not Spark settings "
            f"({SPARK_CONF_PREFIX} must be followed by a key that starts with 'spark.')"
        )
    conf.update(
        {k[len(SPARK_CONF_PREFIX) :]: str(v) for k, v in props.items() if k.startswith(SPARK_CONF_PREFIX)}
    )
    return conf
