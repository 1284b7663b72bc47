"""Pure parts of the Spark snapshot's delivery and stall handling: the watchdog's decisions (fake clock),
the transaction names, the producer settings of a chunk transaction, ``--conf``/``--properties-file``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cdc.api.errors import ConfigError
from cdc.cli.snapshot import spark_settings
from cdc.snapshot.delivery import RunIds, connection_config, transactional_producer_config
from cdc.snapshot.progress import ProgressState
from cdc.snapshot.watchdog import Watchdog


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _watchdog(clock: Clock, written: list[int], lost: list[str | None]) -> tuple[Watchdog, list[str]]:
    halted: list[str] = []

    def probe() -> int:
        if written[0] < 0:
            raise ConnectionError("broker down")
        return written[0]

    return Watchdog(10, probe, lambda: lost[0], halted.append, clock=clock), halted


def test_records_growing_or_chunks_finishing_is_progress() -> None:
    clock, written, lost = Clock(), [0], [None]
    dog, halted = _watchdog(clock, written, lost)
    for t in range(1, 30):  # the records grow every 5 s: never a stall
        clock.now = t * 5
        written[0] += 100
        assert dog.check() is None
    for t in range(30, 60):  # no record, but a chunk finishes every 8 s
        clock.now = t * 5
        if t % 2 == 0:
            dog.progress()
        assert dog.check() is None
    assert not halted


def test_no_progress_for_the_timeout_halts_once() -> None:
    clock, written, lost = Clock(), [5], [None]
    dog, halted = _watchdog(clock, written, lost)
    clock.now = 9.9
    assert dog.check() is None
    written[0] = -1  # the probe failing is no progress either
    clock.now = 10.0
    reason = dog.check()
    assert reason is not None and "no executor made progress for 10 s" in reason
    assert halted == [reason]
    clock.now = 100
    assert dog.check() is None and len(halted) == 1


def test_a_lost_application_halts_at_once() -> None:
    clock, written, lost = Clock(), [0], [None]
    dog, halted = _watchdog(clock, written, lost)
    assert dog.check() is None
    lost[0] = "Spark stopped the application"
    clock.now = 1
    assert dog.check() == "Spark stopped the application" and halted == ["Spark stopped the application"]


def test_transaction_names_and_settings() -> None:
    ids = RunIds("cdc-snapshot-inventory", "0a1b2c")
    assert ids.chunk("db.t#3") == "cdc-snapshot-inventory.0a1b2c.db.t#3"
    assert ids.reconcile() == "cdc-snapshot-inventory.0a1b2c.reconcile"
    producer = {
        "bootstrap.servers": "b:9092",
        "security.protocol": "SASL_SSL",
        "sasl.username": "u",
        "acks": "all",
        "delivery.timeout.ms": 2147483647,
        "partitioner": "murmur2_random",
    }
    txn = transactional_producer_config(producer, ids.chunk("db.t#3"))
    assert txn["transactional.id"] == ids.chunk("db.t#3")
    # librdkafka refuses a message timeout beyond the transaction's
    assert txn["delivery.timeout.ms"] == txn["transaction.timeout.ms"] == 600_000
    assert (
        transactional_producer_config({**producer, "transaction.timeout.ms": 60_000}, "x")[
            "delivery.timeout.ms"
        ]
        == 60_000
    )
    assert connection_config(producer) == {
        "bootstrap.servers": "b:9092",
        "security.protocol": "SASL_SSL",
        "sasl.username": "u",
    }


def test_spark_settings_as_spark_submit_takes_them(tmp_path: Path) -> None:
    props = tmp_path / "spark-defaults.conf"
    props.write_text("spark.master spark://m:7077\nspark.executor.memory=2g\n# a comment\n")
    settings = spark_settings(str(props), ["spark.executor.memory=4g", "spark.driver.host=10.0.0.5"])
    assert settings == {
        "spark.master": "spark://m:7077",
        "spark.executor.memory": "4g",  # --conf over the file
        "spark.driver.host": "10.0.0.5",
    }
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        spark_settings(None, ["spark.driver.host"])
    with pytest.raises(ConfigError, match=r"must start with 'spark\.'"):
        spark_settings(None, ["executor.memory=1g"])


def test_progress_state_keeps_the_delivery_bookkeeping(tmp_path: Path) -> None:
    state = ProgressState(ProgressState.path_for(tmp_path, "c", "srv"), "c", "srv", {"file": "b.1", "pos": 4})
    state.run_id = "abc123"
    state.submitted = {"db.t#0": 2}
    state.topics_at_start = ["srv.db.t", "other"]
    state.offsets_at_start = {"srv.db.t": 17}
    state.save()
    loaded = ProgressState.load(tmp_path, "c", "srv")
    assert loaded is not None
    assert (loaded.run_id, loaded.submitted, loaded.topics_at_start, loaded.offsets_at_start) == (
        "abc123",
        {"db.t#0": 2},
        ["srv.db.t", "other"],
        {"srv.db.t": 17},
    )


def test_the_connectors_spark_settings() -> None:
    """A connector sets only the allowed sizes; the worker file's snapshot.spark.conf.* are under them."""
    from cdc.mysql.spark.connector import spark_conf

    worker = {
        "snapshot.spark.conf.spark.driver.host": "10.1.2.3",
        "snapshot.spark.conf.spark.executor.memory": "1g",
        "snapshot.spark.allowed.masters": "spark://m:7077, spark://n:7077",
        "bootstrap.servers": "b:9092",
    }
    props = {
        "snapshot.spark.master": "spark://m:7077",
        "snapshot.spark.conf.spark.executor.memory": "2g",
        "snapshot.spark.conf.spark.sql.shuffle.partitions": "8",
    }
    assert spark_conf(props, worker) == {
        "spark.driver.host": "10.1.2.3",
        "spark.executor.memory": "2g",
        "spark.sql.shuffle.partitions": "8",
    }
    with pytest.raises(ConfigError, match=r"snapshot\.spark\.conf\.driver\.host: not a Spark setting"):
        spark_conf({"snapshot.spark.conf.driver.host": "x"}, {})
    for key in (
        "spark.driver.extraJavaOptions",
        "spark.executor.extraJavaOptions",
        "spark.pyspark.python",
        "spark.jars.packages",
        "spark.driver.host",
        "spark.extraListeners",
        "spark.plugins",
        "spark.master",
    ):
        with pytest.raises(
            ConfigError, match=f"snapshot\\.spark\\.conf\\.{re.escape(key)}.*cannot be set by"
        ):
            spark_conf({f"snapshot.spark.conf.{key}": "x"}, worker)
    with pytest.raises(ConfigError, match="a number, size, duration or boolean"):
        spark_conf({"snapshot.spark.conf.spark.driver.memory": "1g -XX:OnOutOfMemoryError=touch"}, {})
    # the master: a local one always, another only as the worker file allows
    assert spark_conf({"snapshot.spark.master": "local[4,2]"}, {}) == {}
    with pytest.raises(ConfigError, match=r"snapshot\.spark\.master: The Spark master 'spark://m:7077'"):
        spark_conf({"snapshot.spark.master": "spark://m:7077"}, {})
    with pytest.raises(ConfigError, match="local-cluster"):
        spark_conf({"snapshot.spark.master": "local-cluster[2,1,1024]"}, {})
    with pytest.raises(ConfigError, match=r"spark\.master in the worker file"):
        spark_conf({}, {"snapshot.spark.conf.spark.master": "spark://m:7077"})
