"""The task's ``Starting … with configuration:`` log line, as Debezium's ``BaseSourceTask`` writes it:
every key of the connector's config, one a line, with the values of passwords, of secret-looking names
and of the keys ``custom.sanitize.pattern`` matches (:mod:`cdc.config.sanitize`) shown as ``[hidden]``."""

from __future__ import annotations

from collections.abc import Mapping

from cdc.config import Password
from cdc.config.sanitize import sanitized_keys
from cdc.mysql.config import MYSQL_DEF

__all__ = ["configuration_line"]


def configuration_line(task: str, props: Mapping[str, str]) -> str:
    masked = MYSQL_DEF.masked(props)
    for key in sanitized_keys(props):
        masked[key] = Password.HIDDEN
    lines = "".join(f"\n   {k} = {masked[k]}" for k in sorted(masked))
    return f"Starting {task} with configuration:{lines}"
