"""Running connectors in the test's own process: a standalone worker, or a source task without a worker.

* :func:`standalone` — a started standalone :class:`~cdc.worker.runtime.ConnectRuntime`, stopped on exit.
* :class:`NoOffsetsContext` — the context of a source task started by hand, with no stored offsets.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from cdc.api.connector import OffsetStorageReader, SourceTaskContext
from cdc.worker.runtime import ConnectRuntime, build_standalone

__all__ = ["NoOffsetsContext", "standalone"]


@contextmanager
def standalone(props: Mapping[str, str]) -> Iterator[ConnectRuntime]:
    runtime = build_standalone(dict(props))
    runtime.start()
    try:
        yield runtime
    finally:
        runtime.stop()


class _NoOffsets(OffsetStorageReader):
    def offsets(self, partitions: Any) -> dict[str, dict[str, Any]]:
        return {}


class NoOffsetsContext(SourceTaskContext):
    def configs(self) -> dict[str, str]:
        return {}

    def offset_storage_reader(self) -> OffsetStorageReader:
        return _NoOffsets()
