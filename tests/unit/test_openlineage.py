"""cdc.openlineage: the ``openlineage.yml`` Debezium users have (the Java client's spelling) read into the
Python client's transports; the defaults Debezium 3.6 gives the job and the datasets; FAIL's error facet;
keys refused at validate. The events go through ``openlineage-python``'s real file transport."""

from __future__ import annotations

import json
import re
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from cdc.api.errors import ConfigError
from cdc.mysql.validation import validate_mysql
from cdc.openlineage.config import LineageSettings, load_transport, transport_config
from cdc.openlineage.emitter import LineageEmitter, client_for


def _allow(path: str) -> None:
    return None


def test_the_java_clients_spelling_is_read_into_the_python_clients_transports() -> None:
    assert transport_config({"type": "console"}, _allow) == {"type": "console"}
    assert transport_config({"type": "file", "location": "/var/ol/events.jsonl"}, _allow) == {
        "type": "file",
        "log_file_path": "/var/ol/events.jsonl",
        "append": True,  # one file, one event a line, as the Java client writes it
    }
    http = {
        "type": "http",
        "url": "http://lineage.example:5000",
        "endpoint": "/api/v1/lineage",
        "timeoutInMillis": 2500,
        "auth": {"type": "api_key", "apiKey": "k3y"},
        "headers": {"X-Team": "data"},
    }
    assert transport_config(http, _allow) == {
        "type": "http",
        "url": "http://lineage.example:5000",
        "endpoint": "/api/v1/lineage",
        "timeout": 2.5,
        "auth": {"type": "api_key", "api_key": "k3y"},
        "custom_headers": {"X-Team": "data"},
        "retry": {"total": 0},
    }
    kafka = {
        "type": "kafka",
        "topicName": "lineage",
        "messageKey": "k",
        "properties": {
            "bootstrap.servers": "b1:9092",
            "acks": "all",
            "key.serializer": "org.apache.kafka.common.serialization.StringSerializer",
            "value.serializer": "org.apache.kafka.common.serialization.StringSerializer",
        },
    }
    out = transport_config(kafka, _allow)
    assert out["type"] == "kafka" and out["topic"] == "lineage" and out["messageKey"] == "k"
    assert out["config"]["bootstrap.servers"] == "b1:9092" and out["config"]["acks"] == "all"
    assert not any("serializer" in k for k in out["config"])


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"type": "datadog"}, "is not supported: cdc supports console, file, http, kafka, noop"),
        ({"type": "http", "url": "file:///etc/passwd"}, "needs an http(s) url"),
        ({"type": "file"}, "needs a 'location'"),
        ({"type": "file", "location": "s3://bucket/events"}, "must be a local file path"),
        ({"type": "kafka", "properties": {}}, "needs a 'topicName'"),
        (None, "has no 'transport' section"),
    ],
)
def test_what_cdc_cannot_send_with_is_refused_with_the_reason(raw: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        transport_config(raw, _allow)


def test_files_the_openlineage_file_names_are_confined_like_the_config_s_own(tmp_path: Path) -> None:
    """The worker's policy is asked about the file itself, the file transport's log and a Kafka
    transport's stores: a file that may name any path must not widen what a config may open."""
    allowed = str(tmp_path)

    def refusal(path: str) -> str | None:
        return None if path.startswith(allowed) else f"The path {path} is not allowed to be accessed"

    config = tmp_path / "openlineage.yml"
    config.write_text("transport:\n  type: file\n  location: /etc/cdc-victim.log\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=re.escape("location: The path /etc/cdc-victim.log is not allowed")):
        load_transport(LineageSettings(True, str(config)), refusal)
    config.write_text(
        "transport:\n  type: kafka\n  topicName: t\n  properties:\n"
        "    ssl.keystore.location: /etc/worker.jks\n",
        encoding="utf-8",
    )
    with pytest.raises(
        ConfigError, match=re.escape("ssl.keystore.location: The path /etc/worker.jks is not allowed")
    ):
        load_transport(LineageSettings(True, str(config)), refusal)
    with pytest.raises(ConfigError, match="is not allowed"):
        load_transport(LineageSettings(True, "/etc/openlineage.yml"), refusal)
    config.write_text("transport: [unbalanced\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="is not YAML") as err:
        load_transport(LineageSettings(True, str(config)), refusal)
    assert "unbalanced" not in str(err.value)  # the file's content is not echoed


def test_tags_and_owners_that_are_not_key_value_pairs_are_refused_at_validate() -> None:
    base = {
        "database.hostname": "db.invalid",
        "database.user": "u",
        "topic.prefix": "p",
        "schema.history.internal.kafka.topic": "h",
    }
    errors = {
        v.name: v.errors
        for v in validate_mysql(
            {
                **base,
                "openlineage.integration.job.tags": "env=prod,critical",
                "openlineage.integration.job.owners": "Alice=maintainer",
            }
        )
        if v.errors
    }
    assert "'critical' is not a key=value pair" in errors["openlineage.integration.job.tags"][0]
    assert "openlineage.integration.job.owners" not in errors


def _emitter(tmp_path: Path, config: dict[str, str], **settings: Any) -> tuple[LineageEmitter, Path]:
    log = tmp_path / "events.jsonl"
    client = client_for({"type": "file", "log_file_path": str(log), "append": True})
    emitter = LineageEmitter(
        LineageSettings(True, **settings),
        client,
        prefix="inventory",
        task_id="0",
        connector="mysql",
        run_id="0197ad84-7a0d-7527-9f8a-a08602319b4d",
        config=config,
        secret_keys=["database.password"],
    )
    return emitter, log


def _read(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def test_debeziums_defaults_for_the_job_and_the_output_namespace(tmp_path: Path) -> None:
    emitter, log = _emitter(
        tmp_path,
        {
            "database.hostname": "db1",
            "database.port": "3306",
            "schema.history.internal.kafka.bootstrap.servers": "k1:9092,k2:9092",
            "producer.override.sasl.jaas.config": "org.apache.kafka...PlainLoginModule required password=x;",
        },
    )
    emitter.start()
    emitter.close()
    event = _read(log)[0]
    assert (event["job"]["namespace"], event["job"]["name"]) == ("inventory", "inventory.0")
    assert event["job"]["facets"]["documentation"]["description"] == "Debezium CDC job for inventory"
    assert "ownership" not in event["job"]["facets"] and "tags" not in event["job"]["facets"]
    assert emitter.output_namespace == "kafka://k1:9092"  # the first history broker
    assert emitter.input_namespace == "mysql://db1:3306"
    assert (
        "producer.override.sasl.jaas.config=********" in event["run"]["facets"]["debezium_config"]["configs"]
    )
    bare, _ = _emitter(tmp_path / "bare", {})
    assert bare.output_namespace == "kafka://unknown:unknown"
    bare.close()


def test_lists_come_in_the_order_of_debeziums_hash_maps() -> None:
    """Debezium collects tags, owners and the configuration into java.util.HashMap: the order its
    iteration gives, resizes included (the expected orders are what Java 21's HashMap printed)."""
    from cdc.openlineage.emitter import java_hash_order

    keys = ["Alice Smith", "Bob Johnson"]
    assert [keys[i] for i in java_hash_order(keys)] == ["Bob Johnson", "Alice Smith"]
    keys = [
        "connector.class",
        "database.hostname",
        "database.port",
        "database.user",
        "database.password",
        "database.server.id",
        "topic.prefix",
        "database.include.list",
        "schema.history.internal.kafka.bootstrap.servers",
        "schema.history.internal.kafka.topic",
        "openlineage.integration.enabled",
        "openlineage.integration.config.file.path",
        "openlineage.integration.job.namespace",
        "openlineage.integration.job.tags",
        "openlineage.integration.job.owners",
        "table.include.list",
        "transforms",
        "transforms.openlineage.type",
        "tasks.max",
        "name",
        "task.class",
        "key.converter",
        "value.converter",
        "a",
        "b",
        "c",
    ]
    java = [
        "connector.class",
        "openlineage.integration.job.namespace",
        "openlineage.integration.job.owners",
        "tasks.max",
        "openlineage.integration.config.file.path",
        "transforms",
        "topic.prefix",
        "schema.history.internal.kafka.topic",
        "value.converter",
        "key.converter",
        "openlineage.integration.enabled",
        "openlineage.integration.job.tags",
        "a",
        "database.user",
        "b",
        "transforms.openlineage.type",
        "c",
        "database.server.id",
        "schema.history.internal.kafka.bootstrap.servers",
        "database.port",
        "task.class",
        "database.hostname",
        "database.password",
        "name",
        "table.include.list",
        "database.include.list",
    ]
    assert [keys[i] for i in java_hash_order(keys)] == java


def test_fail_carries_the_error_and_its_trace(tmp_path: Path) -> None:
    emitter, log = _emitter(tmp_path, {})
    try:
        raise RuntimeError("binlog position lost")
    except RuntimeError as exc:
        emitter.fail(exc)
    emitter.close()
    (event,) = _read(log)
    assert event["eventType"] == "FAIL"
    error = event["run"]["facets"]["errorMessage"]
    assert error["message"] == "binlog position lost" and error["programmingLanguage"] == "Python"
    assert "RuntimeError: binlog position lost" in error["stackTrace"]


def test_a_backend_that_does_not_answer_never_stops_the_task(caplog: pytest.LogCaptureFixture) -> None:
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = client_for(transport_config({"type": "http", "url": f"http://127.0.0.1:{port}"}, _allow))
    emitter = LineageEmitter(
        LineageSettings(True),
        client,
        prefix="p",
        task_id="0",
        connector="mysql",
        run_id="0197ad84-7a0d-7527-9f8a-a08602319b4d",
        config={},
    )
    started = time.monotonic()
    emitter.start()  # returns at once: the sender thread sends
    emitter.close()
    assert time.monotonic() - started < 5  # no retries with back-off holding a stopping task
    assert "Failed to emit OpenLineage event" in caplog.text
