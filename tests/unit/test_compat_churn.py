"""bench.compat.churn: which connector failures during the snapshots are the shared server's churn (the
run is redone) and which are failures of the run."""

from __future__ import annotations

import json

from bench.compat.churn import foreign_vanished

OWN = {"compat_1_a", "compat_1_a_o", "compat_1_a_b"}


def _status(trace: str) -> str:
    # as the harness sees it: the connector's status JSON, dumped again
    return json.dumps({"connector": {"state": "RUNNING"}, "tasks": [{"state": "FAILED", "trace": trace}]})


def test_debeziums_show_create_table_of_another_tests_dropped_table_is_churn() -> None:
    trace = (
        "org.apache.kafka.connect.errors.ConnectException: An exception occurred in the change event "
        "producer.\n\tat io.debezium...\nCaused by: java.sql.SQLSyntaxErrorException: (conn=4411) Table "
        "'t_test_kill_9_during_snapshot_and_streaming_loses_nothi_1a2b.items' doesn't exist"
    )
    dropped = "t_test_kill_9_during_snapshot_and_streaming_loses_nothi_1a2b"
    assert foreign_vanished(_status(trace), OWN) == dropped


def test_cdcs_errors_are_read_too() -> None:
    table = "MySQLdb.ProgrammingError: (1146, \"Table 'other_db.t' doesn't exist\")"
    database = "pymysql.err.OperationalError: (1049, \"Unknown database 'gone_db'\")"
    assert foreign_vanished(_status(table), OWN) == "other_db"
    assert foreign_vanished(_status(database), OWN) == "gone_db"


def test_a_failure_on_the_runs_own_database_or_any_other_failure_is_not_churn() -> None:
    own_table = "java.sql.SQLSyntaxErrorException: Table 'compat_1_a.t_types' doesn't exist"
    assert foreign_vanished(_status(own_table), OWN) is None
    assert foreign_vanished(_status("io.debezium.text.MultipleParsingExceptions: ..."), OWN) is None
