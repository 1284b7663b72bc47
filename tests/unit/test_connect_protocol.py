"""Connect's group-protocol bytes, checked against vectors written by hand from the layouts (§4.2)."""

from __future__ import annotations

import pytest

from cdc.worker.distributed.protocol import (
    CONFIG_MISMATCH,
    Assignment,
    ConnectorsAndTasks,
    ConnectProtocol,
    ProtocolError,
    WorkerSubscription,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
    protocols_up_to,
)
from cdc.worker.stores.base import TaskId

URL = b"http://w1:8083/"  # 15 bytes


def i16(v: int) -> bytes:
    return v.to_bytes(2, "big", signed=True)


def i32(v: int) -> bytes:
    return v.to_bytes(4, "big", signed=True)


def i64(v: int) -> bytes:
    return v.to_bytes(8, "big", signed=True)


def s(text: str) -> bytes:
    raw = text.encode()
    return i16(len(raw)) + raw


# Assignment v1 for leader "m-1": connector "a" and its task 0, task b-1; revoked task b-0; delay 250.
V1_ASSIGNMENT = (
    b"\x00\x01"  # version 1
    b"\x00\x00"  # error NONE
    b"\x00\x03m-1"  # leader member id
    b"\x00\x0f"
    + URL  # leader url
    + b"\x00\x00\x00\x00\x00\x00\x00\x2a"  # config offset 42
    b"\x00\x00\x00\x02"  # 2 connector assignments
    b"\x00\x01a"
    b"\x00\x00\x00\x02"
    b"\xff\xff\xff\xff"
    b"\x00\x00\x00\x00"  # a: [-1, 0]
    b"\x00\x01b"
    b"\x00\x00\x00\x01"
    b"\x00\x00\x00\x01"  # b: [1]
    b"\x00\x00\x00\x01"  # 1 revoked
    b"\x00\x01b"
    b"\x00\x00\x00\x01"
    b"\x00\x00\x00\x00"  # b: [0]
    b"\x00\x00\x00\xfa"  # delay 250
)


def test_decode_assignment_v1_from_hand_written_bytes() -> None:
    a = decode_assignment(V1_ASSIGNMENT)
    assert a.version == 1 and a.error == 0 and a.leader == "m-1" and a.leader_url == URL.decode()
    assert a.config_offset == 42
    assert a.assigned == ConnectorsAndTasks.of(["a"], [TaskId("a", 0), TaskId("b", 1)])
    assert a.revoked == ConnectorsAndTasks.of([], [TaskId("b", 0)])
    assert a.delay == 250


def test_encode_assignment_v1_matches_hand_written_bytes() -> None:
    assigned = ConnectorsAndTasks.of(["a"], [TaskId("a", 0), TaskId("b", 1)])
    a = Assignment(1, 0, "m-1", URL.decode(), 42, assigned, ConnectorsAndTasks.of([], [TaskId("b", 0)]), 250)
    assert encode_assignment(a) == V1_ASSIGNMENT


def test_decode_assignment_v0_has_no_revoked_or_delay() -> None:
    data = (
        i16(0)
        + i16(0)
        + s("L")
        + s("http://l/")
        + i64(7)
        + i32(1)
        + s("c")
        + i32(3)
        + i32(-1)
        + i32(0)
        + i32(1)
    )
    a = decode_assignment(data)
    assert a.version == 0 and a.leader == "L" and a.leader_url == "http://l/" and a.config_offset == 7
    assert a.assigned == ConnectorsAndTasks.of(["c"], [TaskId("c", 0), TaskId("c", 1)])
    assert a.revoked.is_empty() and a.delay == 0
    assert encode_assignment(Assignment(0, 0, "L", "http://l/", 7, a.assigned)) == data


def test_assignment_null_arrays_read_as_empty() -> None:
    data = i16(2) + i16(0) + s("L") + s("u") + i64(-1) + i32(-1) + i32(-1) + i32(0)
    a = decode_assignment(data)
    assert a.assigned.is_empty() and a.revoked.is_empty() and a.version == 2


def test_assignment_reader_defaults_missing_trailing_fields() -> None:
    # A v1 message cut after `assignment` (an older writer): revoked empty, delay 0.
    data = i16(1) + i16(1) + s("L") + s("u") + i64(9) + i32(0)
    a = decode_assignment(data)
    assert a.error == CONFIG_MISMATCH and a.failed and a.config_offset == 9
    assert a.revoked.is_empty() and a.delay == 0
    # A future version with extra trailing bytes still reads.
    future = i16(5) + i16(0) + s("L") + s("u") + i64(1) + i32(0) + i32(0) + i32(3) + b"\x01\x02"
    assert decode_assignment(future).delay == 3


def test_subscription_v0_v1_v2_from_hand_written_bytes() -> None:
    v0 = i16(0) + s("http://w1:8083/") + i64(12)
    sub = decode_subscription(v0)
    assert sub == WorkerSubscription(0, "http://w1:8083/", 12, None)
    assert encode_subscription(sub) == v0

    v1_null = i16(1) + s("http://w1:8083/") + i64(-1) + i32(-1)
    sub = decode_subscription(v1_null)
    assert sub.version == 1 and sub.config_offset == -1 and sub.allocation is None
    assert encode_subscription(sub) == v1_null

    v2 = i16(2) + s("http://w1:8083/") + i64(42) + i32(len(V1_ASSIGNMENT)) + V1_ASSIGNMENT
    sub = decode_subscription(v2)
    assert sub.version == 2 and sub.config_offset == 42
    assert sub.allocation is not None and sub.allocation.delay == 250
    assert encode_subscription(sub) == v2


def test_subscription_v1_without_allocation_field_reads() -> None:
    sub = decode_subscription(i16(1) + s("u") + i64(3))
    assert sub.allocation is None and sub.config_offset == 3


def test_round_trips() -> None:
    tasks = [TaskId("conn-ü", i) for i in range(5)]
    for version in (1, 2):
        a = Assignment(
            version,
            0,
            "leader-1",
            "http://10.0.0.5:8083/",
            123456789012,
            ConnectorsAndTasks.of(["conn-ü", "x"], tasks[:3]),
            ConnectorsAndTasks.of(["y"], tasks[3:]),
            9,
        )
        assert decode_assignment(encode_assignment(a)) == a
        sub = WorkerSubscription(version, "http://h:1/", 5, a)
        assert decode_subscription(encode_subscription(sub)) == sub


@pytest.mark.parametrize("data", [b"", b"\x00", i16(0) + i16(3) + b"ab", i16(1) + s("u")])
def test_truncated_bytes_raise(data: bytes) -> None:
    with pytest.raises(ProtocolError):
        decode_subscription(data)


def test_protocols_offered_capped_by_connect_protocol() -> None:
    names = [p.protocol_name for p in protocols_up_to(ConnectProtocol.from_config("sessioned"))]
    assert names == ["sessioned", "compatible", "default"]
    assert [p.protocol_name for p in protocols_up_to(ConnectProtocol.from_config("compatible"))] == [
        "compatible",
        "default",
    ]
    assert [p.protocol_name for p in protocols_up_to(ConnectProtocol.from_config("EAGER"))] == ["default"]
    assert ConnectProtocol.from_name("sessioned").version == 2
