"""``GET /metrics``: the worker's, its tasks' and its connectors' metrics in Prometheus' text format.

What is shown: the app's own source (Kafka Connect's worker and task metrics,
:class:`cdc.worker.connect_metrics.ConnectMetrics`, handed to :func:`~cdc.worker.rest.app.create_app`)
and every source the connectors registered in :data:`cdc.metrics.REGISTRY` (Debezium's MySQL metrics,
the JDBC source's), and the process' own as every Prometheus client library exports them
(``process_cpu_seconds_total``, ``process_resident_memory_bytes``, ``process_open_fds``,
``process_start_time_seconds``… and ``python_info``), which the JVM's agent gives for a Java worker.
``prometheus_client`` writes the text (types, HELP, label escaping); it is imported, and the registry
built, by the first scrape (a worker that is never scraped does not load it).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from cdc.metrics import REGISTRY, MetricSource, Reading, families

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry
    from prometheus_client.metrics_core import Metric

__all__ = ["Exposition", "exposition", "readings", "routes"]


class _Collector:
    def __init__(self, own: MetricSource | None) -> None:
        self.own = own

    def collect(self) -> Iterator[Metric]:
        yield from families(readings(self.own))


def readings(own: MetricSource | None) -> Iterator[Reading]:
    """``own``'s readings, then the connectors'."""
    if own is not None:
        yield from own.readings()
    yield from REGISTRY.readings()


def exposition(own: MetricSource | None) -> CollectorRegistry:
    """A ``prometheus_client`` registry over ``own``, the connectors' sources and this process."""
    from prometheus_client import CollectorRegistry, PlatformCollector, ProcessCollector

    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Collector(own))
    ProcessCollector(registry=registry)
    PlatformCollector(registry=registry)
    return registry


class Exposition:
    """What ``app.state.metrics`` holds: :func:`exposition`'s registry, built on first use."""

    def __init__(self, own: MetricSource | None) -> None:
        self.own = own
        self._registry: CollectorRegistry | None = None

    def registry(self) -> CollectorRegistry:
        if self._registry is None:  # the event loop's thread only: no lock needed
            self._registry = exposition(self.own)
        return self._registry


async def metrics(request: Request) -> Response:
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

    lazy: Exposition = request.app.state.metrics
    return Response(generate_latest(lazy.registry()), media_type=CONTENT_TYPE_LATEST)


routes = [Route("/metrics", metrics, methods=["GET"])]
