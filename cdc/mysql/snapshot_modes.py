"""``snapshot.mode=configuration_based``: Debezium's ``ConfigurationBasedSnapshotter``, as a start plan.

Its five switches (``snapshot.mode.configuration.based.*``, all false by default) answer the snapshotter's
questions on every start, whatever the stored offset says: ``snapshot.data`` (read every captured table,
the schema with it), ``snapshot.schema`` (read the schema), ``start.stream`` (stream afterwards),
``snapshot.on.schema.error`` (the schema history is gone: read the schema again instead of failing) and
``snapshot.on.data.error`` (the offset's binlog position is gone: snapshot again instead of failing).
They map onto the plans :meth:`cdc.mysql.task.MySqlSourceTask._plan` runs for the other modes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cdc.api.errors import ConnectError

if TYPE_CHECKING:  # config.py need not import this module
    from cdc.mysql.config import MySqlSettings

__all__ = ["ConfigurationBased", "configuration_based_plan"]

PREFIX = "snapshot.mode.configuration.based."


@dataclass(frozen=True)
class ConfigurationBased:
    data: bool = False
    schema: bool = False
    stream: bool = False
    on_schema_error: bool = False
    on_data_error: bool = False

    @classmethod
    def of(cls, settings: MySqlSettings) -> ConfigurationBased:
        return cls(
            settings.snapshot_mode_configuration_based_snapshot_data,
            settings.snapshot_mode_configuration_based_snapshot_schema,
            settings.snapshot_mode_configuration_based_start_stream,
            settings.snapshot_mode_configuration_based_snapshot_on_schema_error,
            settings.snapshot_mode_configuration_based_snapshot_on_data_error,
        )


def configuration_based_plan(
    switches: ConfigurationBased,
    has_offset: bool,
    binlog_available: Callable[[], bool],
    history_exists: Callable[[], bool],
) -> str:
    """The task's plan (``snapshot``, ``snapshot_only``, ``schema``, ``recover_schema``, ``stream``,
    ``stream_from_start`` or ``idle``) for these switches."""
    if switches.data:
        return "snapshot" if switches.stream else "snapshot_only"
    if not switches.stream:
        if switches.schema:
            raise ConnectError(
                f"{PREFIX}snapshot.schema=true without {PREFIX}start.stream or {PREFIX}snapshot.data reads a "
                "schema nothing uses: set one of them"
            )
        return "idle"
    if not has_offset:
        return "schema" if switches.schema else "stream_from_start"
    if not binlog_available():
        if switches.on_data_error:
            return "snapshot"
        raise ConnectError(
            "The connector's binlog position is no longer on the server; set "
            f"{PREFIX}snapshot.on.data.error=true to snapshot again"
        )
    if switches.schema:
        return "recover_schema"
    if not history_exists():
        if switches.on_schema_error:
            return "recover_schema"
        raise ConnectError(
            f"The schema history is missing; set {PREFIX}snapshot.on.schema.error=true to read the "
            "schema again"
        )
    return "stream"
