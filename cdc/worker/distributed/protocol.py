"""Connect's group-protocol bytes: worker subscriptions and assignments, v0 (eager), v1 and v2.

The layouts are Kafka Connect's ``ConnectProtocol`` (v0, protocol ``default``) and
``IncrementalCooperativeConnectProtocol`` (v1 ``compatible``, v2 ``sessioned``), big-endian Kafka
primitives: STRING = int16 length + UTF-8, NULLABLE_BYTES = int32 length (-1 = null), ARRAY = int32 count
(-1 = null) + items::

    Subscription v0     version:int16 url:STRING configOffset:int64
    Subscription v1/v2  ... allocation:NULLABLE_BYTES          (the worker's current assignment, v1/v2 bytes)
    ConnectorAssignment connector:STRING tasks:ARRAY<int32>    (task -1 = the Connector instance)
    Assignment v0       version:int16 error:int16 leader:STRING leaderUrl:STRING configOffset:int64
                        assignment:ARRAY<ConnectorAssignment>
    Assignment v1/v2    ... assignment:ARRAY? revoked:ARRAY? delay:int32

Readers accept any version and default the trailing fields a shorter (older) message lacks, as Connect's
readers do; a null array reads as empty.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum

from cdc.worker.stores.base import TaskId

__all__ = [
    "CONFIG_MISMATCH",
    "CONNECTOR_TASK",
    "NO_ERROR",
    "Assignment",
    "ConnectProtocol",
    "ConnectorsAndTasks",
    "ProtocolError",
    "WorkerSubscription",
    "decode_assignment",
    "decode_subscription",
    "encode_assignment",
    "encode_subscription",
    "protocols_up_to",
]

NO_ERROR = 0
CONFIG_MISMATCH = 1
CONNECTOR_TASK = -1  # the task id that stands for the Connector instance itself


class ProtocolError(ValueError):
    """Bytes that do not follow the layout (truncated, bad lengths, bad UTF-8)."""


class ConnectProtocol(Enum):
    """The sub-protocols a Connect worker offers, with the metadata version each one carries."""

    EAGER = ("default", 0)
    COMPATIBLE = ("compatible", 1)
    SESSIONED = ("sessioned", 2)

    @property
    def protocol_name(self) -> str:
        return self.value[0]

    @property
    def version(self) -> int:
        return self.value[1]

    @classmethod
    def from_config(cls, name: str) -> ConnectProtocol:
        """``connect.protocol`` (``eager``, ``compatible``, ``sessioned``) to the protocol."""
        lowered = name.strip().lower()
        for member in cls:
            if lowered in (member.name.lower(), member.protocol_name):
                return member
        raise ValueError(f"Unknown connect.protocol {name!r}")

    @classmethod
    def from_name(cls, protocol_name: str) -> ConnectProtocol:
        """The protocol a group chose, by its wire name (``default``, ``compatible``, ``sessioned``)."""
        for member in cls:
            if member.protocol_name == protocol_name:
                return member
        raise ValueError(f"Unknown Connect group protocol {protocol_name!r}")

    @property
    def incremental(self) -> bool:
        return self is not ConnectProtocol.EAGER


def protocols_up_to(configured: ConnectProtocol) -> list[ConnectProtocol]:
    """What to offer in JoinGroup, most preferred first: ``sessioned`` → ``compatible`` → ``default``."""
    ordered = [ConnectProtocol.SESSIONED, ConnectProtocol.COMPATIBLE, ConnectProtocol.EAGER]
    return ordered[ordered.index(configured) :]


@dataclass(frozen=True)
class ConnectorsAndTasks:
    """A set of connectors (run as Connector instances) and tasks."""

    connectors: frozenset[str] = frozenset()
    tasks: frozenset[TaskId] = frozenset()

    @classmethod
    def of(cls, connectors: Iterable[str] = (), tasks: Iterable[TaskId] = ()) -> ConnectorsAndTasks:
        return cls(frozenset(connectors), frozenset(tasks))

    def is_empty(self) -> bool:
        return not self.connectors and not self.tasks

    def __or__(self, other: ConnectorsAndTasks) -> ConnectorsAndTasks:
        return ConnectorsAndTasks(self.connectors | other.connectors, self.tasks | other.tasks)

    def __sub__(self, other: ConnectorsAndTasks) -> ConnectorsAndTasks:
        return ConnectorsAndTasks(self.connectors - other.connectors, self.tasks - other.tasks)

    def __and__(self, other: ConnectorsAndTasks) -> ConnectorsAndTasks:
        return ConnectorsAndTasks(self.connectors & other.connectors, self.tasks & other.tasks)

    def size(self) -> int:
        return len(self.connectors) + len(self.tasks)


@dataclass(frozen=True)
class Assignment:
    """What the leader hands one member (Connect's ``ExtendedAssignment``; v0 has no revoked/delay)."""

    version: int = ConnectProtocol.COMPATIBLE.version
    error: int = NO_ERROR
    leader: str = ""
    leader_url: str = ""
    config_offset: int = -1
    assigned: ConnectorsAndTasks = field(default_factory=ConnectorsAndTasks)
    revoked: ConnectorsAndTasks = field(default_factory=ConnectorsAndTasks)
    delay: int = 0

    @property
    def failed(self) -> bool:
        return self.error != NO_ERROR


@dataclass(frozen=True)
class WorkerSubscription:
    """One member's JoinGroup metadata for one protocol."""

    version: int
    url: str
    config_offset: int
    allocation: Assignment | None = None  # v1/v2: what the worker runs now (null = nothing known)


# ------------------------------------------------------------------------------------------------- writing
class _Writer:
    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def int16(self, value: int) -> None:
        self._parts.append(struct.pack(">h", value))

    def int32(self, value: int) -> None:
        self._parts.append(struct.pack(">i", value))

    def int64(self, value: int) -> None:
        self._parts.append(struct.pack(">q", value))

    def string(self, value: str) -> None:
        data = value.encode("utf-8")
        if len(data) > 0x7FFF:
            raise ProtocolError(f"String of {len(data)} bytes is too long for an int16 length")
        self.int16(len(data))
        self._parts.append(data)

    def nullable_bytes(self, value: bytes | None) -> None:
        if value is None:
            self.int32(-1)
        else:
            self.int32(len(value))
            self._parts.append(value)

    def getvalue(self) -> bytes:
        return b"".join(self._parts)


def _grouped(items: ConnectorsAndTasks) -> list[tuple[str, list[int]]]:
    """Connect's ``taskAssignments``: per connector, -1 for the Connector instance, then its task ids."""
    by_connector: dict[str, list[int]] = {}
    for connector in sorted(items.connectors):
        by_connector.setdefault(connector, []).append(CONNECTOR_TASK)
    for task in sorted(items.tasks):
        by_connector.setdefault(task.connector, []).append(task.task)
    return sorted(by_connector.items())


def _write_connector_assignments(writer: _Writer, items: ConnectorsAndTasks) -> None:
    grouped = _grouped(items)
    writer.int32(len(grouped))
    for connector, tasks in grouped:
        writer.string(connector)
        writer.int32(len(tasks))
        for task in tasks:
            writer.int32(task)


def encode_assignment(assignment: Assignment) -> bytes:
    writer = _Writer()
    writer.int16(assignment.version)
    writer.int16(assignment.error)
    writer.string(assignment.leader)
    writer.string(assignment.leader_url)
    writer.int64(assignment.config_offset)
    _write_connector_assignments(writer, assignment.assigned)
    if assignment.version >= 1:
        _write_connector_assignments(writer, assignment.revoked)
        writer.int32(assignment.delay)
    return writer.getvalue()


def encode_subscription(subscription: WorkerSubscription) -> bytes:
    writer = _Writer()
    writer.int16(subscription.version)
    writer.string(subscription.url)
    writer.int64(subscription.config_offset)
    if subscription.version >= 1:
        allocation = subscription.allocation
        writer.nullable_bytes(None if allocation is None else encode_assignment(allocation))
    return writer.getvalue()


# ------------------------------------------------------------------------------------------------- reading
class _Reader:
    def __init__(self, data: bytes) -> None:
        self._data = memoryview(bytes(data))
        self._pos = 0

    def remaining(self) -> int:
        return len(self._data) - self._pos

    def _take(self, n: int) -> memoryview:
        if n < 0 or self._pos + n > len(self._data):
            raise ProtocolError(f"Truncated message: wanted {n} bytes at {self._pos} of {len(self._data)}")
        out = self._data[self._pos : self._pos + n]
        self._pos += n
        return out

    def int16(self) -> int:
        return int(struct.unpack(">h", self._take(2))[0])

    def int32(self) -> int:
        return int(struct.unpack(">i", self._take(4))[0])

    def int64(self) -> int:
        return int(struct.unpack(">q", self._take(8))[0])

    def string(self) -> str:
        length = self.int16()
        if length < 0:
            raise ProtocolError(f"Negative string length {length}")
        try:
            return bytes(self._take(length)).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ProtocolError(f"Bad UTF-8 in string: {exc}") from None

    def nullable_bytes(self) -> bytes | None:
        length = self.int32()
        if length < 0:
            return None
        return bytes(self._take(length))


def _read_connector_assignments(reader: _Reader) -> ConnectorsAndTasks:
    count = reader.int32()
    connectors: set[str] = set()
    tasks: set[TaskId] = set()
    for _ in range(max(count, 0)):  # -1 = null array = nothing
        connector = reader.string()
        n = reader.int32()
        for _ in range(max(n, 0)):
            task = reader.int32()
            if task == CONNECTOR_TASK:
                connectors.add(connector)
            else:
                tasks.add(TaskId(connector, task))
    return ConnectorsAndTasks(frozenset(connectors), frozenset(tasks))


def decode_assignment(data: bytes) -> Assignment:
    reader = _Reader(data)
    version = reader.int16()
    if version < 0:
        raise ProtocolError(f"Invalid assignment version {version}")
    error = reader.int16()
    leader = reader.string()
    leader_url = reader.string()
    config_offset = reader.int64()
    assigned = _read_connector_assignments(reader) if reader.remaining() else ConnectorsAndTasks()
    revoked = ConnectorsAndTasks()
    delay = 0
    if version >= 1:
        if reader.remaining():
            revoked = _read_connector_assignments(reader)
        if reader.remaining() >= 4:
            delay = reader.int32()
    return Assignment(version, error, leader, leader_url, config_offset, assigned, revoked, delay)


def decode_subscription(data: bytes) -> WorkerSubscription:
    reader = _Reader(data)
    version = reader.int16()
    if version < 0:
        raise ProtocolError(f"Invalid subscription version {version}")
    url = reader.string()
    config_offset = reader.int64()
    allocation: Assignment | None = None
    if version >= 1 and reader.remaining():
        raw = reader.nullable_bytes()
        if raw:
            allocation = decode_assignment(raw)
    return WorkerSubscription(version, url, config_offset, allocation)
