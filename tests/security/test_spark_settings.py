"""Spark settings from a REST user (issue #24): a connector's ``snapshot.spark.conf.*`` reached the Spark
session the worker creates, and for its first session the driver JVM's command line:
``spark.driver.extraJavaOptions=-XX:MaxMetaspaceSize=12m -XX:OnOutOfMemoryError=<command>`` ran the command
on the worker host (``snapshot.engine=spark``, or ``incremental.snapshot.engine=spark``, or the default
``snapshot.engine=auto`` on a large table), and
``spark.pyspark.python`` became ``PYSPARK_PYTHON`` for every later Spark job of every connector.

Against a real standalone worker with basic authentication and the stack's MariaDB: each such key is an
error on that key at validate and a 400 naming it on create, the connector is never created, and the
command never runs. The allowed sizes still validate, and a cluster master only where the worker file
lists it (``snapshot.spark.allowed.masters``).
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from attack import call, mysql_config, standalone_worker, validate_errors
from worker_process import WorkerProcess

pytestmark = [pytest.mark.integration, pytest.mark.e2e]


def test_a_connector_sets_only_the_allowed_spark_keys(
    tmp_path: Path, kafka: Any, mysql_db: Any, workers: list[WorkerProcess]
) -> None:
    marker = Path(f"/tmp/marker-{uuid.uuid4().hex}")
    command = f"-XX:MaxMetaspaceSize=12m -XX:OnOutOfMemoryError=touch {marker}"
    worker = standalone_worker(tmp_path, kafka, workers)
    spark = {"snapshot.engine": "spark"}
    incremental = {"incremental.snapshot.engine": "spark"}
    default: dict[str, str] = {}  # snapshot.engine=auto starts Spark on large enough tables
    allowed = {
        "snapshot.spark.conf.spark.executor.memory": "1g",
        "snapshot.spark.conf.spark.sql.shuffle.partitions": "4",
        "snapshot.spark.conf.spark.default.parallelism": "2",
    }
    # the config without the attack is valid, with the sizes a connector may set
    assert validate_errors(worker, mysql_config(mysql_db, "sparky", **spark, **allowed)) == {}
    assert validate_errors(worker, mysql_config(mysql_db, "sparky", **incremental)) == {}

    attacks = [
        (spark, "snapshot.spark.conf.spark.driver.extraJavaOptions", command),
        (incremental, "snapshot.spark.conf.spark.driver.extraJavaOptions", command),
        (default, "snapshot.spark.conf.spark.driver.extraJavaOptions", command),
        (default, "snapshot.spark.conf.spark.pyspark.python", "/bin/sh"),
        (default, "snapshot.spark.master", "spark://127.0.0.1:7077"),
        (spark, "snapshot.spark.conf.spark.executor.extraJavaOptions", command),
        (spark, "snapshot.spark.conf.spark.pyspark.python", "/bin/sh"),
        (spark, "snapshot.spark.conf.spark.pyspark.driver.python", "/bin/sh"),
        (spark, "snapshot.spark.conf.spark.python.daemon.module", "antigravity"),
        (spark, "snapshot.spark.conf.spark.jars.packages", "org.example:evil:1.0"),
        (spark, "snapshot.spark.conf.spark.jars", f"file://{tmp_path}/evil.jar"),
        (spark, "snapshot.spark.conf.spark.driver.extraClassPath", str(tmp_path)),
        (spark, "snapshot.spark.conf.spark.driver.extraLibraryPath", str(tmp_path)),
        (spark, "snapshot.spark.conf.spark.extraListeners", "org.example.Listener"),
        (spark, "snapshot.spark.conf.spark.plugins", "org.example.Plugin"),
        (spark, "snapshot.spark.conf.spark.driver.bindAddress", "0.0.0.0"),
        (spark, "snapshot.spark.conf.spark.master", "spark://127.0.0.1:7077"),
        (spark, "snapshot.spark.conf.spark.driver.memory", "1g -XX:OnOutOfMemoryError=touch"),
        (spark, "snapshot.spark.master", "spark://127.0.0.1:7077"),
        (spark, "snapshot.spark.master", "local-cluster[2,1,512]"),
    ]
    for i, (engine, key, value) in enumerate(attacks):
        config = mysql_config(mysql_db, f"sparky-{i}", **engine, **{key: value})
        errors = validate_errors(worker, config)
        assert list(errors) == [key], (key, errors)
        response = call(worker, "PUT", f"/connectors/sparky-{i}/config", json=config)
        assert response.status_code == 400, (key, response.text)
        assert key in response.json()["message"], response.text
        response = call(worker, "POST", "/connectors", json={"name": f"sparky-{i}", "config": config})
        assert response.status_code == 400, (key, response.text)
    assert call(worker, "GET", "/connectors").json() == []
    time.sleep(2)
    assert not marker.exists()


def test_a_cluster_master_only_where_the_worker_file_lists_it(
    tmp_path: Path, kafka: Any, mysql_db: Any, workers: list[WorkerProcess]
) -> None:
    master = "spark://127.0.0.1:7077"
    worker = standalone_worker(tmp_path, kafka, workers, {"snapshot.spark.allowed.masters": master})
    config = mysql_config(
        mysql_db, "clustered", **{"snapshot.engine": "spark", "snapshot.spark.master": master}
    )
    assert validate_errors(worker, config) == {}
    other = {**config, "snapshot.spark.master": "spark://127.0.0.1:7078"}
    errors = validate_errors(worker, other)
    assert (
        list(errors) == ["snapshot.spark.master"]
        and "snapshot.spark.allowed.masters" in errors["snapshot.spark.master"][0]
    )
