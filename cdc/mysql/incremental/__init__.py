"""Incremental snapshots (DBLog watermarks, as Debezium runs them): state, Java-serialized keys, engine."""

from cdc.mysql.incremental.context import DataCollection, IncrementalContext
from cdc.mysql.incremental.snapshot import IncrementalSnapshot
from cdc.mysql.incremental.window import CLOSE_WINDOW, OPEN_WINDOW

__all__ = ["CLOSE_WINDOW", "OPEN_WINDOW", "DataCollection", "IncrementalContext", "IncrementalSnapshot"]
