"""How a chunk's records reach Kafka: in one Kafka transaction per chunk (exactly once) or at least once.

**Exactly once** (``exactly_once``, the default). Each chunk attempt writes its records in a transaction
of its own, committed only once every record of the chunk was produced:

* The transactional id is the chunk's within the run (:meth:`RunIds.chunk`): a retry of the chunk (Spark's
  task retry after an executor died, or the chunk re-submitted by a resumed run) opens the same id, and
  ``init_transactions`` *fences* the earlier attempt: its open transaction is aborted and, if its executor
  still lives (a zombie), its next write fails. A ``read_committed`` consumer never sees the records of an
  attempt that did not commit.
* The commit also marks the chunk done, atomically: the transaction commits an offset for a consumer group
  named like the transactional id (``send_offsets_to_transaction``), whose metadata holds the chunk's row
  count. An attempt first looks for that mark (after fencing, so the answer is stable) and, when an earlier
  attempt committed the chunk and then died before Spark heard of it, writes nothing and reports that
  attempt's count. So a chunk is committed at most once, whatever dies when.
* The driver, when a run stops or fails, fences the chunks it had in flight (:func:`fence`), so their open
  transactions are aborted at once instead of holding back ``read_committed`` consumers (the last stable
  offset) until the transaction timeout; and, once a run completed, deletes the marks' consumer groups.

The run's id (:attr:`RunIds.run`) is random and kept in the resume file, so a resumed run fences and finds
its own chunks, and a new run of the same connector never mistakes an earlier run's marks for its own.

**At least once** (``at_least_once``): one idempotent producer per Python worker, shared by its chunks (as
before transactions were used). A retried chunk repeats its records; the reduced topic is unchanged, and
the summary counts the records written twice from the topics' end offsets (:func:`end_offsets`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from cdc.snapshot.progress import ProgressState
from cdc.snapshot.writer import RecordWriter, WriterSpec

__all__ = [
    "AT_LEAST_ONCE",
    "DELIVERIES",
    "EXACTLY_ONCE",
    "ChunkTransaction",
    "ChunkWriter",
    "RunDelivery",
    "RunIds",
    "delete_marks",
    "end_offsets",
    "fence",
    "new_run_id",
    "task_attempt",
    "topic_names",
]

log = logging.getLogger(__name__)

EXACTLY_ONCE = "exactly_once"
AT_LEAST_ONCE = "at_least_once"
DELIVERIES = (EXACTLY_ONCE, AT_LEAST_ONCE)

T = TypeVar("T")

READ_AHEAD_BYTES = 32 << 20
"""How much of a chunk :meth:`ChunkWriter.read_ahead` holds while its transaction opens, at most."""

TRANSACTION_TIMEOUT_MS = 600_000
"""A chunk's transaction may stay open this long (brokers cap it at ``transaction.max.timeout.ms``, 15 min
by default); ``producer.override.transaction.timeout.ms`` sets another."""

# The connection settings of the producer that a consumer and an admin client take too.
_SHARED = (
    "bootstrap.servers",
    "security.",
    "sasl.",
    "ssl.",
    "socket.",
    "broker.",
    "client.dns",
    "oauthbearer",
)


def new_run_id() -> str:
    return uuid.uuid4().hex[:12]


@dataclass(frozen=True)
class RunIds:
    """The names of one run's transactions and marks: ``<client id>.<run id>.<chunk id>``."""

    client_id: str
    run: str

    def chunk(self, chunk_id: str) -> str:
        return f"{self.client_id}.{self.run}.{chunk_id}"

    def reconcile(self) -> str:
        return f"{self.client_id}.{self.run}.reconcile"


def connection_config(producer: Mapping[str, Any]) -> dict[str, Any]:
    """The producer's connection and security settings, for a consumer or an admin client."""
    return {k: v for k, v in producer.items() if k.startswith(_SHARED)}


def transactional_producer_config(producer: Mapping[str, Any], transactional_id: str) -> dict[str, Any]:
    config = dict(producer)
    config["transactional.id"] = transactional_id
    config.setdefault("transaction.timeout.ms", TRANSACTION_TIMEOUT_MS)
    # librdkafka refuses a message timeout longer than the transaction's
    config["delivery.timeout.ms"] = min(
        int(config.get("delivery.timeout.ms", 2**31 - 1)), int(config["transaction.timeout.ms"])
    )
    config.pop("message.timeout.ms", None)
    return config


class ChunkTransaction:
    """One attempt of one chunk in its own transaction: :meth:`open` fences the earlier attempts and
    begins; :meth:`committed_rows` tells whether an earlier attempt committed the chunk already;
    :meth:`commit` flushes, marks the chunk done and commits; :meth:`close` always."""

    def __init__(self, spec: WriterSpec, transactional_id: str, timeout: float = 120.0) -> None:
        self.id = transactional_id
        self.timeout = timeout
        self.writer = RecordWriter(spec, transactional_producer_config(spec.producer, transactional_id))
        self._consumer: Any = None
        self._open = False

    def _group_consumer(self) -> Any:
        if self._consumer is None:
            from confluent_kafka import Consumer

            self._consumer = Consumer(
                {
                    **connection_config(self.writer.spec.producer),
                    "group.id": self.id,
                    "isolation.level": "read_committed",
                    "enable.auto.commit": False,
                }
            )
        return self._consumer

    def open(self) -> None:
        producer = self.writer.producer
        producer.init_transactions(self.timeout)
        producer.begin_transaction()
        self._open = True

    def committed_rows(self, topic: str) -> int | None:
        """The row count an earlier attempt committed for this chunk (its mark on ``topic``), or None."""
        from confluent_kafka import TopicPartition

        (tp,) = self._group_consumer().committed([TopicPartition(topic, 0)], timeout=self.timeout)
        if tp.error is not None:
            from confluent_kafka import KafkaException

            raise KafkaException(tp.error)
        if tp.offset < 0:
            return None
        return int(json.loads(tp.metadata or "{}").get("rows", 0))

    def commit(self, topic: str | None, rows: int) -> None:
        """Flush, mark the chunk done (on ``topic``, the topic of its first record; None: no record was
        written, nothing to mark) and commit."""
        from confluent_kafka import TopicPartition

        self.writer.flush()
        producer = self.writer.producer
        if topic is not None:
            mark = TopicPartition(topic, 0, 1, json.dumps({"rows": rows}))
            metadata = self._group_consumer().consumer_group_metadata()
            producer.send_offsets_to_transaction([mark], metadata, self.timeout)
        producer.commit_transaction(self.timeout)
        self._open = False

    def close(self) -> None:
        """After a failure: abort the transaction (what a killed executor cannot do, its retry's fencing
        does), so ``read_committed`` consumers are not held back until the transaction times out."""
        if self._open:
            try:
                self.writer.producer.abort_transaction(min(self.timeout, 30.0))
            except Exception as exc:
                log.warning("Could not abort the transaction %s (a retry fences it): %s", self.id, exc)
            self._open = False
        if self._consumer is not None:
            with contextlib.suppress(Exception):
                self._consumer.close()


def fence(spec: WriterSpec, transactional_ids: Iterable[str], timeout: float = 10.0) -> list[str]:
    """Fence every id (abort its open transaction); returns the ids that could not be fenced."""
    from confluent_kafka import Producer

    failed = []
    for tid in transactional_ids:
        try:
            Producer(transactional_producer_config(spec.producer, tid)).init_transactions(timeout)
        except Exception as exc:
            log.warning("Could not fence the transaction %s: %s", tid, exc)
            failed.append(tid)
    return failed


def delete_marks(spec: WriterSpec, groups: Iterable[str], timeout: float = 30.0) -> None:
    """Delete the marks' consumer groups of a completed run (best effort: they expire on their own)."""
    from confluent_kafka.admin import AdminClient

    names = list(groups)
    if not names:
        return
    admin = AdminClient(connection_config(spec.producer))
    for group, fut in admin.delete_consumer_groups(names, request_timeout=timeout).items():
        try:
            fut.result()
        except Exception as exc:  # GROUP_ID_NOT_FOUND: no record of it (an empty chunk)
            log.debug("Marks of %s not deleted: %s", group, exc)


def topic_names(spec: WriterSpec, timeout: float = 30.0) -> list[str]:
    from confluent_kafka.admin import AdminClient

    metadata = AdminClient(connection_config(spec.producer)).list_topics(timeout=timeout)
    return sorted(metadata.topics)


def end_offsets(spec: WriterSpec, topics: Iterable[str], timeout: float = 30.0) -> dict[str, int]:
    """Each topic's end offset summed over its partitions; a topic that does not exist is left out."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({**connection_config(spec.producer), "group.id": "cdc-snapshot-offsets"})
    try:
        metadata = consumer.list_topics(timeout=timeout)
        totals: dict[str, int] = {}
        for name in sorted(set(topics) & set(metadata.topics)):
            total = 0
            for p in metadata.topics[name].partitions:
                _low, high = consumer.get_watermark_offsets(TopicPartition(name, p), timeout=timeout)
                total += max(0, int(high))
            totals[name] = total
        return totals
    finally:
        consumer.close()


class ChunkWriter:
    """Where one chunk attempt's records go: its own transaction (a transactional id given) or the
    Python worker's shared at-least-once writer. Once the topic of the chunk's first record is known,
    :meth:`committed_before` says whether an earlier attempt committed the chunk already (then nothing
    is written); :meth:`finish` returns once Kafka has every record (and the transaction committed).

    ``background``: the transaction opens (a new producer's ``init_transactions``, which fences the earlier
    attempts, then ``begin_transaction``) on a thread of its own, and with ``topic`` given the earlier
    attempts' mark is looked up there too, while the caller reads the chunk's first rows
    (:meth:`read_ahead`): opening takes one to several round trips and librdkafka's connection timers
    (50 ms, at times 500 ms, measured on a local broker), which would otherwise stall the chunk's read
    every chunk. Nothing may be produced before :meth:`committed_before` returned (it waits for the
    opening and raises what it raised). Without ``background`` the transaction is open on return."""

    def __init__(
        self,
        spec: WriterSpec,
        transactional_id: str | None,
        *,
        background: bool = False,
        topic: str | None = None,
    ) -> None:
        from cdc.snapshot.writer import writer_for

        self.txn: ChunkTransaction | None = None
        self.topic: str | None = None
        self._opening: threading.Thread | None = None
        self._open_error: BaseException | None = None
        self._looked_up: tuple[str, int | None] | None = None  # (topic, committed rows) found while opening
        if transactional_id is None:
            self.writer = writer_for(spec)
            return
        self.txn = ChunkTransaction(spec, transactional_id)
        self.writer = self.txn.writer
        if not background:
            self.txn.open()
            return
        self._opening = threading.Thread(
            target=self._open_in_background,
            args=(self.txn, topic),
            name=f"open-{transactional_id}",
            daemon=True,
        )
        self._opening.start()

    def _open_in_background(self, txn: ChunkTransaction, topic: str | None) -> None:
        try:
            txn.open()
            if topic is not None:
                self._looked_up = (topic, txn.committed_rows(topic))
        except BaseException as exc:  # re-raised by the caller's thread (_opened)
            self._open_error = exc

    def ready(self) -> bool:
        """Whether the transaction is open (or failed to open, or there is none): no need to wait."""
        return self._opening is None or not self._opening.is_alive()

    def read_ahead(
        self, rows: Iterator[T], size: Callable[[T], int], limit: int = READ_AHEAD_BYTES
    ) -> list[T]:
        """The rows read from ``rows`` while the transaction opens, up to ``limit`` bytes by ``size``; the
        caller writes them first, then the rest of ``rows``."""
        ahead: list[T] = []
        total = 0
        while not self.ready() and total < limit:
            for _ in range(256):  # whether the opening is over is asked every few hundred rows
                row = next(rows, None)
                if row is None:
                    return ahead
                ahead.append(row)
                total += size(row)
        return ahead

    def _opened(self) -> None:
        """Wait for a background opening; raise what it raised."""
        if self._opening is not None:
            self._opening.join()
            self._opening = None
        if self._open_error is not None:
            raise self._open_error

    def committed_before(self, topic: str) -> int | None:
        self.topic = topic
        if self.txn is None:
            return None
        self._opened()
        if self._looked_up is not None and self._looked_up[0] == topic:
            return self._looked_up[1]
        return self.txn.committed_rows(topic)

    def finish(self, rows: int) -> None:
        if self.txn is None:
            self.writer.flush()
        else:
            self._opened()
            self.txn.commit(self.topic, rows)

    def close(self) -> None:
        if self.txn is not None:
            if self._opening is not None:  # an error before the transaction was waited for
                self._opening.join()
                self._opening = None
            self.txn.close()


def task_attempt() -> int:
    """The Spark task attempt running this code (0 outside Spark)."""
    try:
        from pyspark import TaskContext
    except ImportError:
        return 0
    ctx = TaskContext.get()
    return int(ctx.attemptNumber()) if ctx is not None else 0


class RunDelivery:
    """The driver's side of a run's delivery: the names of its transactions, what it wrote, and the
    fencing and clean-up of its chunks' transactions. ``topics``: where the run's records go by default
    (``<prefix>.<db>.<table>``); topics the chunks report are watched too."""

    def __init__(self, spec: WriterSpec, mode: str, state: ProgressState, topics: Iterable[str]) -> None:
        if mode not in DELIVERIES:
            raise ValueError(f"unknown delivery {mode!r}")
        self.spec = spec
        self.mode = mode
        self.state = state
        self.default_topics = sorted(set(topics))
        if not state.run_id:
            state.run_id = new_run_id()
        self.ids = RunIds(str(spec.producer.get("client.id", "cdc-snapshot")), state.run_id)

    @property
    def exactly_once(self) -> bool:
        return self.mode == EXACTLY_ONCE

    def begin(self) -> None:
        """Note the topics and the end offsets before the first chunk (once per run, kept on resume)."""
        if self.state.topics_at_start or self.state.submitted:
            return
        self.state.topics_at_start = topic_names(self.spec)
        self.state.offsets_at_start = end_offsets(self.spec, self.default_topics)
        self.state.save()

    def topics(self) -> list[str]:
        seen = {str(d["topic"]) for d in self.state.done.values() if d.get("topic")}
        return sorted(seen | set(self.default_topics))

    def written(self) -> int:
        """Records (and transaction markers) in the run's topics now: grows while chunks write."""
        return sum(end_offsets(self.spec, self.topics()).values())

    def written_twice(self, rows: int) -> int | None:
        """At least once: the records beyond one per row the chunks wrote (the growth of the topics since
        the run began, less the rows); None when exactly once or when a topic's start is unknown."""
        if self.exactly_once:
            return None
        grown = 0
        now = end_offsets(self.spec, self.topics())
        for topic, end in now.items():
            if topic in self.state.offsets_at_start:
                grown += end - self.state.offsets_at_start[topic]
            elif topic not in self.state.topics_at_start:
                grown += end  # created by this run
            else:
                return None  # existed, but its offsets were not noted: unknown
        return max(0, grown - rows)

    def fence(self, chunk_ids: Iterable[str]) -> None:
        """Abort the open transactions of chunks that were in flight when the run stopped."""
        if self.exactly_once:
            ids = [self.ids.chunk(c) for c in chunk_ids]
            if ids:
                log.info("Fencing the transactions of %d chunks in flight", len(ids))
                fence(self.spec, ids)

    def completed(self) -> None:
        """Delete the chunks' marks once the run completed."""
        if self.exactly_once:
            try:
                delete_marks(self.spec, [self.ids.chunk(c) for c in self.state.submitted])
            except Exception as exc:
                log.warning("The chunks' marks (groups *.%s.*) were not deleted: %s", self.ids.run, exc)
