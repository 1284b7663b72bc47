"""Debezium's MySQL/MariaDB keys that cdc does not declare: refused with a reason, or read as a group.

``MYSQL_DEF`` (:mod:`cdc.mysql.config`) declares every key cdc honours. This module is the rest of
Debezium 3.x's key list, as data:

* :data:`REFUSED`: keys cdc does not implement. Validate answers an error on the key naming it and why,
  except when the value given is Debezium's default (``accepted``): such a setting changes nothing, so a
  config copied from a Debezium deployment that spells defaults out keeps working. A key that another
  part of cdc declares later (signals, incremental snapshots) is declared in ``MYSQL_DEF`` and no longer
  reaches this list: the refusal is only ever for keys *not* declared.
* :data:`LIMITED`: declared keys of which only some values are implemented (others are refused).
* :data:`PATTERN_KEYS`: the keys whose names carry a parameter (``column.mask.with.12.chars``,
  ``column.mask.hash.SHA-256.with.salt.x``, ``column.truncate.to.20.chars``), honoured by
  :mod:`cdc.mysql.columns`, and the per-converter keys ``<name>.type``/``<name>.<option>`` of
  ``converters``.
* :data:`DRIVER_PREFIXES`: ``database.*`` keys that Debezium hands to its JDBC driver
  (``database.allowPublicKeyRetrieval`` …). cdc speaks the MySQL protocol through PyMySQL, not JDBC:
  they are accepted and logged as having no effect (refusing them would break most MySQL 8 configs).
* :func:`typo_errors`: an undeclared key close to a *filter* key (``table.include.lsit``) is an error:
  a misspelt include list would otherwise capture — and snapshot under a lock — every database.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

__all__ = [
    "DRIVER_PREFIXES",
    "FILTER_KEYS",
    "LIMITED",
    "NOTES",
    "PATTERN_KEYS",
    "REFUSED",
    "Refusal",
    "closest_key",
    "refusal_error",
    "typo_errors",
]


@dataclass(frozen=True)
class Refusal:
    """A Debezium key cdc does not implement; ``pattern`` is matched whole (a regex)."""

    pattern: str
    reason: str
    accepted: tuple[str, ...] = ()
    """Values that equal Debezium's default (compared case-insensitively): accepted, they change nothing."""

    def matches(self, key: str) -> bool:
        return re.fullmatch(self.pattern, key) is not None


REFUSED: tuple[Refusal, ...] = (
    # -- signal and incremental-snapshot keys cdc does not declare (docs/snapshots.md lists those it does)
    Refusal(r"signal\..+", "this signal setting is not implemented (docs/snapshots.md, 'Signals')"),
    Refusal(r"incremental\.snapshot\..+", "this incremental-snapshot setting is not implemented"),
    Refusal(
        r"notification\..+",
        "this notification setting is not implemented (notification.enabled.channels and "
        "notification.sink.topic.name are)",
    ),
    # -- features cdc does not have
    Refusal(
        r"transaction\.metadata\.factory",
        "only the default transaction metadata is implemented",
        ("io.debezium.pipeline.txmetadata.DefaultTransactionMetadataFactory",),
    ),
    Refusal(
        r"sourceinfo\.struct\.maker",
        "Debezium 3.6 has no other source block maker for MySQL or MariaDB than the default (another is a "
        "Java class): reshape the source block with a transform (ReplaceField, InsertField)",
        (
            "io.debezium.connector.mysql.MySqlSourceInfoStructMaker",
            "io.debezium.connector.mariadb.MariaDbSourceInfoStructMaker",
        ),
    ),
    Refusal(r"snapshot\.mode\.custom\.name", "custom snapshot modes are not implemented", ("",)),
    Refusal(
        r"snapshot\.query\.mode",
        "custom, Debezium's only other value, runs a Java SnapshotQuery class (snapshot.query.mode.custom"
        ".name): set a table's snapshot SELECT with snapshot.select.statement.overrides instead",
        ("select_all",),
    ),
    Refusal(
        r"snapshot\.query\.mode\.custom\.name",
        "it names a Java SnapshotQuery class: set a table's snapshot SELECT with "
        "snapshot.select.statement.overrides instead",
        ("",),
    ),
    Refusal(r"snapshot\.locking\.mode\.custom\.name", "custom locking modes are not implemented", ("",)),
    Refusal(
        r"database\.jdbc\.driver",
        "cdc does not use a JDBC driver",
        (
            "com.mysql.cj.jdbc.Driver",
            "org.mariadb.jdbc.Driver",
        ),
    ),
    Refusal(r"database\.protocol", "cdc does not use a JDBC driver", ("jdbc:mysql", "jdbc:mariadb")),
    Refusal(
        r"binlog\.buffer\.size",
        "cdc does not hold a transaction's events back to drop them at a ROLLBACK: as with Debezium's "
        "default 0, the rows of a transaction the binlog ends with ROLLBACK (non-transactional tables "
        "written in it) are emitted",
        ("0",),
    ),
    # -- new in Debezium 3.6's MySqlConnector
    Refusal(
        r"memory\.management\.(schemas|tables)\.class",
        "a Java class of Debezium's in-memory table model; cdc keeps its own",
        ("io.debezium.relational.ConcurrentMapTableMappingStorage",),
    ),
    Refusal(
        r"ddl\.parser\.type",
        "cdc parses DDL with its own parser (cdc/mysql/ddl), not Debezium's ANTLR grammars",
        ("default",),
    ),
    Refusal(r"internal\..+", "an internal Debezium setting"),
)

LIMITED: tuple[Refusal, ...] = (
    Refusal(
        r"incremental\.snapshot\.allow\.schema\.changes",
        "Debezium's re-read of a chunk whose table changed schema meanwhile is not implemented; snapshot a "
        "table altered during its incremental snapshot again",
        ("false",),
    ),
)
"""Declared keys of which cdc implements only some values: any other value is refused, naming the key."""

PATTERN_KEYS: tuple[str, ...] = (
    r"signal\.consumer\..+",
    r"column\.mask\.with\.\d+\.chars",
    r"column\.mask\.hash\.(v[12]\.)?[^.]+\.with\.salt\..+",
    r"column\.truncate\.to\.\d+\.chars",
)
"""Parameterised key names: the Kafka signal channel's consumer settings (:mod:`cdc.mysql.signals`) and
the column rules (:mod:`cdc.mysql.columns`)."""

DRIVER_PREFIXES: tuple[str, ...] = ("database.", "driver.")
"""Prefixes of keys Debezium passes to its JDBC driver; cdc accepts them and logs that they do nothing."""

FILTER_KEYS: tuple[str, ...] = (
    "database.include.list",
    "database.exclude.list",
    "table.include.list",
    "table.exclude.list",
    "column.include.list",
    "column.exclude.list",
    "snapshot.include.collection.list",
    "database.whitelist",
    "database.blacklist",
    "table.whitelist",
    "table.blacklist",
    "column.whitelist",
    "column.blacklist",
)


def refusal_error(key: str, value: str, refusals: tuple[Refusal, ...] = REFUSED) -> str | None:
    """The validate error for a Debezium key cdc does not (fully) implement, or None when it is not one
    (or its value is harmless); ``refusals``: :data:`REFUSED` (undeclared keys) or :data:`LIMITED`."""
    for refusal in refusals:
        if refusal.matches(key):
            if value.strip().lower() in {a.lower() for a in refusal.accepted}:
                return None
            accepted = ""
            if refusal.accepted:
                default = repr(refusal.accepted[0]) if refusal.accepted[0] else "an empty value"
                accepted = f" (only {default}, Debezium's default, is accepted)"
            return f"The '{key}' value {value!r} is not supported by cdc: {refusal.reason}{accepted}"
    return None


def closest_key(key: str, known: Iterable[str], cutoff: float = 0.8) -> str | None:
    """The known key ``key`` is most likely a misspelling of, if any is close enough."""
    matches = difflib.get_close_matches(key, list(known), n=1, cutoff=cutoff)
    return matches[0] if matches else None


def typo_errors(props: Mapping[str, str], known: Callable[[str], bool]) -> dict[str, str]:
    """Unknown keys (``known`` says which are not) that look like a misspelt filter key → the error
    naming the intended key."""
    out: dict[str, str] = {}
    for key in props:
        if known(key):
            continue
        intended = closest_key(key, FILTER_KEYS)
        if intended is not None:
            out[key] = (
                f"'{key}' is not a known configuration; did you mean {intended}? A misspelt filter is "
                "refused: without it every database would be captured (and snapshotted under a lock)."
            )
    return out


DIFFERS: dict[str, str] = {
    "include.unknown.datatypes": (
        "accepted; Debezium 3.6's MySQL connector reads no such key and leaves a column of a type it cannot "
        "map (MariaDB's INET4, INET6 …) out of its events with a WARN; cdc writes such columns as bytes "
        "either way (UUID too, which Debezium's MariaDB connector writes as an io.debezium.data.Uuid string)"
    ),
}
"""Declared keys that behave differently from Debezium's, and how."""

NOTES: dict[str, str] = {
    "database.connectionTimezone": (
        "Debezium's MySQL connector hands the key to Connector/J, whose reading of snapshot TIMESTAMP text "
        "in a zone other than the server's was not compared; its MariaDB connector, side by side with "
        "America/New_York (bench/compat row connection-time-zone), writes the same instants as cdc in "
        "snapshot, incremental snapshot and streaming"
    ),
    "connect.keep.alive.interval.ms": (
        "cdc asks for a binlog heartbeat at least every second (heartbeat.interval.ms and signals are served "
        "between events), Debezium every 0.8 x the interval"
    ),
    "errors.max.retries": (
        "cdc opens the binlog connection again in the task (backing off 1-30 s) where Debezium restarts the "
        "task; the count starts again once the stream moves on, as Debezium's once a change event gets "
        "through"
    ),
    "schema.history.internal": (
        "Debezium's Kafka, file and memory histories; its other stores (S3, Redis, JDBC …) are refused"
    ),
}
"""Honoured keys with a difference from Debezium that remains, said in the key table."""

CDC_ONLY = (
    "include.list.unmatched.mode",
    "snapshot.engine",
    "snapshot.spark.",
    "incremental.snapshot.engine",
    "incremental.snapshot.spark.",
)
