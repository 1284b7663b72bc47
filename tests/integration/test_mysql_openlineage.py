"""``openlineage.integration.*``: the run events of Debezium 3.6's OpenLineage integration, sent through the
transport of the ``openlineage.yml`` the config names (here the file transport, in the Java client's
spelling Debezium users have), against the real MariaDB.

What Debezium emits (``BaseSourceTask``, ``RelationalDatabaseSchema``, the ``OpenLineage`` transform): START
as the task starts, RUNNING once running and with one input dataset per captured table whose schema is built
(the snapshot's, and again after a DDL), RUNNING with an output dataset per topic from the transform, and
COMPLETE when it stops; one run id (the ``__debezium.context.runId`` header's); the job named
``<topic.prefix>.<task>``. Each event is checked against the fields the OpenLineage 2-0-2 spec requires.
"""

from __future__ import annotations

import json
import random
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from cdc.api.connector import OffsetStorageReader, SourceTaskContext
from cdc.api.offsets import partition_key
from cdc.api.records import SourceRecord
from cdc.mysql.task import MariaDbSourceTask
from cdc.transforms.openlineage import OpenLineage
from tests.integration.inprocess import NoOffsetsContext

pytestmark = pytest.mark.integration

RUN_EVENT = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"


def _facets_complete(facets: dict[str, Any]) -> None:
    """Every facet carries what the spec's BaseFacet requires: ``_producer`` and ``_schemaURL``."""
    for name, facet in facets.items():
        assert facet["_producer"] and facet["_schemaURL"].startswith("https://"), name


def _spec_valid(event: dict[str, Any]) -> None:
    """The RunEvent's required fields (OpenLineage.json 2-0-2): eventTime (date-time), producer, schemaURL,
    run.runId (a UUID), job.namespace and job.name; each dataset's namespace and name; the facets'."""
    assert event["schemaURL"] == RUN_EVENT
    assert event["producer"] and "T" in event["eventTime"] and event["eventTime"].endswith("+00:00")
    assert event["eventType"] in ("START", "RUNNING", "COMPLETE", "FAIL")
    uuid.UUID(event["run"]["runId"])
    assert event["job"]["namespace"] and event["job"]["name"]
    _facets_complete(event["run"]["facets"])
    _facets_complete(event["job"]["facets"])
    for dataset in event["inputs"] + event["outputs"]:
        assert dataset["namespace"] and dataset["name"]
        _facets_complete(dataset["facets"])


class _Resumed(SourceTaskContext):
    """A restarted task's context: the offset the first run's last record committed."""

    def __init__(self, partition: dict[str, Any], offset: dict[str, Any]) -> None:
        class Reader(OffsetStorageReader):
            def offsets(self, partitions: Any) -> dict[str, dict[str, Any]]:
                return {partition_key(partition): offset}

        self._reader = Reader()

    def configs(self) -> dict[str, str]:
        return {}

    def offset_storage_reader(self) -> OffsetStorageReader:
        return self._reader


def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.honours(
    "openlineage.integration.enabled",
    "openlineage.integration.config.file.path",
    "openlineage.integration.job.namespace",
    "openlineage.integration.job.description",
    "openlineage.integration.job.tags",
    "openlineage.integration.job.owners",
    "openlineage.integration.dataset.kafka.bootstrap.servers",
)
def test_run_events_with_input_and_output_datasets_through_the_file_transport(
    mysql_db: Any, tmp_path: Path
) -> None:
    db = mysql_db.name
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE orders (id INT PRIMARY KEY, total DECIMAL(10,2), note VARCHAR(20))")
        cur.execute("CREATE TABLE skipped (id INT PRIMARY KEY)")
        cur.execute("INSERT INTO orders VALUES (1, 9.50, 'a')")
    events_file = tmp_path / "lineage" / "events.jsonl"
    events_file.parent.mkdir()
    config_file = tmp_path / "openlineage.yml"
    # Debezium's openlineage.yml is the Java client's: the file transport's key is `location`
    config_file.write_text(f"transport:\n  type: file\n  location: {events_file}\n", encoding="utf-8")
    prefix = f"ol{random.randint(0, 10**9)}"
    task = MariaDbSourceTask()
    task.initialize(NoOffsetsContext())
    props = {
        "connector.class": "io.debezium.connector.mariadb.MariaDbConnector",
        "database.hostname": mysql_db.host,
        "database.port": str(mysql_db.port),
        "database.user": mysql_db.user,
        "database.password": mysql_db.password,
        "database.server.id": str(random.randint(100_000, 4_000_000)),
        "topic.prefix": prefix,
        "database.include.list": db,
        "table.include.list": f"{db}.orders",
        "schema.history.internal": "io.debezium.storage.file.history.FileSchemaHistory",
        "schema.history.internal.file.filename": str(tmp_path / "history.dat"),
        "openlineage.integration.enabled": "true",
        "openlineage.integration.config.file.path": str(config_file),
        "openlineage.integration.job.namespace": "cdc-tests",
        "openlineage.integration.job.description": "Orders into Kafka",
        "openlineage.integration.job.tags": "env=prod, team=data-engineering",
        "openlineage.integration.job.owners": "Alice Smith=maintainer,Bob Johnson=Data Engineer",
        "openlineage.integration.dataset.kafka.bootstrap.servers": "broker-1:9092",
    }
    task.start(props)
    transform = OpenLineage[SourceRecord]()
    transform.configure({})
    records: list[SourceRecord] = []
    try:
        deadline = time.monotonic() + 60
        while not any(r.topic == f"{prefix}.{db}.orders" for r in records) and time.monotonic() < deadline:
            records += [transform.apply(r) for r in task.poll() or []]
        with mysql_db.connect() as conn, conn.cursor() as cur:
            cur.execute("ALTER TABLE orders ADD COLUMN shipped BOOLEAN")
            cur.execute("INSERT INTO orders VALUES (2, 1.25, 'b', TRUE)")
        deadline = time.monotonic() + 60
        while sum(r.topic == f"{prefix}.{db}.orders" for r in records) < 2 and time.monotonic() < deadline:
            records += [transform.apply(r) for r in task.poll() or []]
    finally:
        task.stop()

    first_run = len(_events(events_file))
    # a restart from the committed offset: the schema recovered from the history is built again, each
    # captured table an input dataset again (with the ALTER's column), in a new run
    last = records[-1]
    assert last.source_partition is not None and last.source_offset is not None
    task = MariaDbSourceTask()
    task.initialize(_Resumed(dict(last.source_partition), dict(last.source_offset)))
    task.start(props)
    try:
        deadline = time.monotonic() + 30
        while not any(e["inputs"] for e in _events(events_file)[first_run:]) and time.monotonic() < deadline:
            task.poll()
    finally:
        task.stop()
    events = _events(events_file)
    resumed, events = events[first_run:], events[:first_run]
    # recovery is part of starting, so its dataset comes before the plain RUNNING (as in Debezium, whose
    # task recovers the history in start() and emits RUNNING once start() returns)
    assert [(e["eventType"], len(e["inputs"])) for e in resumed] == [
        ("START", 0),
        ("RUNNING", 1),
        ("RUNNING", 0),
        ("COMPLETE", 0),
    ]
    (recovered,) = resumed[1]["inputs"]
    assert recovered["name"] == f"{db}.orders"
    assert [f["name"] for f in recovered["facets"]["schema"]["fields"]] == ["id", "total", "note", "shipped"]
    assert (
        len({e["run"]["runId"] for e in resumed}) == 1
        and resumed[0]["run"]["runId"] != events[0]["run"]["runId"]
    )

    for event in events:
        _spec_valid(event)
    kinds = [e["eventType"] for e in events]
    assert kinds[0] == "START" and kinds[-1] == "COMPLETE" and set(kinds[1:-1]) == {"RUNNING"}, kinds
    run_ids = {e["run"]["runId"] for e in events}
    header = records[0].headers.last_with_name("__debezium.context.runId")
    assert header is not None and run_ids == {header.value}  # one run: the task's, as Debezium's

    job = events[0]["job"]
    assert (job["namespace"], job["name"]) == ("cdc-tests", f"{prefix}.0")
    assert job["facets"]["documentation"]["description"] == "Orders into Kafka"
    assert job["facets"]["jobType"] == {
        **job["facets"]["jobType"],
        "processingType": "STREAMING",
        "integration": "DEBEZIUM",
        "jobType": "TASK",
    }
    # in the order Debezium's HashMap of them iterates (checked with Java's own HashMap)
    tags = [(t["key"], t["value"], t["source"]) for t in job["facets"]["tags"]["tags"]]
    assert tags == [("team", "data-engineering", "CONFIG"), ("env", "prod", "CONFIG")]
    owners = [(o["name"], o["type"]) for o in job["facets"]["ownership"]["owners"]]
    assert owners == [("Bob Johnson", "Data Engineer"), ("Alice Smith", "maintainer")]
    configs = events[0]["run"]["facets"]["debezium_config"]["configs"]
    assert "database.password=********" in configs and f"topic.prefix={prefix}" in configs
    assert not any(mysql_db.password in c for c in configs if c.startswith("database.password"))

    # input datasets: the captured table, on the snapshot and again with the column the ALTER added
    inputs = [d for e in events for d in e["inputs"]]
    assert {d["name"] for d in inputs} == {f"{db}.orders"}  # `skipped` is not captured
    assert {d["namespace"] for d in inputs} == {f"mariadb://{mysql_db.host}:{mysql_db.port}"}
    columns = [[(f["name"], f["type"]) for f in d["facets"]["schema"]["fields"]] for d in inputs]
    assert columns[0] == [("id", "INT"), ("total", "DECIMAL"), ("note", "VARCHAR")]
    assert columns[-1] == [*columns[0], ("shipped", "BOOLEAN")]
    assert {d["facets"]["datasetType"]["datasetType"] for d in inputs} == {"TABLE"}

    # output datasets: the topics the transform saw, in the configured Kafka's namespace
    outputs = {d["name"]: d for e in events for d in e["outputs"]}
    assert f"{prefix}.{db}.orders" in outputs
    orders = outputs[f"{prefix}.{db}.orders"]
    assert orders["namespace"] == "kafka://broker-1:9092"
    assert orders["facets"]["datasetType"]["datasetType"] == "STREAM"
    envelope = {f["name"]: f for f in orders["facets"]["schema"]["fields"]}
    assert [envelope[n]["type"] for n in ("before", "after", "source", "op")] == [
        "STRUCT",
        "STRUCT",
        "STRUCT",
        "STRING",
    ]
    assert [f["name"] for f in envelope["after"]["fields"]] == ["id", "total", "note"]
