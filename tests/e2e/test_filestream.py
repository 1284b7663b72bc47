"""The FileStream seeds end to end: ``cdc standalone connect-standalone.properties
local-file-source.properties local-file-sink.properties`` as the seed README runs it, and kill -9 of a
standalone or distributed worker in the middle of a stream.

The seed files are used as they are, with paths, the broker, the REST port and the topic (a name of the
test's own, so that it is deleted afterwards) substituted; the kill -9 tests also shorten
``offset.flush.interval.ms`` (and, distributed, the group session) so that they run in seconds.

Delivery is at-least-once: after kill -9 no line of the file may be missing from the topic, and the
lines sent twice are those sent after the last offset commit. FileStreamSource reads in bursts (when
the file has nothing new, its poll waits a second, as Kafka's does), so the worker is killed a little
more than one flush interval after a burst reached the topic: by then the burst's offsets must have
been committed even though the task is blocked in poll, and the duplicates are at most one flush
interval's worth at the writer's rate.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import requests
from worker_process import WorkerProcess, free_port, seed_properties, wait_for

FLUSH_INTERVAL_MS = 500
BURST = 40  # records landing at once: FileStreamSource's read after its one-second wait


def seed_record(line: str) -> bytes:
    """The record Connect's JsonConverter (schemas.enable=true) writes for a line (seed README)."""
    return json.dumps(
        {"schema": {"type": "string", "optional": False}, "payload": line}, separators=(",", ":")
    ).encode()


def topic_lines(kafka: Any, topic: str, schemas: bool = True) -> list[str]:
    lines = []
    for message in kafka.read_to_end(topic):
        value = json.loads(message.value())
        lines.append(value["payload"] if schemas else value)
    return lines


class Writer:
    """Appends ``line-NNNNNN`` lines to a file at a steady rate, as a web server writes its access log."""

    BATCH = 4

    def __init__(self, path: Path, batch: int = BATCH, period_s: float = 0.02) -> None:
        self.path = path
        self.batch = batch
        self.period_s = period_s
        self.written: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.started = 0.0
        self.stopped = 0.0

    def _run(self) -> None:
        with self.path.open("a", encoding="utf-8") as fh:
            while not self._stop.is_set():
                lines = [f"line-{len(self.written) + i:06d}" for i in range(self.batch)]
                fh.write("".join(line + "\n" for line in lines))
                fh.flush()
                self.written.extend(lines)
                self._stop.wait(self.period_s)

    def start(self) -> Writer:
        self.started = time.monotonic()
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)
        self.stopped = time.monotonic()

    @property
    def rate(self) -> float:
        """Lines per second."""
        return len(self.written) / max(self.stopped - self.started, 1e-3)


def check_at_least_once(sent: list[str], written: list[str], rate: float) -> None:
    """Every written line is in ``sent``, in order; the only repeats are one replay of the lines after
    the last commit before the kill, and there are at most the commit interval's worth of them."""
    assert set(sent) == set(written), f"lost: {sorted(set(written) - set(sent))[:10]}"
    numbers = [int(line.split("-")[1]) for line in sent]
    replays = [i for i in range(1, len(numbers)) if numbers[i] <= numbers[i - 1]]
    assert len(replays) <= 1, f"more than one replay at {replays}"
    duplicates = len(sent) - len(set(sent))
    bound = rate * FLUSH_INTERVAL_MS / 1000 + 2 * Writer.BATCH  # a writer batch may straddle each end
    assert duplicates <= bound, f"{duplicates} duplicates > {bound:.0f} (rate {rate:.0f} lines/s)"
    if replays:  # the replay restarts at a committed line end and runs on without a gap
        start = replays[0]
        assert numbers[start:] == list(range(numbers[start], numbers[start] + len(numbers) - start))
        assert numbers[:start] == list(range(start))


def kill_after_a_burst(kafka: Any, topic: str, worker: WorkerProcess) -> None:
    """kill -9 the worker a flush interval (and a little) after a burst of records reached ``topic``."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": kafka.bootstrap_servers, "group.id": f"{kafka.prefix}watch"})
    try:

        def end() -> int:
            return int(consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)[1])

        wait_for(lambda: end() >= 300, 30, "the stream to flow")
        last = end()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            time.sleep(0.02)
            now = end()
            if now - last >= BURST:
                break
            last = now
        else:
            raise AssertionError("no burst of records seen")
        time.sleep(FLUSH_INTERVAL_MS / 1000 + 0.2)
        worker.kill9()
    finally:
        consumer.close()


# ---------------------------------------------------------------------------------------- standalone


def standalone_files(
    tmp_path: Path, kafka: Any, port: int, topic: str, flush_ms: int | None = None, sink: bool = True
) -> list[str]:
    worker_add = {"listeners": f"http://127.0.0.1:{port}"}
    replace = {
        "bootstrap.servers": kafka.bootstrap_servers,
        "offset.storage.file.filename": str(tmp_path / "connect.offsets"),
    }
    if flush_ms is not None:
        replace["offset.flush.interval.ms"] = str(flush_ms)
    files = [
        seed_properties(
            "connect-standalone.properties", tmp_path / "connect-standalone.properties", replace, worker_add
        ),
        seed_properties(
            "local-file-source.properties",
            tmp_path / "local-file-source.properties",
            {"file": str(tmp_path / "test.txt"), "topic": topic},
        ),
    ]
    if sink:
        files.append(
            seed_properties(
                "local-file-sink.properties",
                tmp_path / "local-file-sink.properties",
                {"file": str(tmp_path / "test.sink.txt"), "topics": topic},
            )
        )
    return [str(f) for f in files]


def test_standalone_seed_copies_file_and_restart_resends_nothing(
    tmp_path: Path, kafka: Any, workers: list[WorkerProcess]
) -> None:
    topic = kafka.create_topic("connect-test")  # one partition: the order of the lines is kept
    source, sink = tmp_path / "test.txt", tmp_path / "test.sink.txt"
    source.write_text("first message\nsecond message\n", encoding="utf-8")
    port = free_port()
    worker = WorkerProcess(
        ["standalone", *standalone_files(tmp_path, kafka, port, topic)], port, tmp_path / "worker.log"
    )
    workers.append(worker)
    worker.start()

    def sink_text() -> str:
        return sink.read_text(encoding="utf-8") if sink.exists() else ""

    wait_for(lambda: sink_text() == "first message\nsecond message\n", 30, "the sink file")
    messages = kafka.read_to_end(topic)
    assert [m.value() for m in messages] == [seed_record("first message"), seed_record("second message")]
    assert [m.key() for m in messages] == [None, None]  # a null key with schemas on is written as null

    # both connectors run, as GET /connectors/{n}/status says
    for name in ("local-file-source", "local-file-sink"):
        status = worker.get(f"/connectors/{name}/status").json()
        assert status["connector"]["state"] == "RUNNING" and [t["state"] for t in status["tasks"]] == [
            "RUNNING"
        ]

    # appended lines follow
    with source.open("a", encoding="utf-8") as fh:
        fh.write("third message\n")
    wait_for(lambda: sink_text().endswith("third message\n"), 30, "the appended line")

    # a clean restart re-sends nothing: not to the topic, not to the sink file
    assert worker.terminate() == 0, worker.log()
    worker.start()
    with source.open("a", encoding="utf-8") as fh:
        fh.write("fourth message\n")
    wait_for(lambda: sink_text().endswith("fourth message\n"), 30, "the line appended after the restart")
    time.sleep(1)  # anything re-sent would show up by now
    expected = ["first message", "second message", "third message", "fourth message"]
    assert topic_lines(kafka, topic) == expected
    assert sink_text() == "".join(line + "\n" for line in expected)
    assert worker.terminate() == 0
    assert "Traceback" not in worker.log()


def test_standalone_nginx_accesslog_seeds_tail_the_log(
    tmp_path: Path, kafka: Any, workers: list[WorkerProcess]
) -> None:
    """nginx-accesslog-source/sink.properties: lines appended to a live access log appear in the topic."""
    topic = kafka.create_topic("nginx-accesslog")
    log, sink = tmp_path / "access.log", tmp_path / "access.log.sink"
    log.write_text('127.0.0.1 - - [01/Jan/2024:00:00:00 +0000] "GET / HTTP/1.1" 200 612\n', encoding="utf-8")
    port = free_port()
    worker_file = seed_properties(
        "connect-standalone.properties",
        tmp_path / "connect-standalone.properties",
        {
            "bootstrap.servers": kafka.bootstrap_servers,
            "offset.storage.file.filename": str(tmp_path / "offsets"),
        },
        {"listeners": f"http://127.0.0.1:{port}"},
    )
    source = seed_properties(
        "nginx-accesslog-source.properties", tmp_path / "src.properties", {"file": str(log), "topic": topic}
    )
    sink_file = seed_properties(
        "nginx-accesslog-sink.properties", tmp_path / "sink.properties", {"file": str(sink), "topics": topic}
    )
    worker = WorkerProcess(
        ["standalone", str(worker_file), str(source), str(sink_file)], port, tmp_path / "worker.log"
    )
    workers.append(worker)
    worker.start()
    with log.open("a", encoding="utf-8") as fh:
        fh.write('10.0.0.7 - - [01/Jan/2024:00:00:01 +0000] "GET /favicon.ico HTTP/1.1" 404 153\n')
    expected = log.read_text(encoding="utf-8")
    wait_for(lambda: sink.exists() and sink.read_text(encoding="utf-8") == expected, 30, "the sink file")
    assert topic_lines(kafka, topic) == expected.splitlines()
    assert worker.terminate() == 0


def test_standalone_kill9_loses_nothing(tmp_path: Path, kafka: Any, workers: list[WorkerProcess]) -> None:
    topic = kafka.create_topic("connect-test")  # one partition: the order of the lines is kept
    source = tmp_path / "test.txt"
    source.touch()
    port = free_port()
    args = ["standalone", *standalone_files(tmp_path, kafka, port, topic, FLUSH_INTERVAL_MS, sink=False)]
    worker = WorkerProcess(args, port, tmp_path / "worker.log")
    workers.append(worker)
    worker.start()
    writer = Writer(source).start()
    try:
        kill_after_a_burst(kafka, topic, worker)
        time.sleep(1.0)  # the writer goes on while the worker is down
        worker.start()
        written_at_restart = len(writer.written)
        wait_for(
            lambda: len(kafka.read_to_end(topic)) > written_at_restart + 200, 30, "the stream after restart"
        )
    finally:
        writer.stop()
    wait_for(lambda: set(topic_lines(kafka, topic)) >= set(writer.written), 30, "every written line")
    check_at_least_once(topic_lines(kafka, topic), writer.written, writer.rate)
    assert worker.terminate() == 0


# ----------------------------------------------------------------------------------------- distributed


def test_distributed_kill9_loses_nothing(tmp_path: Path, kafka: Any, workers: list[WorkerProcess]) -> None:
    topic = kafka.create_topic("access-log")
    source = tmp_path / "access.log"
    source.touch()
    port = free_port()
    props = seed_properties(
        "worker-distributed.properties",
        tmp_path / "worker.properties",
        {
            "bootstrap.servers": kafka.bootstrap_servers,
            "rest.port": str(port),
            "group.id": kafka.topic("connect"),
            "offset.storage.topic": kafka.topic("connect-offsets"),
            "config.storage.topic": kafka.topic("connect-configs"),
            "status.storage.topic": kafka.topic("connect-status"),
        },
        # a quick flush, and a short session so that the restarted worker need not wait 10 s for the
        # killed one to leave the group
        {
            "offset.flush.interval.ms": str(FLUSH_INTERVAL_MS),
            "session.timeout.ms": "6000",
            "heartbeat.interval.ms": "1000",
            # a distributed worker offers the FileStream connectors only when told to (docs/security.md)
            "filestream.connectors.enable": "true",
        },
    )
    worker = WorkerProcess(["distributed", str(props)], port, tmp_path / "worker.log")
    workers.append(worker)
    worker.start()
    # the nginx-accesslog-source seed, registered over REST as users do
    config = {"connector.class": "FileStreamSource", "tasks.max": "1", "file": str(source), "topic": topic}
    response = requests.post(
        f"{worker.url}/connectors", json={"name": "nginx-accesslog-source", "config": config}, timeout=60
    )
    assert response.status_code == 201, response.text
    writer = Writer(source).start()
    try:
        kill_after_a_burst(kafka, topic, worker)
        time.sleep(1.0)
        worker.start()
        written_at_restart = len(writer.written)
        wait_for(
            lambda: len(kafka.read_to_end(topic)) > written_at_restart + 200, 60, "the stream after restart"
        )
    finally:
        writer.stop()
    wait_for(lambda: set(topic_lines(kafka, topic, schemas=False)) >= set(writer.written), 30, "every line")
    check_at_least_once(topic_lines(kafka, topic, schemas=False), writer.written, writer.rate)
    status = worker.get("/connectors/nginx-accesslog-source/status").json()
    assert status["connector"]["state"] == "RUNNING" and status["tasks"][0]["state"] == "RUNNING"
    assert worker.terminate() == 0
