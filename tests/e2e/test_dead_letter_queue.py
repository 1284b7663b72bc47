"""``errors.tolerance=all`` with a dead letter queue, on the FileStream sink seed in a ``cdc standalone``
worker process: a record the value converter cannot read goes to the DLQ topic (created by the worker,
one partition) with its original bytes and Connect's ``__connect.errors.*`` context headers, the good
records reach the file, and the task keeps RUNNING. A DLQ the producer cannot reach fails the task (the
record is neither dead-lettered nor committed) instead of skipping it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from worker_process import WorkerProcess, free_port, seed_properties, wait_for


def _record(line: str) -> bytes:
    return json.dumps({"schema": {"type": "string", "optional": False}, "payload": line}).encode()


def _topic_with(kafka: Any, values: list[bytes]) -> str:
    """A topic of the test's own holding ``values`` (one partition, in order)."""
    topic = kafka.create_topic("in")
    producer = kafka.producer()
    for value in values:
        producer.produce(topic, value=value)
    producer.flush(10)
    return str(topic)


def _start(
    tmp_path: Path, kafka: Any, topic: str, dlq: str, extra: dict[str, str], workers: list[WorkerProcess]
) -> tuple[WorkerProcess, Path]:
    port = free_port()
    sink = tmp_path / "test.sink.txt"
    worker_file = seed_properties(
        "connect-standalone.properties",
        tmp_path / "connect-standalone.properties",
        {"bootstrap.servers": kafka.bootstrap_servers, "offset.storage.file.filename": str(tmp_path / "o")},
        {"listeners": f"http://127.0.0.1:{port}"},
    )
    connector_file = seed_properties(
        "local-file-sink.properties",
        tmp_path / "local-file-sink.properties",
        {"file": str(sink), "topics": topic},
        {
            # a name of the test's own: its consumer group (connect-<name>) is then new, not the one a
            # previous test's worker, killed by the fixture, still holds until its 45 s session times out
            "name": _name(topic),
            "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": dlq,
            "errors.deadletterqueue.topic.replication.factor": "1",
            "errors.deadletterqueue.context.headers.enable": "true",
            **extra,
        },
    )
    worker = WorkerProcess(
        ["standalone", str(worker_file), str(connector_file)], port, tmp_path / "worker.log"
    )
    workers.append(worker)
    worker.start()
    return worker, sink


def _name(topic: str) -> str:
    """The seed's connector name with the test's own suffix (its topics' prefix ends ``-<hex>.``)."""
    return f"local-file-sink-{topic.rsplit('-', 1)[-1].split('.')[0]}"


def _task_state(worker: WorkerProcess, topic: str) -> tuple[str, str]:
    status = worker.get(f"/connectors/{_name(topic)}/status").json()
    tasks = status.get("tasks") or [{}]
    return str(tasks[0].get("state", "")), str(tasks[0].get("trace", ""))


def test_a_record_the_converter_cannot_read_goes_to_the_dead_letter_queue(
    tmp_path: Path, kafka: Any, workers: list[WorkerProcess]
) -> None:
    topic = _topic_with(kafka, [_record("one"), b"{not json", _record("two")])
    dlq = kafka.topic("dlq")
    worker, sink = _start(tmp_path, kafka, topic, dlq, {}, workers)

    wait_for(lambda: sink.exists() and sink.read_text() == "one\ntwo\n", 30, "the good records in the file")
    dead = wait_for(lambda: kafka.read_to_end(dlq), 30, "the dead letter queue")
    assert [m.value() for m in dead] == [b"{not json"]
    headers = {k: v.decode() for k, v in dead[0].headers()}
    assert headers["__connect.errors.topic"] == topic
    assert headers["__connect.errors.partition"] == "0" and headers["__connect.errors.offset"] == "1"
    assert headers["__connect.errors.stage"] == "VALUE_CONVERTER"
    assert headers["__connect.errors.connector.name"] == _name(topic)
    assert headers["__connect.errors.exception.message"]
    metadata = kafka.admin.list_topics(topic=dlq, timeout=10).topics[dlq]
    assert len(metadata.partitions) == 1
    assert _task_state(worker, topic)[0] == "RUNNING"


def test_an_unreachable_dead_letter_queue_fails_the_task(
    tmp_path: Path, kafka: Any, workers: list[WorkerProcess]
) -> None:
    topic = _topic_with(kafka, [b"{not json"])
    dlq = kafka.create_topic("dlq")
    # the DLQ producer (and only it) is pointed at a port nobody listens on
    extra = {
        "producer.override.bootstrap.servers": f"127.0.0.1:{free_port()}",
        "producer.override.delivery.timeout.ms": "2000",
    }
    worker, sink = _start(tmp_path, kafka, topic, dlq, extra, workers)

    _state, trace = wait_for(
        lambda: (s := _task_state(worker, topic))[0] == "FAILED" and s, 60, "the task to fail", interval=0.5
    )
    assert "Could not produce message to dead letter queue" in trace and dlq in trace, trace
    assert kafka.read_to_end(dlq) == []
    assert not sink.exists() or sink.read_text() == ""
