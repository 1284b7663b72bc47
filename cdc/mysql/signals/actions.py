"""Debezium's signal actions, each from the JSON a Debezium user sends.

- ``execute-snapshot``: ``{"data-collections": [names or regexes], "type": "incremental"|"blocking",
  "additional-conditions": [{"data-collection": regex, "filter": SQL}], "surrogate-key": column}``
  (the 1.x ``additional-condition`` string applies to every table);
- ``stop-snapshot``: ``{"type": "incremental", "data-collections": [...]}`` (none: the whole snapshot);
- ``pause-snapshot`` / ``resume-snapshot``;
- ``log``: ``{"message": "..."}``, ``{}`` replaced by the offset;
- ``snapshot-window-open`` / ``snapshot-window-close``: the watermarks (signal table only).

A signal that cannot be acted on is logged with its id, counted (:class:`~cdc.mysql.metrics.SignalMetrics`:
``cdc_mysql_signals_skipped_total`` and the task's REST status) and skipped; the stream never stops for it.
That covers any failure of its action, as Debezium's ``SignalProcessor`` logs "Action … failed" and goes
on: bad JSON, an ``additional-conditions`` filter that is not one SQL expression
(:mod:`~cdc.mysql.incremental.filters`), a pattern past its time budget
(:mod:`~cdc.mysql.incremental.patterns`), a blocking snapshot's query the server refuses. Since the stream
goes on, its offset moves past the signal and a restarted task never meets it again. Only a stopping
task's ``InterruptedError`` goes through.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from cdc.api.records import SourceRecord
from cdc.mysql.incremental import CLOSE_WINDOW, OPEN_WINDOW, IncrementalSnapshot
from cdc.mysql.incremental.filters import UnsafeFilterError, check_filter
from cdc.mysql.incremental.patterns import PatternError, SignalPatterns
from cdc.mysql.metrics import SignalMetrics
from cdc.mysql.signals.record import SignalError, SignalRecord

__all__ = ["BlockingSnapshot", "SignalActions"]

log = logging.getLogger(__name__)

BlockingSnapshot = Callable[[list[str], list[tuple[str, str]]], None]
"""Runs a blocking snapshot of the named tables (regexes) with per-table conditions."""


class SignalActions:
    def __init__(
        self,
        incremental: IncrementalSnapshot,
        blocking: BlockingSnapshot,
        prefix: str,
        metrics: SignalMetrics | None = None,
    ) -> None:
        self.incremental = incremental
        self.blocking = blocking
        self.prefix = prefix
        self.metrics = metrics if metrics is not None else SignalMetrics(prefix)
        self.position: Callable[[], dict[str, Any]] = dict
        """The streamer's current offset (for ``log`` signals of the file and kafka channels)."""

    def dispatch(self, signal: SignalRecord, record: SourceRecord | None = None) -> None:
        """Act on ``signal``; ``record`` is the signal row's change record (source channel). Whatever its
        action raises (but a stopping task's ``InterruptedError``) is logged and counted, and the signal
        skipped."""
        if not signal.type.startswith("snapshot-window-"):
            self.metrics.received += 1
        try:
            self._dispatch(signal, record)
        except InterruptedError:
            raise
        except Exception as exc:
            expected = isinstance(exc, (SignalError, UnsafeFilterError, PatternError))
            log.warning(
                "Signal '%s' of type '%s' from the %s channel skipped: %s",
                signal.id,
                signal.type,
                signal.channel,
                exc,
                exc_info=not expected,  # the trace of an unexpected failure, to tell what went wrong
            )
            self.metrics.skip(signal.id, signal.type, signal.channel, str(exc))

    def _dispatch(self, signal: SignalRecord, record: SourceRecord | None) -> None:
        kind = signal.type.strip().lower()
        if kind == OPEN_WINDOW:
            self.incremental.open_window(signal.id)
            return
        if kind == CLOSE_WINDOW:
            if record is None:
                raise SignalError("window signals come from the signal table only")
            self.incremental.close_window(signal.id, record)
            return
        data = signal.payload()
        log.info(
            "Received signal '%s' of type '%s' from the %s channel: %s", signal.id, kind, signal.channel, data
        )
        if kind == "execute-snapshot":
            self._execute(signal, data)
        elif kind == "stop-snapshot":
            snapshot_type = str(data.get("type") or "incremental").lower()
            if snapshot_type != "incremental":
                raise SignalError(f"only an incremental snapshot can be stopped, not '{snapshot_type}'")
            self.incremental.stop(_collections(data, required=False))
        elif kind == "pause-snapshot":
            self.incremental.pause()
        elif kind == "resume-snapshot":
            self.incremental.resume()
        elif kind == "log":
            message = data.get("message")
            if not isinstance(message, str):
                raise SignalError("a log signal needs a 'message' string")
            offset = dict(record.source_offset or {}) if record is not None else self.position()
            log.info("[%s] %s", self.prefix, message.replace("{}", str(offset), 1))
        else:
            raise SignalError("unknown signal type")

    def _execute(self, signal: SignalRecord, data: dict[str, Any]) -> None:
        collections = _collections(data, required=True)
        snapshot_type = str(data.get("type") or "incremental").strip().lower()
        conditions = _conditions(data)
        surrogate = data.get("surrogate-key") or ""
        if not isinstance(surrogate, str):
            raise SignalError("'surrogate-key' must be a column name")
        if snapshot_type == "incremental":
            if self.incremental.signal_table is None and not self.incremental.read_only:
                raise SignalError("an incremental snapshot needs signal.data.collection (its watermarks)")
            self.incremental.execute(signal.id, collections, conditions, surrogate.strip())
        elif snapshot_type == "blocking":
            self.blocking(collections, conditions)
        else:
            raise SignalError(f"unknown snapshot type '{snapshot_type}' (incremental or blocking)")


def _collections(data: dict[str, Any], required: bool) -> list[str]:
    value = data.get("data-collections")
    if value is None or value == []:
        if required:
            raise SignalError("'data-collections' is missing or empty")
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SignalError("'data-collections' must be a list of table names or regexes")
    return [v.strip() for v in value if v.strip()]


def _conditions(data: dict[str, Any]) -> list[tuple[str, str]]:
    """(pattern, filter) pairs, each filter checked to be one SQL expression before anything is read."""
    legacy = data.get("additional-condition")
    if isinstance(legacy, str) and legacy.strip():
        return [(".*", check_filter(legacy))]
    out: list[tuple[str, str]] = []
    items = data.get("additional-conditions") or []
    if not isinstance(items, list):
        raise SignalError("'additional-conditions' must be a list")
    patterns = SignalPatterns()
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("data-collection"), str):
            raise SignalError("each additional condition needs 'data-collection' and 'filter'")
        patterns.compile(item["data-collection"], ignore_case=True)
        out.append((item["data-collection"], check_filter(str(item.get("filter") or ""))))
    return out
