"""Log lines (log4j pattern, JSON lines), the per-thread context and its hand-over, Java logger names."""

from __future__ import annotations

import importlib
import json
import logging
import threading

import pytest

from cdc.logs import ContextFilter, JsonFormatter, PatternFormatter, in_context, log4j_level, set_context
from cdc.logs.java_names import python_loggers
from cdc.worker.rest.loggers import Loggers


def record(level: int, msg: str, name: str = "cdc.jdbc.task") -> logging.LogRecord:
    rec = logging.LogRecord(name, level, __file__, 42, msg, None, None)
    rec.created, rec.msecs = 1_764_000_000.5, 500.0
    ContextFilter().filter(rec)
    return rec


def test_levels_are_printed_as_log4j_prints_them() -> None:
    assert [log4j_level(n) for n in (5, 10, 20, 30, 40, 50)] == [
        "TRACE",
        "DEBUG",
        "INFO",
        "WARN",
        "ERROR",
        "FATAL",
    ]
    set_context("orders|task-3")
    try:
        line = PatternFormatter().format(record(logging.WARNING, "careful"))
    finally:
        set_context(None)
    assert line.endswith("] WARN [orders|task-3] careful (io.confluent.connect.jdbc.source.JdbcSourceTask)")
    assert line.startswith("[20") and line[20] == "," and line[24] == "]"  # [yyyy-MM-dd HH:mm:ss,SSS]


def test_pattern_conversions_padding_and_refusal() -> None:
    fmt = PatternFormatter("%d{yyyy/MM/dd HH:mm:ss.SSS} %-5p %c{1}:%L %X{connector.context}%m%n")
    line = fmt.format(record(logging.INFO, "hi"))
    assert line.endswith(".500 INFO  JdbcSourceTask:42 hi")
    assert (
        PatternFormatter("%C %C{1} %c")
        .format(record(logging.INFO, ""))
        .startswith("cdc.jdbc.task task io.confluent.connect.jdbc.source.JdbcSourceTask")
    )  # %C: the Python module (log4j's caller class)
    assert line[4] == "/"
    with pytest.raises(ValueError, match="%Q"):
        PatternFormatter("%Q %m")
    with pytest.raises(ValueError, match=r"connector\.context"):
        PatternFormatter("%X{user} %m")


def test_json_lines_carry_connector_and_task() -> None:
    set_context("orders|task-3")
    try:
        rec = record(logging.ERROR, "boom")
    finally:
        set_context(None)
    try:
        raise RuntimeError("why")
    except RuntimeError as exc:
        rec.exc_info = (type(exc), exc, exc.__traceback__)
    line = json.loads(JsonFormatter().format(rec))
    assert (
        line["level"] == "ERROR"
        and line["message"] == "boom"
        and line["logger"] == "io.confluent.connect.jdbc.source.JdbcSourceTask"
    )
    assert line["connector"] == "orders" and line["task"] == 3
    assert line["timestamp"].endswith(".500Z") and "RuntimeError: why" in line["exception"]
    assert "connector" not in json.loads(JsonFormatter().format(record(logging.INFO, "worker")))


def test_threads_started_in_context_log_in_it() -> None:
    seen: list[str] = []

    def work() -> None:
        rec = record(logging.INFO, "x")
        seen.append(str(rec.connect_context))  # type: ignore[attr-defined]

    set_context("orders|task-0")
    try:
        wrapped = threading.Thread(target=in_context(work))
        bare = threading.Thread(target=work)
    finally:
        set_context(None)
    for t in (wrapped, bare):
        t.start()
        t.join()
    assert seen == ["[orders|task-0] ", ""]


def test_java_names_map_to_cdc_loggers() -> None:
    assert python_loggers("io.confluent.connect.jdbc") == ("cdc.jdbc",)
    assert python_loggers("io.confluent.connect.jdbc.source.JdbcSourceTask") == ("cdc.jdbc",)
    assert python_loggers("io.debezium.connector.mysql.MySqlConnectorTask") == ("cdc.mysql",)
    assert "cdc.mysql" in (python_loggers("io.debezium") or ())
    assert python_loggers("org.apache.kafka.connect.runtime.WorkerSourceTask") == ("cdc.worker",)
    assert python_loggers("io.debeziumx") is None and python_loggers("com.example") is None


def test_setting_a_java_name_sets_the_cdc_loggers() -> None:
    loggers = Loggers(clock=lambda: 1000.0)
    child = logging.getLogger("cdc.jdbc.querier")
    before = (logging.getLogger("cdc.jdbc").level, child.level)
    try:
        affected = loggers.set_level("io.confluent.connect.jdbc", "DEBUG")
        assert (
            "io.confluent.connect.jdbc" in affected
            and "cdc.jdbc" in affected
            and "cdc.jdbc.querier" in affected
        )
        assert child.isEnabledFor(logging.DEBUG)
        assert loggers.level("io.confluent.connect.jdbc.source.JdbcSourceTask") == {
            "level": "DEBUG",
            "last_modified": None,
        }
        listed = loggers.all_levels()
        assert listed["io.confluent.connect.jdbc"] == {"level": "DEBUG", "last_modified": 1_000_000}
        assert "io.debezium" in listed and "org.apache.kafka.connect" in listed
        loggers.set_level("io.confluent.connect.jdbc", "ERROR")
        assert not child.isEnabledFor(logging.WARNING)
        assert loggers.level("no.such.logger") is None  # Connect: 404 "Logger no.such.logger not found."
    finally:
        logging.getLogger("cdc.jdbc").setLevel(before[0])
        child.setLevel(before[1])


def test_every_module_with_a_java_counterpart_logs_under_its_java_name() -> None:
    from cdc.logs.java_names import JAVA_CLASSES, java_name

    assert java_name("cdc.mysql.streaming") == "io.debezium.connector.mysql.MySqlStreamingChangeEventSource"
    assert java_name("cdc.mysql.ddl.parser") == "io.debezium.connector.mysql.antlr.MySqlAntlrDdlParser"
    assert java_name("cdc.worker.source_task") == "org.apache.kafka.connect.runtime.WorkerSourceTask"
    assert java_name("cdc.mysql.spark.engine") == "cdc.mysql.spark.engine"  # no Java counterpart
    assert java_name("kafka.conn") == "kafka.conn"
    for module, java in JAVA_CLASSES.items():
        importlib.import_module(module)  # a module that exists
        # and the Java name sets its level through /admin/loggers
        assert any(module == p or module.startswith(p + ".") for p in python_loggers(java) or ()), module
