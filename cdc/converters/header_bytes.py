"""A record's headers as Kafka header bytes, through a header converter, reusing the bytes of headers seen
before.

Sources hand the same :class:`~cdc.api.records.Header` objects with every record (the MySQL source's four
``__debezium.context.*`` headers): converting them again per record is most of a record's header cost, and
the answer cannot change. A header's bytes are kept by the header object's identity and the topic (a
header converter is told the topic), and only when its value is of an immutable type: a frozen ``Header``
holding a ``str`` or a number says the same thing every time, one holding a ``Struct`` (mutable) is
converted each time. The cached entry holds the header itself, so its ``id`` is never reused for another
object while the entry lives. The cache is bounded: a source making fresh headers per record (nothing to
reuse) only costs a clear every :data:`MAX_ENTRIES` headers.

Converters are functions of their inputs (Connect's contract, which the worker already relies on when it
re-runs a failed record's stages one by one), so the bytes are those a fresh conversion gives.
"""

from __future__ import annotations

from typing import Any

from cdc.api.plugins import HeaderConverter
from cdc.api.records import Headers

__all__ = ["MAX_ENTRIES", "HeaderBytes"]

MAX_ENTRIES = 1024

_IMMUTABLE: frozenset[type] = frozenset((str, bytes, int, float, bool, type(None)))

KafkaHeaders = list[tuple[str, bytes | None]]


class HeaderBytes:
    """``encode(topic, headers)`` → ``[(key, bytes)]`` as the converter gives them, cached as described in
    the module docstring."""

    __slots__ = ("_by_topic", "_entries", "converter")

    def __init__(self, converter: HeaderConverter) -> None:
        self.converter = converter
        # topic → id(header) → (header, (key, bytes))
        self._by_topic: dict[str, dict[int, tuple[Any, tuple[str, bytes | None]]]] = {}
        self._entries = 0

    def encode(self, topic: str, headers: Headers) -> KafkaHeaders:
        cache = self._by_topic.get(topic)
        if cache is None:
            cache = self._by_topic[topic] = {}
        out: KafkaHeaders = []
        for h in headers:
            entry = cache.get(id(h))
            if entry is not None and entry[0] is h:
                out.append(entry[1])
                continue
            pair = (h.key, self.converter.from_connect_header(topic, h.key, h.schema, h.value))
            if type(h.value) in _IMMUTABLE:
                if self._entries >= MAX_ENTRIES:
                    self._by_topic.clear()
                    self._entries = 0
                    cache = self._by_topic[topic] = {}
                cache[id(h)] = (h, pair)
                self._entries += 1
            out.append(pair)
        return out
