"""The streamer's hooks (:class:`cdc.mysql.stream_hooks.StreamHooks`), on the recorded binlog of
``test_mysql_streamer``: when each is called, and that what ``decorate`` adds reaches every offset."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from test_mysql_streamer import CONFIG, FILE, FakeBinlog

from cdc.api.records import SourceRecord
from cdc.history.model import TableId
from cdc.history.store import MemorySchemaHistory
from cdc.mysql.capture import CaptureContext
from cdc.mysql.config import MySqlSettings
from cdc.mysql.metrics import REGISTRY, StreamingMetrics
from cdc.mysql.offsets import BinlogOffset
from cdc.mysql.stream_hooks import StreamHooks
from cdc.mysql.streaming import Streamer


class Recording(StreamHooks):
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.streamer: Streamer | None = None

    def on_start(self) -> None:
        self.calls.append(("start", None))

    def on_rows(self, table_id: TableId, records: list[SourceRecord]) -> None:
        self.calls.append(("rows", (str(table_id), [r.value.get("op") for r in records if r.value])))

    def on_idle(self) -> None:
        assert self.streamer is not None and not self.streamer.in_tx, "idle inside a transaction"
        self.calls.append(("idle", None))

    def decorate(self, records: list[SourceRecord]) -> list[SourceRecord]:
        for record in records:
            assert isinstance(record.source_offset, dict)
            record.source_offset["decorated"] = True
        return records

    def close(self) -> None:
        self.calls.append(("close", None))


def test_hooks_are_called_at_their_points(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = MySqlSettings.parse(CONFIG)
    stopping = threading.Event()
    out: list[SourceRecord] = []

    def emit(records: list[SourceRecord]) -> bool:
        out.extend(records)
        return True

    monkeypatch.setattr(stopping, "wait", lambda timeout=None: stopping.is_set())
    ctx = CaptureContext.build(settings, MemorySchemaHistory(), emit, stopping, mariadb=True)
    streamer = Streamer(
        ctx, StreamingMetrics(settings.prefix), reader_factory=FakeBinlog(stopping, cut=10**9)
    )
    hooks = Recording()
    hooks.streamer = streamer
    streamer.hooks = hooks
    try:
        streamer.run(BinlogOffset(FILE, 4))
    finally:
        REGISTRY.unregister("streaming", settings.prefix)
    kinds = [k for k, _ in hooks.calls]
    assert kinds[0] == "start" and kinds[-1] == "close"
    assert kinds.count("start") == kinds.count("close") == 1
    assert [v for k, v in hooks.calls if k == "rows"] == [
        ("db.t", ["c"]),
        ("db.t", ["c", "c"]),
        ("db.t", ["u"]),
        ("db.t", ["d"]),
        ("db.t", ["c"]),
    ]
    assert kinds.count("idle") >= 3  # after each commit and each DDL at least
    assert out and all(r.source_offset and r.source_offset.get("decorated") for r in out)
