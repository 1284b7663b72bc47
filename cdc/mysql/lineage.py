"""The MySQL/MariaDB task's side of the OpenLineage integration (:mod:`cdc.openlineage`).

Where Debezium's ``BaseSourceTask`` emits: START as the task starts (before it connects), RUNNING once it
runs, FAIL with the error that fails it, COMPLETE when it stops; and ``RelationalDatabaseSchema``'s RUNNING
with an input dataset for each captured table whose schema is built (:attr:`SchemaState.on_table`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from cdc.api.connector import SourceTaskContext
from cdc.config import ConfigType
from cdc.history.model import Table
from cdc.mysql.config import MYSQL_DEF, MySqlSettings

if TYPE_CHECKING:  # openlineage-python is imported only by a task that turns the integration on
    from cdc.openlineage.emitter import LineageEmitter

__all__ = ["close_lineage", "input_dataset", "open_lineage"]


def _secret_keys() -> list[str]:
    return [k.name for k in MYSQL_DEF.keys() if k.type is ConfigType.PASSWORD]  # noqa: SIM118


def open_lineage(
    settings: MySqlSettings,
    props: Mapping[str, str],
    connector: str,
    context: SourceTaskContext,
    task_id: str,
    run_id: str,
) -> LineageEmitter | None:
    """The task's emitter, registered for the transform and its START sent; None when the integration is
    off. A ConfigError when the OpenLineage file cannot be used (outside the allowed paths, no such file,
    a transport cdc does not have): the task fails, as Debezium's fails to build its client."""
    if not settings.lineage.enabled:
        return None
    from cdc.openlineage.config import load_transport
    from cdc.openlineage.emitter import LineageEmitter, client_for, register

    transport = load_transport(settings.lineage, context.file_refusal)
    emitter = LineageEmitter(
        settings.lineage,
        client_for(transport),
        prefix=settings.prefix,
        task_id=task_id,
        connector=connector,
        run_id=run_id,
        config=props,
        secret_keys=_secret_keys(),
    )
    register(emitter)
    emitter.start()
    return emitter


def input_dataset(emitter: LineageEmitter, table: Table) -> None:
    """RUNNING with ``table`` as an input dataset: each column's name, type name and comment."""
    emitter.table(
        table.id.database, table.id.table, [(c.name, c.type_name, c.comment) for c in table.columns]
    )


def close_lineage(emitter: LineageEmitter, error: BaseException | None = None, failed: bool = False) -> None:
    """FAIL with ``error`` (a task that failed), or COMPLETE unless the run already ended with FAIL
    (``failed``: OpenLineage's FAIL and COMPLETE both end a run); then send what is pending and close."""
    from cdc.openlineage.emitter import unregister

    if error is not None:
        emitter.fail(error)
    elif not failed:
        emitter.complete()
    unregister(emitter)
    emitter.close()
