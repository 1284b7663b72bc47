"""The differences between cdc's ``io.debezium.connector.jdbc.JdbcSinkConnector`` and Debezium's own that we
keep, each with its reason (``tests/integration/test_jdbc_sink_peer.py`` finds them on the real sink;
docs/jdbc-sink.md lists them).

A key is (database family, column, what differs): ``type`` (the column's type as the catalog prints it)
or ``value`` (the value as the database prints it).
"""

from __future__ import annotations

__all__ = ["KNOWN", "PEER_FAILS", "PEER_FAIL_LOGS", "known_keys"]

PEER_FAIL_LOGS = {
    # what Debezium's worker logs when it is given those columns (the test checks it still does)
    "postgresql": 'type "public.geometry" does not exist',
    "mysql": "Invalid default value for 'c_ts_default'",
}

PEER_FAILS: dict[str, dict[str, str]] = {
    # columns Debezium's sink (3.6.0.Final) cannot create or write at all: the comparison leaves them out
    # (field.exclude.list, both sides) so that the other columns can be compared; cdc writes them
    "postgresql": {
        "c_geometry": "Debezium creates public.geometry, which needs PostGIS (the test's schema is in the "
        "stack's cdc database, which has no PostGIS extension); cdc writes the WKB into bytea there",
        "c_point": "Debezium creates PostgreSQL's own point type (a point, not a WKB; not reached: the "
        "CREATE TABLE fails on c_geometry first); cdc writes the WKB into bytea",
    },
    "mysql": {
        "c_ts_default": "Debezium's CREATE TABLE says DEFAULT '1970-01-01T00:00:00' for a TIMESTAMP(6) "
        "column, which MariaDB refuses (Invalid default value for 'c_ts_default'): the task fails",
    },
}

_DECIMAL = (
    "the source column is DECIMAL(65,30) and the event says so (connect.decimal.precision=65): cdc keeps "
    "the precision; Debezium's sink caps it at 38, so a value with more than 8 integer digits would be "
    "refused by its own table"
)
_FRACTION = (
    "Debezium's sink writes the value without its fraction of a second into MariaDB (12:34:56.789012 lands "
    "as 12:34:56.000000, through mysql-connector-j into a (6) column); cdc keeps every digit the event has"
)
_ZONED = (
    "a ZonedTimestamp (a MySQL TIMESTAMP) is an instant: cdc writes it as DATETIME(6) in the sink's zone "
    "(use.time.zone); Debezium's TIMESTAMP(6) column holds only 1970-2038 and is read back through the "
    "session's time zone"
)

KNOWN: dict[tuple[str, str, str], str] = {
    ("postgresql", "c_decimal_big", "type"): _DECIMAL,
    ("mysql", "c_decimal_big", "type"): _DECIMAL,
    ("mysql", "c_timestamp0", "type"): _ZONED,
    ("mysql", "c_timestamp6", "type"): _ZONED,
    ("mysql", "c_timestamp6", "value"): _FRACTION,
    ("mysql", "c_datetime3", "value"): _FRACTION,
    ("mysql", "c_datetime6", "value"): _FRACTION,
    ("mysql", "c_time6", "value"): _FRACTION,
}


def known_keys() -> set[tuple[str, str, str]]:
    return set(KNOWN)
