"""The run events of Debezium 3.6's OpenLineage integration, built and sent with ``openlineage-python``.

What Debezium emits, and so this module (``io.debezium.openlineage.emitter.OpenLineageEmitter`` and the
callers in ``BaseSourceTask``, ``RelationalDatabaseSchema`` and the ``OpenLineage`` transform):

* the **job**: namespace ``openlineage.integration.job.namespace`` (default ``topic.prefix``), name
  ``<topic.prefix>.<task id>``; facets ``documentation`` (the description), ``jobType`` (STREAMING,
  DEBEZIUM, TASK), ``ownership`` and ``tags`` (source CONFIG) when configured;
* the **run**: one run id for the task's life (the ``__debezium.context.runId`` header's), facets
  ``processing_engine`` and ``debezium_config`` (every connector key as ``key=value``, secrets masked), and
  ``errorMessage`` on FAIL;
* START when the task starts, RUNNING once it runs, RUNNING with one **input dataset** each time the schema
  of a captured table is built (snapshot, DDL, recovery): namespace ``<mysql|mariadb>://<database.hostname>
  :<database.port>``, name ``<database>.<table>``, a ``schema`` facet (column name, type name, comment)
  and ``datasetType`` TABLE; RUNNING with one **output dataset** from the transform for each new topic or
  value schema: namespace ``kafka://<bootstrap>``, the topic, the value schema's fields (nested for structs,
  Connect's type names), ``datasetType`` STREAM; FAIL with the error when the task fails; COMPLETE when it
  stops.

Events are sent by one thread per task, so a slow lineage backend never holds up capture (Debezium sends
from an executor too); a failed send is logged and dropped, never fails the task.
"""

from __future__ import annotations

import logging
import queue
import re
import threading
import traceback
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import attr
from openlineage.client import event_v2
from openlineage.client.facet_v2 import (
    RunFacet,
    dataset_type_dataset,
    documentation_job,
    error_message_run,
    job_type_job,
    ownership_job,
    processing_engine_run,
    schema_dataset,
    tags_job,
)

from cdc import __version__
from cdc.openlineage.config import LineageSettings

__all__ = ["PRODUCER", "LineageEmitter", "emitter_for", "register", "unregister"]

log = logging.getLogger(__name__)

PRODUCER = f"urn:cdc:{__version__}"
"""cdc's identity as the events' producer (Debezium writes its GitHub tree URL), like ``source.version``."""

_SENSITIVE = re.compile(
    r".*secret$|.*password$|.*sasl\.jaas\.config$|.*basic\.auth\.user\.info|.*registry\.auth\.client-secret",
    re.IGNORECASE,
)
"""Debezium's ``DebeziumConfigFacet`` pattern: these keys' values are written ``********``."""
_MASK = "********"
_PENDING = 1000
"""Events waiting for the sender at most; more are dropped (and counted in the log), as Debezium's."""


@attr.define
class _DebeziumConfigRunFacet(RunFacet):
    """Debezium's ``debezium_config`` run facet: the connector's configuration, one ``key=value`` a line."""

    configs: list[str] = attr.field(factory=list)

    @staticmethod
    def _get_schema() -> str:
        return (
            "https://github.com/debezium/debezium/tree/main/debezium-openlineage/src/main/java/io/debezium/"
            "openlineage/facets/spec/DebeziumRunFacet.json"
        )


def config_lines(config: Mapping[str, str], secret_keys: Iterable[str] = ()) -> list[str]:
    """``key=value`` for every key, masked where Debezium masks and where cdc's definition types the key a
    password (``secret_keys``), so no secret reaches a lineage backend; in Debezium's (HashMap) order."""
    secrets = set(secret_keys)
    keys = list(config)
    return [
        f"{k}={_MASK if (k in secrets or _SENSITIVE.fullmatch(k)) else config[k]}"
        for k in (keys[i] for i in java_hash_order(keys))
    ]


def _hash_ordered(pairs: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """Debezium's tags and owners: collected into a HashMap (a repeated key fails Debezium's task; the
    last one wins here), iterated in its order."""
    merged = dict(pairs)
    keys = list(merged)
    return [(keys[i], merged[keys[i]]) for i in java_hash_order(keys)]


class LineageEmitter:
    """A task's emitter: builds the events and hands them to a sender thread, which gives them to
    ``transport`` (:func:`client_for`)."""

    def __init__(
        self,
        settings: LineageSettings,
        transport: Any,
        *,
        prefix: str,
        task_id: str,
        connector: str,
        run_id: str,
        config: Mapping[str, str],
        secret_keys: Iterable[str] = (),
    ) -> None:
        self.settings = settings
        self.transport = transport
        self.prefix = prefix
        self.task_id = task_id
        self.connector = connector
        self.run_id = run_id
        self.config = dict(config)
        self._config_lines = config_lines(self.config, secret_keys)
        self.input_namespace = (
            f"{connector}://{self.config.get('database.hostname')}:{self.config.get('database.port')}"
        )
        history = (self.config.get("schema.history.internal.kafka.bootstrap.servers") or "").split(",")
        servers = settings.kafka_bootstrap_servers or (history[0].strip() or "unknown:unknown")
        self.output_namespace = f"kafka://{servers}"
        self._seen_topics: set[str] = set()
        self._seen_schemas: set[Any] = set()
        self._lock = threading.Lock()
        self._queue: queue.Queue[Any] = queue.Queue(_PENDING)
        self._dropped = 0
        self._thread = threading.Thread(target=self._send_loop, name=f"openlineage-{prefix}", daemon=True)
        self._thread.start()

    # -- events ----------------------------------------------------------------------------------------
    def start(self) -> None:
        self._emit("START")

    def running(self) -> None:
        self._emit("RUNNING")

    def fail(self, error: BaseException) -> None:
        self._emit("FAIL", error=error)

    def complete(self) -> None:
        self._emit("COMPLETE")

    def table(self, database: str, name: str, columns: Sequence[tuple[str, str, str | None]]) -> None:
        """RUNNING with the input dataset of a captured table whose schema was (re)built: ``columns`` are
        (name, type name, comment)."""
        fields = [
            schema_dataset.SchemaDatasetFacetFields(name=n, type=t, description=d, fields=None)
            for n, t, d in columns
        ]
        dataset = event_v2.InputDataset(
            namespace=self.input_namespace,
            name=f"{database}.{name}",
            facets=self._dataset_facets(fields, "TABLE"),
        )
        self._emit("RUNNING", inputs=[dataset])

    def topic(self, topic: str, value_schema: Any) -> None:
        """RUNNING with the output dataset of ``topic`` the first time the transform sees it, with a value
        schema not seen before: what Debezium's transform does as written (a topic's later schema changes
        are not emitted again; Debezium remembers the last 64 topics and schemas, this task all of them)."""
        with self._lock:
            new_topic = topic not in self._seen_topics
            new_schema = value_schema not in self._seen_schemas
            self._seen_topics.add(topic)
            self._seen_schemas.add(value_schema)
        if not (new_topic and new_schema):
            return
        fields = [self._schema_field(f.name, f.schema) for f in value_schema.fields]
        dataset = event_v2.OutputDataset(
            namespace=self.output_namespace, name=topic, facets=self._dataset_facets(fields, "STREAM")
        )
        self._emit("RUNNING", outputs=[dataset])

    def _schema_field(self, name: str, schema: Any) -> Any:
        nested = [self._schema_field(f.name, f.schema) for f in schema.fields] if schema.fields else None
        return schema_dataset.SchemaDatasetFacetFields(
            name=name, type=str(schema.type.name), description=schema.doc, fields=nested
        )

    def _dataset_facets(self, fields: list[Any], kind: str) -> dict[str, Any]:
        return {
            "schema": schema_dataset.SchemaDatasetFacet(fields=fields, producer=PRODUCER),
            "datasetType": dataset_type_dataset.DatasetTypeDatasetFacet(
                datasetType=kind, subType="", producer=PRODUCER
            ),
        }

    def _job(self) -> Any:
        s = self.settings
        facets: dict[str, Any] = {
            "documentation": documentation_job.DocumentationJobFacet(
                description=s.description(self.prefix), producer=PRODUCER
            ),
            "jobType": job_type_job.JobTypeJobFacet(
                processingType="STREAMING", integration="DEBEZIUM", jobType="TASK", producer=PRODUCER
            ),
        }
        if s.job_owners:
            owners = [ownership_job.Owner(name=n, type=t) for n, t in _hash_ordered(s.job_owners)]
            facets["ownership"] = ownership_job.OwnershipJobFacet(owners=owners, producer=PRODUCER)
        if s.job_tags:
            tags = [
                tags_job.TagsJobFacetFields(key=k, value=v, source="CONFIG")
                for k, v in _hash_ordered(s.job_tags)
            ]
            facets["tags"] = tags_job.TagsJobFacet(tags=tags, producer=PRODUCER)
        return event_v2.Job(
            namespace=s.job_namespace or self.prefix, name=f"{self.prefix}.{self.task_id}", facets=facets
        )

    def _run(self, error: BaseException | None) -> Any:
        from importlib.metadata import version

        facets: dict[str, Any] = {
            "processing_engine": processing_engine_run.ProcessingEngineRunFacet(
                version=__version__,
                name="cdc",
                openlineageAdapterVersion=version("openlineage-python"),
                producer=PRODUCER,
            ),
            "debezium_config": _DebeziumConfigRunFacet(configs=list(self._config_lines), producer=PRODUCER),
        }
        if error is not None:
            facets["errorMessage"] = error_message_run.ErrorMessageRunFacet(
                message=str(error),
                programmingLanguage="Python",
                stackTrace="".join(traceback.format_exception(error)),
                producer=PRODUCER,
            )
        return event_v2.Run(runId=self.run_id, facets=facets)

    def _emit(
        self,
        state: str,
        inputs: list[Any] | None = None,
        outputs: list[Any] | None = None,
        error: BaseException | None = None,
    ) -> None:
        event = event_v2.RunEvent(
            eventType=getattr(event_v2.RunState, state),
            eventTime=datetime.now(UTC).isoformat(),
            run=self._run(error),
            job=self._job(),
            producer=PRODUCER,
            inputs=inputs or [],
            outputs=outputs or [],
        )
        try:
            self._queue.put_nowait(event)
        except queue.Full:
            self._dropped += 1
            if self._dropped in (1, 10, 100) or self._dropped % 1000 == 0:
                log.warning("Dropped %d OpenLineage events: the lineage backend is too slow", self._dropped)

    # -- sending ---------------------------------------------------------------------------------------
    def _send_loop(self) -> None:
        while True:
            event = self._queue.get()
            if event is None:
                return
            try:
                self.transport.emit(event)
            except Exception as exc:  # a lineage backend that is down must not stop the capture
                log.warning("Failed to emit OpenLineage event: %s", exc)

    def close(self, timeout_s: float = 10.0) -> None:
        """Send what is pending (up to ``timeout_s``), then stop the sender and close the transport."""
        try:
            self._queue.put(None, timeout=timeout_s)
        except queue.Full:
            log.warning("OpenLineage events still pending when the task stopped were dropped")
        self._thread.join(timeout_s)
        try:
            self.transport.close(timeout_s)
        except Exception:
            log.debug("Error closing the OpenLineage transport", exc_info=True)


_EMITTERS: dict[tuple[str, str], LineageEmitter] = {}
_EMITTERS_LOCK = threading.Lock()


def register(emitter: LineageEmitter) -> None:
    """Make ``emitter`` the one the transform finds for its task's records (their context headers)."""
    with _EMITTERS_LOCK:
        _EMITTERS[(emitter.prefix, emitter.task_id)] = emitter


def unregister(emitter: LineageEmitter) -> None:
    with _EMITTERS_LOCK:
        if _EMITTERS.get((emitter.prefix, emitter.task_id)) is emitter:
            del _EMITTERS[(emitter.prefix, emitter.task_id)]


def emitter_for(logical_name: str | None, task_id: str | None) -> LineageEmitter | None:
    if logical_name is None:
        return None
    with _EMITTERS_LOCK:
        return _EMITTERS.get((logical_name, task_id or "0"))


def new_run_id() -> str:
    """A time-ordered UUID, as Debezium's run id (the ``__debezium.context.runId`` header's)."""
    from cdc.ids import uuid7

    return str(uuid7())


def client_for(transport: Mapping[str, Any]) -> Any:
    """The ``openlineage-python`` transport of ``transport`` (its config), events handed to it as built:
    not through ``OpenLineageClient``, which merges in an ``openlineage.yml`` of the worker's directory or
    home and ``OPENLINEAGE__*`` variables and adds facets of its own (a client-version tag), none of which
    Debezium's events have."""
    from openlineage.client.transport import get_default_factory

    return get_default_factory().create(config=dict(transport))


def _java_string_hash(text: str) -> int:
    h = 0
    for unit in text.encode("utf-16-be").hex(" ", 2).split():
        h = (31 * h + int(unit, 16)) & 0xFFFFFFFF
    return h


def java_hash_order(keys: Sequence[str]) -> list[int]:
    """The positions of ``keys`` in the order a ``java.util.HashMap`` built by inserting them one by one
    iterates them (Debezium collects tags, owners and the configuration into one): by bucket, then by
    insertion within a bucket; 16 buckets, doubled whenever the map grows past three quarters."""
    capacity = 16
    while len(keys) > capacity * 3 // 4:
        capacity *= 2

    def bucket(i: int) -> tuple[int, int]:
        h = _java_string_hash(keys[i])
        return ((h ^ (h >> 16)) & (capacity - 1), i)

    return sorted(range(len(keys)), key=bucket)
