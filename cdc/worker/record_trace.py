"""Every record a source task polled, at TRACE: where a user reads each record's source offset.

A Kafka Connect user turns ``org.apache.kafka.connect.runtime.TransformationChain`` to TRACE to see each
record (its ``sourceOffset`` included) before the transforms; the same Java name (``PUT
/admin/loggers/org.apache.kafka.connect.runtime.TransformationChain``) turns on this module's logger,
``cdc.worker.record_trace``, which writes one line per polled record, before its transforms: its topic, source
partition and source offset as JSON (``record topic=T partition={...} offset={...}``), for any connector,
transforms or not. ``make compat`` reads these lines to compare cdc's offset after every record with the
one Debezium's record carries. Off, it costs the send loop one ``isEnabledFor`` per batch.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable

from cdc.api.records import SourceRecord

__all__ = ["LOGGER", "enabled", "log_records"]

LOGGER = __name__
TRACE = 5  # Log4j's TRACE, as cdc.worker.rest.loggers maps it
_log = logging.getLogger(LOGGER)


def enabled() -> bool:
    return _log.isEnabledFor(TRACE)


def _json(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), default=str)


def log_records(records: Iterable[SourceRecord]) -> None:
    for r in records:
        _log.log(
            TRACE,
            "record topic=%s partition=%s offset=%s",
            r.topic,
            _json(r.source_partition),
            _json(r.source_offset),
        )
