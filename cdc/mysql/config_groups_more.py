"""Keys declared outside :mod:`cdc.mysql.config_groups` (which is at the house's size line): Debezium's
recovery and legacy snapshot settings, each with its meaning in cdc."""

from __future__ import annotations

from cdc.config import ConfigDef
from cdc.config.shorthands import LO, B, S
from cdc.mysql.config_groups import ADV, SNAP

__all__ = ["define_more"]


def define_more(d: ConfigDef) -> None:
    d.define(
        "gtid.ignore.on.recovery",
        B,
        False,
        None,
        LO,
        "Whether a restart ignores the offset's GTID set and resumes from its binlog file and position "
        "(as Debezium 3.6: the set is dropped from the offset, and GTIDs are tracked again from the "
        "first transaction read); false: on MariaDB the GTID set finds the position, also after a "
        "failover.",
        group=ADV,
    )
    d.define(
        "snapshot.new.tables",
        S,
        "off",
        None,
        LO,
        "Debezium 1.x's snapshot of tables added to the include list; Debezium 3.6 reads no such key "
        "(any value is accepted and changes nothing), nor does cdc: use an incremental snapshot signal "
        "for a newly captured table.",
        group=SNAP,
    )
    d.define(
        "legacy.snapshot.max.threads",
        B,
        False,
        None,
        LO,
        "With snapshot.max.threads > 1, read each table whole on one reader thread (Debezium's legacy "
        "table-per-thread snapshot) rather than cut into key-range chunks shared by all the threads: up to "
        "snapshot.max.threads tables are read at once, each streamed a batch at a time (never held whole), "
        "their records written table after table as with one reader.",
        group=SNAP,
        aliases=("internal.legacy.snapshot.max.threads",),
    )
