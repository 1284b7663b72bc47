"""A full batch is written on the sink task's writer thread while ``put`` reads on (PostgreSQL, MariaDB).

What must hold: ``put`` does not wait for the database; ``flush`` (before offsets are committed) does;
a record refused inside a background batch is still reported from the task's own thread, with the rest
of its batch written, and without a reporter nothing of that batch is written. Every assertion reads the
rows back over a connection of the test's own.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from cdc.api.errors import ConnectError
from cdc.api.records import SinkRecord
from tests.integration.jdbc_sink_targets import Target, mariadb_target, postgres_target
from tests.integration.test_jdbc_sink import Recorder, Sink, _names

pytestmark = pytest.mark.integration


@pytest.fixture(params=["postgresql", "mariadb"])
def target(request: pytest.FixtureRequest) -> Iterator[Target]:
    yield from (postgres_target() if request.param == "postgresql" else mariadb_target())


class ThreadRecorder(Recorder):
    def __init__(self) -> None:
        super().__init__()
        self.threads: list[threading.Thread] = []

    def report(self, record: SinkRecord, error: BaseException) -> None:
        self.threads.append(threading.current_thread())
        super().report(record, error)


def _items(target: Target) -> None:
    target.execute(
        f"CREATE TABLE {target.table('items')} "
        "(id INT PRIMARY KEY, name VARCHAR(5) NOT NULL, amount DECIMAL(10,2))"
    )


def _hold_row_one(target: Target) -> Any:
    """A connection of the test's own with row 1 updated and not committed: a write of row 1 waits."""
    locker = target.connect()
    if target.family == "postgresql":
        locker.autocommit = False
    else:
        locker.autocommit(False)
    locker.cursor().execute(f"UPDATE {target.table('items')} SET name = 'held' WHERE id = 1")
    return locker


def test_put_hands_a_full_batch_over_and_flush_waits_for_it(target: Target) -> None:
    _items(target)
    target.execute(f"INSERT INTO {target.table('items')} VALUES (1, 'old', 1)")
    locker = _hold_row_one(target)
    release = threading.Timer(4.0, locker.rollback)
    sink = Sink(target, None, **{"insert.mode": "upsert", "pk.mode": "record_key", "batch.size": "2"})
    try:
        release.start()
        started = time.monotonic()
        sink.put(sink.row(1, "a"), sink.row(2, "b"))  # a full batch, whose row 1 must wait for the lock
        put_took = time.monotonic() - started
        sink.flush()
        flushed_after = time.monotonic() - started
        assert put_took < 2.0, f"put waited {put_took:.1f} s for the database"
        assert flushed_after >= 3.5, f"flush returned after {flushed_after:.1f} s, before the commit could"
        assert _names(target) == [(1, "a"), (2, "b")]
    finally:
        release.cancel()
        sink.stop()
        locker.close()


def test_a_refused_record_of_a_background_batch_is_reported_from_the_task_thread(target: Target) -> None:
    _items(target)
    recorder = ThreadRecorder()
    sink = Sink(target, recorder, **{"insert.mode": "upsert", "pk.mode": "record_key", "batch.size": "2"})
    try:
        # [1, 2] goes to the writer thread and is refused; the next batch waits for it and writes it again
        # here, reporting offset 1; then [3, 4], then 5 by flush
        sink.put(sink.row(1, "ok"), sink.row(2, "much too long"), sink.row(3, "fine"))
        sink.put(sink.row(4, "four"), sink.row(5, "five"))
        sink.flush()
        assert _names(target) == [(1, "ok"), (3, "fine"), (4, "four"), (5, "five")]
        assert [r.kafka_offset for r, _ in recorder.reported] == [1]
        assert recorder.threads == [threading.current_thread()]
    finally:
        sink.stop()


def test_without_a_reporter_a_refused_background_batch_writes_nothing(target: Target) -> None:
    _items(target)
    sink = Sink(target, None, **{"insert.mode": "upsert", "pk.mode": "record_key", "batch.size": "2"})
    try:
        sink.put(sink.row(1, "ok"), sink.row(2, None))
        with pytest.raises(ConnectError) as failure:
            sink.flush()
        assert "offset=1" in str(failure.value)
        assert target.rows("items") == []  # never half a batch
    finally:
        sink.stop()
