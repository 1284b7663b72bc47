"""cdc.kafka.produce: the produce-and-wait helper every record writer uses, against a scripted producer."""

from __future__ import annotations

from typing import Any

import pytest

from cdc.kafka.produce import FirstFailure, flush_and_check, produce


class ScriptedProducer:
    """Refuses the first ``full`` produce calls with BufferError (librdkafka's full local queue); each
    poll serves one queued delivery report; flush serves them all and leaves ``unacked`` behind."""

    def __init__(self, full: int = 0, failures: dict[int, str] | None = None, unacked: int = 0) -> None:
        self.full = full
        self.failures = failures or {}
        self.unacked = unacked
        self.calls: list[tuple[str, Any]] = []
        self.produced: list[tuple[str, dict[str, Any]]] = []
        self._reports: list[tuple[Any, int]] = []

    def produce(self, topic: str, *args: Any, **kwargs: Any) -> None:
        self.calls.append(("produce", topic))
        if self.full:
            self.full -= 1
            raise BufferError("Local: Queue full")
        index = len(self.produced)
        self.produced.append((topic, kwargs))
        if kwargs.get("on_delivery") is not None:
            self._reports.append((kwargs["on_delivery"], index))

    def _serve(self, count: int) -> int:
        served = 0
        while self._reports and served < count:
            callback, index = self._reports.pop(0)
            callback(self.failures.get(index), None)
            served += 1
        return served

    def poll(self, timeout: float = 0) -> int:
        self.calls.append(("poll", timeout))
        return self._serve(1)

    def flush(self, timeout: float = 0) -> int:
        self.calls.append(("flush", timeout))
        self._serve(len(self._reports))
        return self.unacked


def test_produce_waits_for_room_by_polling() -> None:
    producer = ScriptedProducer(full=2)
    turns: list[int] = []
    produce(producer, "t", key=b"k", value=b"v", partition=3, while_full=lambda: turns.append(1))
    assert producer.calls == [
        ("produce", "t"),
        ("poll", 0.05),
        ("produce", "t"),
        ("poll", 0.05),
        ("produce", "t"),
    ]
    assert producer.produced == [("t", {"key": b"k", "value": b"v", "partition": 3})]
    assert len(turns) == 2


def test_produce_gives_up_when_the_hook_raises() -> None:
    producer = ScriptedProducer(full=5)

    class Stopped(Exception):
        pass

    def stop() -> None:
        raise Stopped

    with pytest.raises(Stopped):
        produce(producer, "t", wait_s=0.1, value=b"v", while_full=stop)
    assert producer.calls == [("produce", "t"), ("poll", 0.1)]
    assert producer.produced == []


def test_first_failure_keeps_the_first_error_until_taken() -> None:
    failure = FirstFailure()
    producer = ScriptedProducer(failures={1: "first", 2: "second"})
    for value in (b"a", b"b", b"c"):
        produce(producer, "t", value=value, on_delivery=failure)
    checked: list[Any] = []
    assert flush_and_check(producer, 7.0, lambda: checked.append(failure.take())) == 0
    assert checked == ["first"]
    assert failure.take() is None
    assert producer.calls[-1] == ("flush", 7.0)


def test_flush_and_check_reports_unacknowledged_records_after_checking() -> None:
    failure = FirstFailure()
    producer = ScriptedProducer(unacked=2)
    produce(producer, "t", value=b"a", on_delivery=failure)

    def check() -> None:
        if failure.error is not None:
            raise RuntimeError(failure.take())

    assert flush_and_check(producer, 1.0, check) == 2
    producer = ScriptedProducer(failures={0: "broken"}, unacked=1)
    produce(producer, "t", value=b"a", on_delivery=failure)
    with pytest.raises(RuntimeError, match="broken"):
        flush_and_check(producer, 1.0, check)
