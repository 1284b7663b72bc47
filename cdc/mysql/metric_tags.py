"""``custom.metric.tags``: ``k1=v1,k2=v2`` appended to the connector's metric names.

Debezium appends the pairs to each MBean's object name
(``debezium.mysql:type=connector-metrics,context=streaming,server=p,k1=v1``); the Prometheus JMX exporter's
default rule turns every key after the first into a label. cdc's metrics are that flattening
(:mod:`cdc.metrics`), so each pair becomes a label on every series of the connector's server, under both
spellings (``debezium_mysql_streaming_…`` and ``debezium_mysql_connector_metrics_…``) and on cdc's own
series. Validation is Debezium's (``Field.isListOfMap``, ``validateCustomMetricTags``), plus the keys the
object name already has, which would clash.
"""

from __future__ import annotations

import re
from typing import Any

from cdc.api.errors import ConfigError

__all__ = ["parse_metric_tags", "validate_metric_tags"]

_MAP_EXPECTED = "A equivalent-separated map of valid key/value pairs is expected, for example: k1=v1,k2=v2"
_JMX_KEY = re.compile(r'[^,=:"*?\n]+')  # ObjectName: a key holds none of , = : " * ? (nor a newline)
_TAKEN = ("type", "context", "server", "connector", "table", "task")


def _pairs(value: str) -> list[list[str]]:
    return [[i.strip() for i in v.split("=")] for v in (x.strip() for x in value.split(",")) if v]


def validate_metric_tags(name: str, value: Any) -> None:
    """The config validator: an error naming the key for a value Debezium refuses (or that would clash)."""
    if value is None or not str(value).strip():
        return
    for items in _pairs(str(value)):
        if len(items) != 2:
            raise ConfigError(_MAP_EXPECTED, name, value)
        key = items[0]
        if not _JMX_KEY.fullmatch(key):
            message = f"The custom metric tag key '{key}' is not a valid JMX ObjectName property key"
            raise ConfigError(message, name, value)
        if key.lower() in _TAKEN:
            raise ConfigError(
                f"The custom metric tag key '{key}' is one of the metric names' own keys "
                f"({', '.join(_TAKEN)})",
                name,
                value,
            )


def parse_metric_tags(value: str | None) -> dict[str, str]:
    """The tags as labels, in order (a repeated key: the last value, as Debezium's map keeps it); a key is
    made a valid label name as the JMX exporter makes it (invalid characters as ``_``)."""
    out: dict[str, str] = {}
    for key, val in (p for p in _pairs(value or "") if len(p) == 2):
        label = re.sub(r"[^a-zA-Z0-9_]", "_", key)
        out["_" + label if label[:1].isdigit() else label] = val
    return out
