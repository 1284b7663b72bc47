"""FileStreamSource and FileStreamSink: Kafka Connect's file connectors.

``PLUGINS`` maps every name a user may write in ``connector.class`` to its implementation; the
modules are imported only when a connector is first used (or when a name below is imported).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cdc.file.sink import FileStreamSinkConnector, FileStreamSinkTask
    from cdc.file.source import FileStreamSourceConnector, FileStreamSourceTask

__all__ = [
    "PLUGINS",
    "FileStreamSinkConnector",
    "FileStreamSinkTask",
    "FileStreamSourceConnector",
    "FileStreamSourceTask",
]

_SOURCE = "cdc.file.source:FileStreamSourceConnector"
_SINK = "cdc.file.sink:FileStreamSinkConnector"

PLUGINS: dict[str, str] = {
    "org.apache.kafka.connect.file.FileStreamSourceConnector": _SOURCE,
    "FileStreamSourceConnector": _SOURCE,
    "FileStreamSource": _SOURCE,
    "org.apache.kafka.connect.file.FileStreamSinkConnector": _SINK,
    "FileStreamSinkConnector": _SINK,
    "FileStreamSink": _SINK,
}

_LAZY = {
    "FileStreamSourceConnector": "cdc.file.source",
    "FileStreamSourceTask": "cdc.file.source",
    "FileStreamSinkConnector": "cdc.file.sink",
    "FileStreamSinkTask": "cdc.file.sink",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
