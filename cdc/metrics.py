"""Metrics of the connectors and the worker, rendered for Prometheus at the worker's ``GET /metrics``.

A source registers an object with ``attributes() -> {name: number | bool | {label: number}}`` under a
context (``snapshot``, ``streaming`` …) and a server name; the worker's REST API renders them all in
the Prometheus text format. Names keep Debezium's JMX attribute names
(``debezium_mysql_streaming_MilliSecondsBehindSource{server="…"}``).
"""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["REGISTRY", "MetricsRegistry"]


class MetricsRegistry:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sources: dict[tuple[str, str], Any] = {}
        self._prefixes: dict[tuple[str, str], str] = {}

    def register(self, context: str, server: str, source: Any, prefix: str = "debezium_mysql") -> None:
        with self._lock:
            self._sources[(context, server)] = source
            self._prefixes[(context, server)] = prefix

    def unregister(self, context: str, server: str) -> None:
        with self._lock:
            self._sources.pop((context, server), None)

    def render(self) -> str:
        """Prometheus text exposition of every registered metric."""
        lines: list[str] = []
        with self._lock:
            items = list(self._sources.items())
        for (context, server), source in items:
            prefix = self._prefixes.get((context, server), "cdc")
            for name, value in source.attributes().items():
                metric = f"{prefix}_{context}_{name}"
                if isinstance(value, bool):
                    value = int(value)
                if isinstance(value, dict):
                    for key, v in value.items():
                        lines.append(f'{metric}{{server="{server}",table="{key}"}} {v}')
                elif isinstance(value, (int, float)):
                    lines.append(f'{metric}{{server="{server}"}} {value}')
        return "\n".join(lines) + "\n"


REGISTRY = MetricsRegistry()
