"""The signal channels besides the signal table: a file of JSON lines, and a Kafka topic.

Both are read every ``signal.poll.interval.ms`` by :class:`ChannelPoller`'s thread; the signals wait in a
queue until the streamer reaches a point between transactions. ``file`` (``signal.file``) is emptied
after each read, as Debezium does. ``kafka`` (``signal.kafka.topic``, default ``<prefix>-signal``) reads
partition 0 of the topic with the group ``signal.kafka.groupId`` and the ``signal.consumer.*`` settings (Java
consumer settings, as the worker's own clients take them and as its client override policy allows);
only records whose key is the connector's ``topic.prefix`` are signals; the group's offset is committed
once the streamer has acted on them (:meth:`SignalChannel.acknowledge`), so a restarted task acts on a
signal it had not acted on, and not again on one it had.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cdc.logs import in_context
from cdc.mysql.config import MySqlSettings
from cdc.mysql.signals.record import SignalError, SignalRecord, parse_signal_json

__all__ = ["ChannelPoller", "FileChannel", "KafkaChannel", "SignalChannel"]

log = logging.getLogger(__name__)


class SignalChannel:
    name = ""

    def read(self) -> list[SignalRecord]:
        raise NotImplementedError

    def acknowledge(self, signal: SignalRecord) -> None:
        """``signal`` was acted on (called from the streamer's thread)."""

    def close(self) -> None:
        """Release what the channel holds."""


class FileChannel(SignalChannel):
    name = "file"

    def __init__(self, path: str) -> None:
        self.path = Path(path)
        log.info("Reading '%s' for signals", self.path.absolute())

    def read(self) -> list[SignalRecord]:
        if not self.path.is_file():
            return []
        lines = self.path.read_text().splitlines()
        if not lines:
            return []
        self.path.write_text("")
        out = []
        for line in lines:
            if not line.strip():
                continue
            try:
                out.append(parse_signal_json(line, self.name))
            except SignalError as exc:
                log.warning("Skipped signal line %r of %s: %s", line, self.path, exc)
        return out


class KafkaChannel(SignalChannel):
    name = "kafka"

    def __init__(self, settings: MySqlSettings, worker: Mapping[str, str] | None = None) -> None:
        """``worker``: the worker's entries (the task context's ``worker_client_config``), whose override
        policy the ``signal.consumer.*`` settings go through; empty or None outside a worker."""
        from confluent_kafka import Consumer, TopicPartition

        from cdc.kafka.clients import SIGNAL_CONSUMER_PREFIX, connector_client_overrides, to_librdkafka

        self.prefix = settings.prefix
        self.topic = settings.signal_kafka_topic or f"{settings.prefix}-signal"
        self.timeout = settings.signal_kafka_poll_timeout_ms / 1000
        bootstrap = settings.signal_kafka_bootstrap_servers
        if not bootstrap:
            raise SignalError("the kafka signal channel needs signal.kafka.bootstrap.servers")
        config: dict[str, Any] = {
            "bootstrap.servers": bootstrap,
            "group.id": settings.signal_kafka_group_id,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "session.timeout.ms": 10000,
        }
        # Debezium's signal.consumer.* are Java consumer settings: the worker's policy first, then the
        # same translation (and the same list of names) as every other client of the worker
        connector_client_overrides(settings.raw, (SIGNAL_CONSUMER_PREFIX,), worker or {})
        prefix = SIGNAL_CONSUMER_PREFIX
        own = {k[len(prefix) :]: v for k, v in settings.raw.items() if k.startswith(prefix)}
        config.update(to_librdkafka(own))
        self.consumer = Consumer(config)
        self.consumer.assign([TopicPartition(self.topic, 0)])
        self._partition = TopicPartition
        # Offsets of signals read but not yet acted on (the streamer acknowledges them from its thread);
        # the group's offset never passes the first of them.
        self._lock = threading.Lock()
        self._pending: set[int] = set()
        self._next = -1  # the offset after the last record read
        self._committed = -1
        log.info("Subscribed to the signal topic '%s'", self.topic)

    def read(self) -> list[SignalRecord]:
        self._commit()
        out: list[SignalRecord] = []
        messages = self.consumer.consume(100, self.timeout)
        for message in messages:
            offset = message.offset()
            if message.error() or offset is None:
                log.warning("Signal topic '%s': %s", self.topic, message.error())
                continue
            self._next = max(self._next, offset + 1)
            raw_key = message.key()
            key = raw_key.decode() if isinstance(raw_key, bytes) else raw_key
            if key != self.prefix:
                log.info("Signal key '%s' doesn't match the connector's name '%s'", key, self.prefix)
                continue
            value = message.value()
            if not value:
                continue
            try:
                out.append(parse_signal_json(value.decode(), self.name, offset))
                with self._lock:
                    self._pending.add(offset)
            except SignalError as exc:
                log.warning("Skipped signal at offset %d of '%s': %s", offset, self.topic, exc)
        return out

    def acknowledge(self, signal: SignalRecord) -> None:
        if signal.channel_offset is not None:
            with self._lock:
                self._pending.discard(signal.channel_offset)

    def _commit(self) -> None:
        with self._lock:
            position = min(self._pending) if self._pending else self._next
        if position > self._committed:
            self.consumer.commit(offsets=[self._partition(self.topic, 0, position)], asynchronous=False)
            self._committed = position

    def close(self) -> None:
        try:
            self._commit()
        finally:
            self.consumer.close()


class ChannelPoller:
    """Reads the external channels in a thread into a queue the streamer drains between transactions."""

    def __init__(self, channels: list[SignalChannel], interval_s: float, stopping: threading.Event) -> None:
        self.channels = channels
        self.interval_s = interval_s
        self.stopping = stopping
        self.signals: queue.Queue[tuple[SignalRecord, SignalChannel]] = queue.Queue()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self.channels and self._thread is None:
            self._thread = threading.Thread(target=in_context(self._run), name="signal-channels", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while not self.stopping.is_set() and not self._done.is_set():
            for channel in self.channels:
                try:
                    for signal in channel.read():
                        self.signals.put((signal, channel))
                except Exception:
                    log.warning("Reading the %s signal channel failed", channel.name, exc_info=True)
            if self._done.wait(self.interval_s):
                break

    def drain(self) -> list[tuple[SignalRecord, SignalChannel]]:
        """The signals read so far, each with its channel (to acknowledge it once acted on)."""
        if self.signals.empty():  # the usual case, after every transaction: no exception raised
            return []
        out = []
        while True:
            try:
                out.append(self.signals.get_nowait())
            except queue.Empty:
                return out

    def close(self) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join(5)
        for channel in self.channels:
            try:
                channel.close()
            except Exception:
                log.debug("Closing the %s signal channel failed", channel.name, exc_info=True)
