"""The metric sources behind the worker's ``GET /metrics``, rendered by ``prometheus_client``.

A source is anything with ``readings() -> Iterable[Reading]``: a name, a value, labels, a HELP text and
whether it is a counter. Sources come and go with the tasks that own them, so they are kept here by key
rather than registered as collectors in a ``prometheus_client`` registry (which refuses two collectors
naming the same metric, as two MySQL connectors would). :class:`MetricsRegistry` is itself one collector:
it merges every source's readings into one family per metric name, and ``prometheus_client`` writes the
text format (types, HELP, label escaping).

Debezium's connectors keep their JMX shape: an object with ``attributes() -> {Attribute: number | bool |
{table: number}}`` registered under a context and a server (:meth:`MetricsRegistry.register`) becomes
``debezium_mysql_<context>_<Attribute>{server="…"}``, per-table maps adding a ``table`` label (the MBean
``debezium.mysql:type=connector-metrics,context=…,server=…`` flattened). A text attribute (the incremental
snapshot's ``ChunkId``, ``TableFrom``…) is a sample of 1 carrying the text in a ``value`` label, and a list
(``CapturedTables``) one sample of 1 per item in a ``table`` label; an empty text gives no sample.

The MBean names only the server (``topic.prefix``); dashboards and alerts select by connector, so every
series of a server also carries ``connector="<name>"`` once the task reporting under it has said whose it is
(:meth:`MetricsRegistry.set_connector`). Numbers and booleans are given a second time under the name the
Prometheus JMX exporter's *default* rule (no ``rules:`` in its config) makes of the same MBean:
``debezium_mysql_connector_metrics_<Attribute>{context="…",server="…"}`` (the domain, the first key's value,
the attribute; the other keys as labels), so queries written against either spelling read cdc unchanged.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # prometheus_client is imported by the first scrape, not by a worker's start
    from prometheus_client.metrics_core import Metric

__all__ = ["REGISTRY", "MetricSource", "MetricsRegistry", "Reading"]


@dataclass(frozen=True)
class Reading:
    """One sample: ``name{labels} value``. Counters are named without ``_total`` (prometheus adds it)."""

    name: str
    value: float
    labels: Mapping[str, str] = field(default_factory=dict)
    help: str = ""
    counter: bool = False


class MetricSource(Protocol):
    def readings(self) -> Iterable[Reading]: ...


class _AttributeSource:
    """A Debezium-style ``attributes()`` object as readings (see the module docstring)."""

    def __init__(
        self,
        prefix: str,
        context: str,
        server: str,
        source: Any,
        extra: MetricSource | None,
        connectors: Mapping[str, str],
    ) -> None:
        self.prefix, self.context, self.server, self.source = prefix, context, server, source
        self.extra = extra
        self.connectors = connectors

    def readings(self) -> Iterator[Reading]:
        base = {"server": self.server}
        connector = self.connectors.get(self.server)
        if connector:
            base["connector"] = connector
        default_rule = f"{self.prefix}_connector_metrics_"
        for attribute, value in self.source.attributes().items():
            name = f"{self.prefix}_{self.context}_{attribute}"
            mbean = f"{self.prefix.replace('_', '.')}:type=connector-metrics,context={self.context}"
            doc = f"{attribute} of {mbean}"
            if isinstance(value, Mapping):
                for table, v in value.items():
                    yield Reading(name, float(v), {**base, "table": str(table)}, doc)
            elif isinstance(value, (bool, int, float)):
                yield Reading(name, float(value), base, doc)
                yield Reading(default_rule + attribute, float(value), {**base, "context": self.context}, doc)
            elif isinstance(value, str):  # ChunkId, TableFrom…: the text as a label, as an info metric is
                if value:
                    yield Reading(name, 1.0, {**base, "value": value}, doc)
            elif isinstance(value, (list, tuple)):  # CapturedTables: one sample per table
                for item in value:
                    yield Reading(name, 1.0, {**base, "table": str(item)}, doc)
        if self.extra is not None:
            for r in self.extra.readings():
                if connector and "connector" not in r.labels:
                    r = Reading(r.name, r.value, {**r.labels, "connector": connector}, r.help, r.counter)
                yield r


class MetricsRegistry:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sources: dict[Hashable, MetricSource] = {}
        self._connectors: dict[str, str] = {}
        self._tags: dict[str, dict[str, str]] = {}

    def add(self, key: Hashable, source: MetricSource) -> None:
        """Add (or replace) the source kept under ``key``."""
        with self._lock:
            self._sources[key] = source

    def remove(self, key: Hashable) -> None:
        with self._lock:
            self._sources.pop(key, None)

    def register(
        self,
        context: str,
        server: str,
        source: Any,
        prefix: str = "debezium_mysql",
        extra: MetricSource | None = None,
    ) -> None:
        """Add an ``attributes()`` object (Debezium's MBean shape) for ``context`` and ``server``, with
        ``extra`` readings of cdc's own that come and go with it."""
        self.add(
            ("attributes", context, server),
            _AttributeSource(prefix, context, server, source, extra, self._connectors),
        )

    def unregister(self, context: str, server: str) -> None:
        self.remove(("attributes", context, server))

    def set_connector(self, server: str, connector: str) -> None:
        """``server``'s series carry ``connector="<connector>"`` from now on (the task reporting under
        ``server`` says whose it is as it starts)."""
        with self._lock:
            self._connectors[server] = connector

    def set_tags(self, server: str, tags: Mapping[str, str]) -> None:
        """Labels every series of ``server`` carries too (``custom.metric.tags``: Debezium appends them to
        its MBeans' names, which the JMX exporter makes labels); a label a series has already is kept."""
        with self._lock:
            if tags:
                self._tags[server] = dict(tags)
            else:
                self._tags.pop(server, None)

    def connector_of(self, server: str) -> str | None:
        """The connector ``server``'s series carry (:meth:`set_connector`), if one said so."""
        with self._lock:
            return self._connectors.get(server)

    def forget_server(self, server: str) -> None:
        """A stopped task's metrics: every context of ``server`` (Debezium's ``("attributes", context,
        server)`` sources and cdc's own ``(kind, server)`` ones) and its connector name go, so that a deleted
        or stopped connector's series disappear from the next scrape."""
        with self._lock:
            for key in list(self._sources):
                if not isinstance(key, tuple):
                    continue
                if (key[0] == "attributes" and len(key) == 3 and key[2] == server) or (
                    len(key) == 2 and key[1] == server
                ):
                    del self._sources[key]
            self._connectors.pop(server, None)
            self._tags.pop(server, None)

    def readings(self) -> Iterator[Reading]:
        with self._lock:
            sources = list(self._sources.values())
            tags = dict(self._tags)
        for source in sources:
            for r in source.readings():
                extra = tags.get(r.labels.get("server", "")) if tags else None
                if extra:
                    r = Reading(r.name, r.value, {**extra, **r.labels}, r.help, r.counter)
                yield r

    def collect(self) -> Iterator[Metric]:
        """The ``prometheus_client`` collector protocol: one family per metric name."""
        yield from families(self.readings())


def families(readings: Iterable[Reading]) -> Iterator[Metric]:
    """Readings grouped into ``prometheus_client`` metric families, in the order names first appear."""
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

    grouped: dict[str, Metric] = {}
    for r in readings:
        family = grouped.get(r.name)
        if family is None:
            kind = CounterMetricFamily if r.counter else GaugeMetricFamily
            family = grouped[r.name] = kind(r.name, r.help or r.name, labels=())
        suffix = "_total" if r.counter else ""
        family.add_sample(family.name + suffix, dict(r.labels), r.value)
    yield from grouped.values()


REGISTRY = MetricsRegistry()
