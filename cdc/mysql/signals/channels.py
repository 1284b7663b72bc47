"""The signal channels besides the signal table: a file of JSON lines, and a Kafka topic.

Both are read every ``signal.poll.interval.ms`` by :class:`ChannelPoller`'s thread; the signals wait in a
queue until the streamer reaches a point between transactions. ``file`` (``signal.file``) is read from
where the last read stopped (:class:`FileChannel`: Debezium empties the file after each read; here only a
file the channel created is emptied). ``kafka`` (``signal.kafka.topic``, default ``<prefix>-signal``) reads
partition 0 of the topic with the group ``signal.kafka.groupId`` and the ``signal.consumer.*`` settings (Java
consumer settings, as the worker's own clients take them and as its client override policy allows);
only records whose key is the connector's ``topic.prefix`` are signals; the group's offset is committed
once the streamer has acted on them (:meth:`SignalChannel.acknowledge`), so a restarted task acts on a
signal it had not acted on, and not again on one it had.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import queue
import stat
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cdc.api.errors import ConnectError
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
    """``signal.file``: JSON lines read from where the last read stopped, a bounded amount per poll.

    Debezium's channel reads the whole file and empties it. Here the file is emptied only when this
    channel created it (it did not exist when the task started; the ownership is remembered beside the
    position, below) and every signal read from it was acted on; a file that was there before is never
    changed. Either way a signal is acted on once: the position up to which signals were acted on is kept
    in ``<signal.file>.cdc-position`` (JSON, written atomically), with the file's identity and the bytes
    just before the position, so that a replaced or rewritten file is read again from its start.

    Bounds: at most :data:`MAX_POLL_BYTES` per poll and :data:`MAX_LINE_BYTES` per line (a longer line is
    skipped without being kept in memory). A line that is not a signal is logged by its number and length,
    never its content.
    """

    name = "file"

    def __init__(self, path: str) -> None:
        # the resolved path is the one connector.file.allowed.paths checked; the position file goes beside it
        self.path = os.path.realpath(path)
        self.state_path = self.path + POSITION_SUFFIX
        self._lock = threading.Lock()
        self._pending: dict[int, int] = {}  # start offset of a signal read but not acted on -> lines before
        self._identity: tuple[int, int] | None = None
        self._read_pos = self._read_line = 0
        self._read_tail = b""
        self._skipping = False  # inside a line longer than MAX_LINE_BYTES
        self._unterminated = False  # the last signal taken had no newline yet
        self._saved: tuple[int, int] | None = None  # the position last written to the state file
        self._created = False
        self._warned: set[str] = set()
        state = _load_position(self.state_path)
        created = self._create()
        identity = _identity(self.path)
        if created:
            self._identity, self._created = identity, True
            log.info("Created the signal file %s; it is emptied once its signals are acted on", self.path)
        elif state is not None and identity is not None and state.identity == identity:
            self._identity, self._created = identity, state.created
            self._read_pos, self._read_line, self._read_tail = state.position, state.line, state.tail
            self._saved = (state.position, state.line)
        else:
            self._identity = identity
        if created or self._saved is None:
            self._save(self._read_pos, self._read_line, self._read_tail)
        log.info("Reading '%s' for signals from byte %d", self.path, self._read_pos)

    def _create(self) -> bool:
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o660)
        except FileExistsError:
            return False
        except OSError as exc:
            log.warning(
                "The signal file %s does not exist and cannot be created: %s", self.path, exc.strerror
            )
            return False
        os.close(fd)
        return True

    def read(self) -> list[SignalRecord]:
        self._commit()
        try:
            f = open(self.path, "rb")  # noqa: SIM115 - closed below
        except FileNotFoundError:
            return []
        with f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                self._warn_once("not a file", "The signal file %s is not a regular file; not read", self.path)
                return []
            identity = (st.st_dev, st.st_ino)
            if (
                identity != self._identity
                or st.st_size < self._read_pos
                or _tail_at(f, self._read_pos, len(self._read_tail)) != self._read_tail
            ):
                self._restart(identity)
            if st.st_size == self._read_pos:
                return []
            f.seek(self._read_pos)
            data = f.read(MAX_POLL_BYTES)
            return self._take(data, at_end=self._read_pos + len(data) >= st.st_size)

    def _restart(self, identity: tuple[int, int]) -> None:
        """The file was replaced or rewritten (or is new): read it from its start."""
        if self._identity is not None or self._read_pos:
            log.info("The signal file %s was replaced or rewritten; reading it from its start", self.path)
        with self._lock:
            self._pending.clear()
        if identity != self._identity:
            self._created = False  # another file now: not one this channel created
        self._identity = identity
        self._read_pos = self._read_line = 0
        self._read_tail = b""
        self._skipping = self._unterminated = False

    def _take(self, data: bytes, at_end: bool) -> list[SignalRecord]:
        out: list[SignalRecord] = []
        base, start = self._read_pos, 0
        while (newline := data.find(b"\n", start)) >= 0:
            line = data[start:newline]
            if self._unterminated and not line:  # the newline of a signal already taken
                self._unterminated = False
            elif self._skipping:
                self._read_line += 1
                self._skipping = False
            else:
                self._read_line += 1
                self._unterminated = False
                self._parse(line, base + start, out)
            start = newline + 1
        rest = data[start:]
        consumed = start
        if rest and self._skipping:
            consumed = len(data)
        elif len(rest) > MAX_LINE_BYTES:
            log.warning(
                "Skipped line %d of the signal file %s: longer than %d bytes",
                self._read_line + 1,
                self.path,
                MAX_LINE_BYTES,
            )
            self._skipping, consumed = True, len(data)
        elif rest and at_end:
            # a last line without its newline is taken once it is a whole signal (a writer may be mid-line)
            try:
                signal = parse_signal_json(rest.decode("utf-8"), self.name, base + start)
            except (SignalError, UnicodeDecodeError):
                pass
            else:
                with self._lock:
                    self._pending[base + start] = self._read_line
                self._read_line += 1
                self._unterminated, consumed = True, len(data)
                out.append(signal)
        self._read_tail = (self._read_tail + data[:consumed])[-TAIL_BYTES:]
        self._read_pos = base + consumed
        return out

    def _parse(self, line: bytes, offset: int, out: list[SignalRecord]) -> None:
        if not line.strip():
            return
        number = self._read_line
        if len(line) > MAX_LINE_BYTES:
            reason = f"longer than {MAX_LINE_BYTES} bytes"
        else:
            try:
                signal = parse_signal_json(line.decode("utf-8"), self.name, offset)
            except UnicodeDecodeError:
                reason = "not UTF-8"
            except SignalError:
                reason = "not a signal (a JSON object with a type)"
            else:
                with self._lock:
                    self._pending[offset] = number - 1
                out.append(signal)
                return
        # by number and length only: the file may be anything (a REST user chose it)
        log.warning(
            "Skipped line %d of the signal file %s (%d bytes): %s", number, self.path, len(line), reason
        )

    def acknowledge(self, signal: SignalRecord) -> None:
        if signal.channel_offset is not None:
            with self._lock:
                self._pending.pop(signal.channel_offset, None)

    def _commit(self) -> None:
        """Save the position up to which signals were acted on; empty a file this channel created once
        everything in it was."""
        with self._lock:
            if self._pending:
                position = min(self._pending)
                line = self._pending[position]
            else:
                position, line = self._read_pos, self._read_line
            idle = not self._pending
        if idle and self._created and position > 0 and not self._skipping and self._empty_if_read(position):
            position = line = 0
        if (position, line) == self._saved:
            return
        tail = self._read_tail if position == self._read_pos else self._tail_of(position)
        self._save(position, line, tail)

    def _empty_if_read(self, position: int) -> bool:
        try:
            with open(self.path, "r+b") as f:
                st = os.fstat(f.fileno())
                if (st.st_dev, st.st_ino) != self._identity or st.st_size != position:
                    return False
                f.truncate(0)
        except OSError:
            return False
        self._read_pos = self._read_line = 0
        self._read_tail = b""
        self._unterminated = False
        return True

    def _tail_of(self, position: int) -> bytes:
        try:
            with open(self.path, "rb") as f:
                return _tail_at(f, position, TAIL_BYTES) or b""
        except OSError:
            return b""

    def _save(self, position: int, line: int, tail: bytes) -> None:
        state = _Position(self._identity, position, line, tail, self._created)
        try:
            _store_position(self.state_path, state)
        except OSError as exc:
            self._warn_once(
                "state",
                "Cannot write the signal file's position to %s (%s): a restarted task reads %s from its "
                "start again",
                self.state_path,
                exc.strerror,
                self.path,
            )
            return
        self._saved = (position, line)

    def _warn_once(self, what: str, message: str, *args: Any) -> None:
        if what not in self._warned:
            self._warned.add(what)
            log.warning(message, *args)

    def close(self) -> None:
        self._commit()


MAX_LINE_BYTES = 256 * 1024
"""The longest signal line read (Debezium's signals are a few hundred bytes; a long table list fits)."""
MAX_POLL_BYTES = 1024 * 1024
"""The most read from the signal file per poll (``signal.poll.interval.ms``)."""
TAIL_BYTES = 64
POSITION_SUFFIX = ".cdc-position"


@dataclass(frozen=True)
class _Position:
    identity: tuple[int, int] | None
    position: int
    line: int
    tail: bytes
    created: bool


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _tail_at(f: Any, position: int, size: int) -> bytes | None:
    """The ``size`` bytes (fewer at the start of the file) before ``position`` of the open file ``f``."""
    start = max(0, position - size)
    f.seek(start)
    data: bytes = f.read(position - start)
    return data if len(data) == position - start else None


def _load_position(path: str) -> _Position | None:
    """The state file, None when there is none; ConnectError when something else has its name (it would
    be replaced)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConnectError(f"Cannot read the signal position file {path}: {exc.strerror}") from exc
    with os.fdopen(fd, "rb") as f:
        raw = f.read(4097)
    try:
        doc = json.loads(raw) if len(raw) <= 4096 else None
        if not isinstance(doc, dict) or doc.get("format") != _FORMAT:
            raise ValueError("not a position file")
        identity = doc["identity"]
        return _Position(
            (int(identity[0]), int(identity[1])) if identity else None,
            int(doc["position"]),
            int(doc["line"]),
            bytes.fromhex(doc["tail"]),
            bool(doc["created"]),
        )
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        raise ConnectError(
            f"{path} exists and is not the signal position file cdc writes beside the signal file: move it "
            "away or choose another signal.file"
        ) from exc


_FORMAT = "cdc-signal-file-position/1"


def _store_position(path: str, state: _Position) -> None:
    doc = {
        "format": _FORMAT,
        "identity": list(state.identity) if state.identity else None,
        "position": state.position,
        "line": state.line,
        "tail": state.tail.hex(),
        "created": state.created,
    }
    directory, base = os.path.split(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{base}.", suffix=".tmp", dir=directory or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(doc, out)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


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
        # librdkafka has no max.poll.records: it is how many records one read takes (Java's default 500)
        self.max_records = _max_poll_records(own.pop("max.poll.records", "500"))
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
        messages = self.consumer.consume(self.max_records, self.timeout)
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


def _max_poll_records(value: object) -> int:
    """``signal.consumer.max.poll.records`` as a count of records (Java's consumer refuses < 1 as well)."""
    try:
        count = int(str(value).strip())
    except ValueError:
        count = 0
    if count < 1:
        raise SignalError(f"Invalid value {value} for configuration signal.consumer.max.poll.records")
    return min(count, 1_000_000)  # librdkafka's bound for one consume() call


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
