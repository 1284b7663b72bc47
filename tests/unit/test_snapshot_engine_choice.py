"""``snapshot.engine=auto``: which engine reads the initial snapshot, by the tables' rows and the cores."""

from __future__ import annotations

from typing import Any

import pytest

from cdc.mysql import snapshot_engine as se
from cdc.mysql.config import MySqlSettings
from cdc.mysql.snapshot_engine import (
    LOCAL_ROWS_S,
    SPARK_ROWS_S_PER_CORE,
    SPARK_START_S,
    choose_engine,
    master_cores,
    resolve_engine,
    spark_worth_rows,
)

BASE = {
    "connector.class": "io.debezium.connector.mysql.MySqlConnector",
    "database.hostname": "127.0.0.1",
    "database.user": "u",
    "database.password": "p",
    "database.server.id": "1",
    "topic.prefix": "p",
}


def settings(**extra: str) -> MySqlSettings:
    return MySqlSettings.parse({**BASE, **extra})


def wall_local(rows: int) -> float:
    return rows / LOCAL_ROWS_S


def wall_spark(rows: int, cores: int) -> float:
    return SPARK_START_S + rows / (SPARK_ROWS_S_PER_CORE * cores)


@pytest.mark.honours("snapshot.engine")
def test_auto_is_the_default() -> None:
    assert settings().snapshot_engine == "auto"


@pytest.mark.parametrize("cores", [2, 4, 8, 16])
@pytest.mark.parametrize("rows", [1_000, 100_000, 500_000, 1_000_000, 2_000_000, 10_000_000, 100_000_000])
def test_auto_is_never_slower_than_the_single_reader_by_the_model(rows: int, cores: int) -> None:
    """By B1's figures: whenever auto starts Spark, Spark's start-up plus its read is shorter than the
    single reader's read; and it reads locally wherever Spark would take longer."""
    choice = choose_engine("auto", rows, cores, spark_installed=True)
    if choice.spark:
        assert wall_spark(rows, cores) < wall_local(rows), choice.reason
    if wall_spark(rows, cores) >= wall_local(rows):
        assert not choice.spark, choice.reason


def test_thresholds_by_cores() -> None:
    """One core never starts Spark; more cores start it on smaller tables; 1 M rows stays local on the
    2-core machine B1 measured (Spark took longer there: 29.2 s against 24.6 s), 10 M rows go to Spark."""
    assert spark_worth_rows(1) is None
    two, four, eight = spark_worth_rows(2), spark_worth_rows(4), spark_worth_rows(8)
    assert two is not None and four is not None and eight is not None
    assert two > four > eight > 0
    assert not choose_engine("auto", 1_000_000, 2, True).spark
    assert choose_engine("auto", 10_000_000, 2, True).spark
    assert not choose_engine("auto", 10_000_000, 1, True).spark
    assert choose_engine("auto", two, 2, True).spark
    assert not choose_engine("auto", two - 1, 2, True).spark


def test_auto_reads_locally_when_spark_cannot_or_should_not_be_used() -> None:
    assert choose_engine("auto", 10**9, 8, spark_installed=False).engine == "local"
    assert "pyspark" in choose_engine("auto", 10**9, 8, spark_installed=False).reason
    threads = choose_engine("auto", 10**9, 8, True, local_threads=4)
    assert threads.engine == "local" and "snapshot.max.threads=4" in threads.reason
    assert choose_engine("auto", None, 8, True).engine == "local"


def test_an_explicit_engine_is_kept() -> None:
    assert choose_engine("spark", 10, 1, spark_installed=False).engine == "spark"
    assert choose_engine("LOCAL", 10**9, 64, True).engine == "local"


def test_master_cores() -> None:
    assert master_cores("local[4]", None, 2) == 4
    assert master_cores("local[3,2]", None, 2) == 3
    assert master_cores("local[*]", None, 6) == 6
    assert master_cores("local", None, 6) == 1
    assert master_cores("spark://h:7077", None, 6) == 6  # a cluster's size is unknown: this machine's
    assert master_cores("local[*]", 8, 2) == 8  # snapshot.spark.partitions wins


def test_resolve_engine_asks_the_server_only_for_auto() -> None:
    asked: list[int] = []

    def rows() -> int:
        asked.append(1)
        return 50_000_000

    assert resolve_engine(settings(**{"snapshot.engine": "local"}), rows, lambda: True, 8).engine == "local"
    assert resolve_engine(settings(**{"snapshot.engine": "spark"}), rows, lambda: False, 1).engine == "spark"
    assert asked == []
    choice = resolve_engine(settings(), rows, lambda: True, 2)
    assert choice.spark and "50,000,000" in choice.reason and asked == [1]
    # local[2] on an 8-core worker: Spark gets 2 cores
    two = resolve_engine(
        settings(**{"snapshot.spark.master": "local[2]"}), lambda: 1_000_000, lambda: True, 8
    )
    assert not two.spark
    # without pyspark, or with the local parallel readers asked for, the server is not asked at all
    asked.clear()
    assert not resolve_engine(settings(), rows, lambda: False, 8).spark
    assert not resolve_engine(settings(**{"snapshot.max.threads": "2"}), rows, lambda: True, 8).spark
    assert asked == []


def test_resolve_engine_reads_locally_when_the_estimate_fails(caplog: Any) -> None:
    def broken() -> int:
        raise OSError("Can't connect to server")

    choice = resolve_engine(settings(), broken, lambda: True, 8)
    assert choice.engine == "local" and "not available" in choice.reason
    assert "could not estimate" in caplog.text


def test_the_cli_advice_uses_the_same_break_even() -> None:
    from cdc.cli.snapshot_guard import built_in_would_be_faster

    worth = se.spark_worth_rows(2)
    assert worth is not None
    assert built_in_would_be_faster(worth - 1, 2) is not None
    assert built_in_would_be_faster(worth, 2) is None
    assert built_in_would_be_faster(10**9, 1) is not None  # one core: never worth it
