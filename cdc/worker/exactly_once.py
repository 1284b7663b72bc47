"""Exactly-once source delivery (KIP-618): the transactional task loop and the preflight checks.

With ``exactly.once.source.support=enabled`` on a distributed worker every source task runs as
:class:`ExactlyOnceWorkerSourceTask`, the at-least-once loop of :mod:`cdc.worker.source_task` with other
hooks:

* its producer is transactional (``transactional.id=<group.id>-<connector>-<task>``, idempotent,
  ``acks=all``); ``init_transactions`` runs *before* the task starts and reads its offsets, which fences
  any zombie instance of the same task (a worker that was kill -9'd, or lost its assignment in a
  rebalance but still runs) and aborts the zombie's open transaction, so the offsets read next are
  final;
* the records of a transaction **and** the source offsets for them go through that one producer: the
  offsets as Connect's exact key/value bytes (``["conn",{partition}]`` / the offset map) to the
  worker's offsets topic, on the partition Java's murmur2 partitioner picks (as the offset store
  writes them). ``commit_transaction`` makes both visible at once to ``read_committed`` readers — the
  worker's offset store among them (:func:`cdc.worker.stores.kafka.create_kafka_stores`);
* ``transaction.boundary`` decides when a transaction ends: ``poll`` after every non-empty batch,
  ``interval`` every ``transaction.boundary.interval.ms`` (default: ``offset.flush.interval.ms``), or
  ``connector`` when the task asks through its :class:`~cdc.api.connector.TransactionContext`
  (a batch is cut after the record named, or ended when no record is named);
* no committer thread and no scheduled offset flush: offsets are committed only inside transactions.
  A clean stop commits the open transaction (``poll``/``interval``) or aborts it (``connector``: the
  connector did not say it was complete), as Connect does;
* a failed commit aborts the transaction and fails the task: its records and offsets are discarded
  together, and the restarted task resumes from the last committed offsets — nothing is lost and, for
  ``read_committed`` consumers, nothing is repeated. A fenced producer (a newer instance of the task
  took over) fails the zombie with a message saying so.

Simplification against Connect, on purpose: Connect's leader also fences every producer of a
connector's *previous* task generation (``tasks-fencing-<n>`` in the config topic, an admin
``fenceProducers`` round) before a new generation starts, which matters when ``tasks.max`` shrinks. Here
fencing is per transactional id, at task start — enough for connectors whose task count does not change
(the MySQL source has one task).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from enum import Enum
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer

from cdc.api.connector import (
    ConnectorTransactionBoundaries,
    ExactlyOnceSupport,
    SourceConnector,
    TransactionContext,
)
from cdc.api.errors import ConfigError, ConnectError
from cdc.api.records import SourceRecord
from cdc.kafka.produce import produce
from cdc.worker.settings import WorkerSettings
from cdc.worker.source_task import WorkerSourceTask

__all__ = [
    "ExactlyOnceSettings",
    "ExactlyOnceWorkerSourceTask",
    "TransactionBoundary",
    "exactly_once_producer",
    "refuse_standalone",
    "transactional_id",
    "validate_exactly_once",
]

log = logging.getLogger(__name__)

OffsetPlacement = Callable[[bytes], tuple[str, int]]
"""Where an offsets-topic key goes: the topic and its murmur2 partition."""


class TransactionBoundary(str, Enum):
    POLL = "poll"
    INTERVAL = "interval"
    CONNECTOR = "connector"


def transactional_id(group_id: str, connector: str, task: int) -> str:
    """Connect's transactional id of a source task's producer."""
    return f"{group_id}-{connector}-{task}"


def exactly_once_producer(base: Mapping[str, Any], txn_id: str) -> dict[str, Any]:
    """A task's producer settings made transactional (what Connect forces, whatever the overrides say)."""
    out = dict(base)
    # librdkafka refuses message.timeout.ms > transaction.timeout.ms with transactions; left unset, it
    # follows transaction.timeout.ms.
    for key in ("delivery.timeout.ms", "message.timeout.ms"):
        out.pop(key, None)
    out.update({"transactional.id": txn_id, "enable.idempotence": True, "acks": "all"})
    return out


class ExactlyOnceSettings:
    def __init__(
        self,
        transactional_id: str,
        offset_placement: OffsetPlacement,
        boundary: str = "poll",
        interval_ms: int = 60000,
        commit_timeout_ms: int = 60000,
    ) -> None:
        self.transactional_id = transactional_id
        self.offset_placement = offset_placement
        self.boundary = TransactionBoundary(boundary.strip().lower())
        self.interval_ms = interval_ms
        self.commit_timeout_ms = commit_timeout_ms


class _ConnectorTransactions(TransactionContext):
    """What the task asked for: commit or abort, after a given record or after the current batch."""

    def __init__(self) -> None:
        self.after_record: dict[int, tuple[str, SourceRecord]] = {}
        self.after_batch: str | None = None

    def commit_transaction(self, record: SourceRecord | None = None) -> None:
        self._request("commit", record)

    def abort_transaction(self, record: SourceRecord | None = None) -> None:
        self._request("abort", record)

    def _request(self, what: str, record: SourceRecord | None) -> None:
        if record is None:
            self.after_batch = what
        else:
            self.after_record[id(record)] = (what, record)  # the record object is kept alive here


def _kafka_error(exc: KafkaException) -> KafkaError | None:
    err = exc.args[0] if exc.args else None
    return err if isinstance(err, KafkaError) else None


def _fenced(err: KafkaError | None) -> bool:
    return err is not None and err.code() in (
        KafkaError._FENCED,
        KafkaError.PRODUCER_FENCED,
        KafkaError.INVALID_PRODUCER_EPOCH,
    )


class ExactlyOnceWorkerSourceTask(WorkerSourceTask):
    uses_committer = False

    def __init__(self, *args: Any, exactly_once: ExactlyOnceSettings, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.eos = exactly_once
        self._in_transaction = False
        self._last_commit = time.monotonic()
        self._uncommitted: list[tuple[SourceRecord, Any]] = []
        self._connector_txn = (
            _ConnectorTransactions() if exactly_once.boundary is TransactionBoundary.CONNECTOR else None
        )
        self._broken = False
        self.transactions_committed = 0
        self.transactions_aborted = 0

    # -- hooks --------------------------------------------------------------------------------------------
    def _new_producer(self) -> Producer:
        producer = super()._new_producer()
        deadline = time.monotonic() + max(self.eos.commit_timeout_ms / 1000, 10.0)
        while True:
            try:
                producer.init_transactions(max(1.0, deadline - time.monotonic()))
                break
            except KafkaException as exc:
                err = _kafka_error(exc)
                if (
                    err is None
                    or not err.retriable()
                    or time.monotonic() > deadline
                    or self.stopping.is_set()
                ):
                    raise ConnectError(
                        f"Failed to initialize the transactional producer of task {self.id} "
                        f"(transactional.id={self.eos.transactional_id}): {exc}"
                    ) from exc
                log.warning("%s init_transactions failed, retrying: %s", self, exc)
        log.info(
            "%s Transactional producer %s initialized; earlier instances of this task are fenced",
            self,
            self.eos.transactional_id,
        )
        return producer

    def _transaction_context(self) -> TransactionContext | None:
        return self._connector_txn

    def _begin_batch(self) -> None:
        self._begin()

    def _send(self, records: list[SourceRecord]) -> None:
        txn = self._connector_txn
        if txn is None or not txn.after_record:
            super()._send(records)
            return
        start = 0
        for i, record in enumerate(records):  # cut the batch after each record the connector named
            request = txn.after_record.pop(id(record), None)
            if request is None:
                continue
            super()._send(records[start : i + 1])
            start = i + 1
            self._end_transaction(request[0])
            self._begin()
        if start < len(records):
            super()._send(records[start:])

    def _batch_dispatched(self) -> None:
        boundary = self.eos.boundary
        if boundary is TransactionBoundary.POLL:
            if self._in_transaction:
                self._commit_transaction()
        elif boundary is TransactionBoundary.INTERVAL:
            if time.monotonic() - self._last_commit >= self.eos.interval_ms / 1000:
                self._commit_transaction()
        else:
            assert self._connector_txn is not None
            what, self._connector_txn.after_batch = self._connector_txn.after_batch, None
            if what is not None:
                self._end_transaction(what)

    def _final_commit(self) -> None:
        if self._broken:
            return
        if self.eos.boundary is TransactionBoundary.CONNECTOR:
            if self._in_transaction:
                log.info("%s Aborting the open connector-defined transaction on stop", self)
                self._abort()
            return
        self._commit_transaction()

    def commit_offsets(self) -> None:
        """Offsets are committed only inside transactions (a REST or herder request commits the open one)."""
        self._commit_transaction()

    def _make_callback(self, original: SourceRecord) -> Callable[[KafkaError | None, Any], None]:
        def on_delivery(err: KafkaError | None, msg: Any) -> None:
            if err is not None:
                if self._delivery_error is None:
                    self._delivery_error = err
                return
            self._uncommitted.append((original, msg))  # commit_record once the transaction commits

        return on_delivery

    def close(self) -> None:
        self._stop_task()
        if self.producer is not None and self._in_transaction:
            try:
                self._abort()
            except Exception:
                log.exception("%s Failed to abort the open transaction", self)
        if self.producer is not None:
            self.producer.flush(self.settings.flush_timeout_ms / 1000)

    # -- transactions -----------------------------------------------------------------------------------
    def _begin(self) -> None:
        if self._in_transaction:
            return
        assert self.producer is not None
        self.producer.begin_transaction()
        self._in_transaction = True

    def _end_transaction(self, what: str) -> None:
        if what == "abort":
            self._abort()
        else:
            self._commit_transaction()

    def _commit_transaction(self) -> None:
        """Write the pending offsets into the open transaction and commit it (records and offsets at once)."""
        producer = self.producer
        if producer is None:
            return
        snapshot = self.offset_writer.snapshot()
        if not self._in_transaction:
            if not snapshot:
                self._last_commit = time.monotonic()
                return
            self._begin()  # offsets of records every one of which was dropped by transforms
        for key, value in snapshot.items():
            topic, partition = self.eos.offset_placement(key)
            produce(producer, topic, key=key, value=value, partition=partition)
        started = time.monotonic()
        deadline = started + self.eos.commit_timeout_ms / 1000
        while True:
            try:
                producer.commit_transaction(max(1.0, deadline - time.monotonic()))
                break
            except KafkaException as exc:
                err = _kafka_error(exc)
                if err is not None and err.retriable() and time.monotonic() < deadline:
                    log.warning("%s Committing the transaction failed, retrying: %s", self, exc)
                    continue
                self.metrics.offset_commit(False, started)
                self._fail_transaction(exc, err)
        self.metrics.offset_commit(True, started)  # records and offsets, in one transaction
        self._in_transaction = False
        self._last_commit = time.monotonic()
        self.transactions_committed += 1
        self._check_delivery()
        done, self._uncommitted = self._uncommitted, []
        for original, msg in done:
            try:
                self.task.commit_record(original, msg)
            except Exception:
                log.exception("%s Exception thrown while calling task.commit_record()", self)
        try:
            self.task.commit()
        except Exception:
            log.exception("%s Exception thrown while calling task.commit()", self)

    def _fail_transaction(self, exc: KafkaException, err: KafkaError | None) -> None:
        self._broken = True  # no final commit: the task fails, and resumes from committed offsets
        if _fenced(err):
            self._in_transaction = False  # a fenced producer can neither commit nor abort
            raise ConnectError(
                f"Task {self.id} was fenced: another producer with "
                f"transactional.id={self.eos.transactional_id} started (a newer instance of this task, e.g. "
                "after a rebalance or a restart). This instance is a zombie and stops; its uncommitted "
                "records and offsets are discarded."
            ) from exc
        if err is None or err.txn_requires_abort():
            try:
                self._abort()
            except KafkaException:
                log.exception("%s Failed to abort the transaction after a failed commit", self)
        raise ConnectError(
            f"Failed to commit the transaction of task {self.id}: {exc}. Its records and offsets were "
            "discarded; the task resumes from its last committed offsets after a restart."
        ) from exc

    def _abort(self) -> None:
        assert self.producer is not None
        self.offset_writer.snapshot()  # the aborted records' offsets are dropped with them
        self._uncommitted = []
        self._delivery_error = None
        try:
            self.producer.abort_transaction(self.eos.commit_timeout_ms / 1000)
        finally:
            self._in_transaction = False
            self.transactions_aborted += 1


# ------------------------------------------------------------------------------------------ validation

_NO_PREFLIGHT = (
    "The connector does not implement the API required for preflight validation of exactly-once source "
    "support. Please consult the documentation for the connector to determine whether it supports "
    'exactly-once semantics, and then consider reconfiguring the connector to use the value "requested" '
    "for this property (which will disable this preflight check and allow the connector to be created)."
)
_UNSUPPORTED = "The connector does not support exactly-once semantics with the provided configuration."
_WORKER_DISABLED = "This worker does not have exactly-once source support enabled."
_STANDALONE = (
    " Exactly-once source delivery is available only on distributed workers (Kafka Connect's standalone "
    "mode does not support it)."
)
_NO_BOUNDARIES = (
    "The connector does not support connector-defined transaction boundaries with the given configuration. "
    "Please reconfigure it to use a different transaction boundary definition."
)


def _unexpected(exc: Exception) -> str:
    message = str(exc).strip()
    return "An unexpected error occurred during validation" + (
        f": {message}" if message else "; please see the worker logs for more details."
    )


def validate_exactly_once(
    connector: SourceConnector, props: Mapping[str, str], worker: WorkerSettings | None
) -> dict[str, list[str]]:
    """Connect's ``DistributedHerder`` preflight checks: errors by key (``exactly.once.support``,
    ``transaction.boundary``, ``transaction.boundary.interval.ms``).

    ``worker`` is the worker's config (None: validated outside a worker, as if distributed and enabled).
    ``props`` are the connector's raw strings: a value the type check refuses is skipped here, not raised.
    """
    errors: dict[str, list[str]] = {}
    support = str(props.get("exactly.once.support", "requested")).strip().lower()
    if support == "required":
        if worker is not None:
            if not worker.distributed:
                errors.setdefault("exactly.once.support", []).append(_WORKER_DISABLED + _STANDALONE)
            elif worker.eos_mode != "enabled":
                errors.setdefault("exactly.once.support", []).append(_WORKER_DISABLED)
        try:
            answer = connector.exactly_once_support(props)
            if answer is None:
                errors.setdefault("exactly.once.support", []).append(_NO_PREFLIGHT)
            elif answer is not ExactlyOnceSupport.SUPPORTED:
                errors.setdefault("exactly.once.support", []).append(_UNSUPPORTED)
        except Exception as exc:
            log.error("Failed while validating connector support for exactly-once semantics", exc_info=exc)
            errors.setdefault("exactly.once.support", []).append(_unexpected(exc))
    boundary = str(props.get("transaction.boundary", "poll")).strip().lower()
    if boundary == "connector":
        try:
            if (
                connector.can_define_transaction_boundaries(props)
                is not ConnectorTransactionBoundaries.SUPPORTED
            ):
                errors.setdefault("transaction.boundary", []).append(_NO_BOUNDARIES)
        except Exception as exc:
            log.error(
                "Failed while validating connector support for defining its own transaction boundaries",
                exc_info=exc,
            )
            errors.setdefault("transaction.boundary", []).append(_unexpected(exc))
    interval = props.get("transaction.boundary.interval.ms")
    if interval is not None and str(interval).strip():
        try:
            if int(str(interval).strip()) < 0:
                errors.setdefault("transaction.boundary.interval.ms", []).append(
                    "Transaction boundary interval cannot be negative"
                )
        except ValueError:
            pass  # the type check reports it
    return errors


def refuse_standalone(worker: WorkerSettings) -> None:
    """Standalone workers cannot run exactly-once: refuse a worker config that asks for it."""
    mode = worker.eos_mode
    if mode != "disabled":
        raise ConfigError(
            f"exactly.once.source.support={mode} is not supported in standalone mode: exactly-once source "
            "delivery needs a distributed worker (connect-distributed), whose offsets topic can be written "
            "in the same Kafka transactions as the records. Remove the setting, or run a distributed worker."
        )
