"""Config and status records as Connect writes them, and the config log's reading rules (no Kafka)."""

import pytest

from cdc.api.errors import DataError
from cdc.worker.stores import records as r
from cdc.worker.stores.base import (
    ConnectorStatus,
    RestartRequest,
    SessionKey,
    State,
    TargetState,
    TaskId,
    TaskStatus,
    TopicStatus,
)
from cdc.worker.stores.config_state import ConfigLog
from cdc.worker.stores.memory import RecordingConfigListener

# ------------------------------------------------------------------------------------------ encoding


def test_config_values_are_compact_json() -> None:
    assert r.encode_config({"connector.class": "FileStreamSource", "tasks.max": "1"}) == (
        b'{"properties":{"connector.class":"FileStreamSource","tasks.max":"1"}}'
    )
    assert r.encode_config({"k": "héllo"}) == '{"properties":{"k":"héllo"}}'.encode()
    assert r.encode_commit(3) == b'{"tasks":3}'
    assert r.encode_task_count(2) == b'{"task-count":2}'


@pytest.mark.parametrize(
    ("state", "raw"),
    [
        (TargetState.STARTED, b'{"state":"STARTED","state.v2":"STARTED"}'),
        (TargetState.PAUSED, b'{"state":"PAUSED","state.v2":"PAUSED"}'),
        (TargetState.STOPPED, b'{"state":"PAUSED","state.v2":"STOPPED"}'),
    ],
)
def test_target_state_records(state: TargetState, raw: bytes) -> None:
    assert r.encode_target_state(state) == raw
    assert r.decode_target_state(r.decode_json(raw)) is state


def test_target_state_written_by_an_old_worker() -> None:
    assert r.decode_target_state({"state": "PAUSED"}) is TargetState.PAUSED
    with pytest.raises(DataError):
        r.decode_target_state({"state": "NAPPING"})


def test_restart_and_session_key_records() -> None:
    request = RestartRequest("c", only_failed=True, include_tasks=False)
    assert r.encode_restart_request(request) == b'{"include-tasks":false,"only-failed":true}'
    assert r.decode_restart_request("c", {"include-tasks": True}) == RestartRequest("c", False, True)
    key = SessionKey(b"\x00\x01secret", "HmacSHA256", 1700000000000)
    raw = r.encode_session_key(key)
    assert raw == b'{"key":"AAFzZWNyZXQ=","algorithm":"HmacSHA256","creation-timestamp":1700000000000}'
    assert r.decode_session_key(r.decode_json(raw)) == key


def test_keys() -> None:
    assert r.connector_key("a-b") == "connector-a-b"
    assert r.task_key(TaskId("a-b", 3)) == "task-a-b-3"
    assert r.commit_key("x") == "commit-x"
    assert r.target_state_key("x") == "target-state-x"
    assert r.restart_key("x") == "restart-connector-x"
    assert r.parse_task_key("task-my-conn-12") == TaskId("my-conn", 12)
    assert r.parse_task_key("task-nonumber") is None
    assert r.parse_task_key("task-a-x") is None


def test_status_records_match_what_users_saw() -> None:
    status = ConnectorStatus("mysql_cdc_ops_source_avro_01", State.RUNNING, "127.0.1.1:8083", 2)
    assert (
        r.encode_status(status)
        == b'{"state":"RUNNING","trace":null,"worker_id":"127.0.1.1:8083","generation":2}'
    )
    assert r.connector_status_key(status.connector) == "status-connector-mysql_cdc_ops_source_avro_01"
    task = TaskStatus(TaskId("mysql_cdc_ops_source_avro_01", 0), State.FAILED, "w:8083", 5, "Trace\n\tat x")
    raw = r.encode_status(task)
    assert raw == b'{"state":"FAILED","trace":"Trace\\n\\tat x","worker_id":"w:8083","generation":5}'
    assert r.task_status_key(task.id) == "status-task-mysql_cdc_ops_source_avro_01-0"
    assert r.decode_task_status(task.id, r.decode_json(raw)) == task
    assert r.encode_status(ConnectorStatus("c", State.DESTROYED, "w", 1)) is None


def test_topic_status_record() -> None:
    status = TopicStatus("mysqlavro", "mysql_cdc_ops_source_avro_01", 0, 1700000000123)
    key = r.topic_status_key(status.topic, status.connector)
    assert key == "status-topic-mysqlavro:connector-mysql_cdc_ops_source_avro_01"
    assert r.parse_topic_status_key(key) == ("mysqlavro", "mysql_cdc_ops_source_avro_01")
    raw = r.encode_topic_status(status)
    assert raw == (
        b'{"topic":{"name":"mysqlavro","connector":"mysql_cdc_ops_source_avro_01","task":0,'
        b'"discoverTimestamp":1700000000123}}'
    )
    assert r.decode_topic_status(r.decode_json(raw)) == status


def test_status_key_parsing() -> None:
    assert r.parse_connector_status_key("status-connector-a-b") == "a-b"
    assert r.parse_connector_status_key("status-connector-") is None
    assert r.parse_task_status_key("status-task-a-b-7") == TaskId("a-b", 7)
    assert r.parse_task_status_key("status-task-a") is None
    assert r.parse_topic_status_key("status-topic-t") is None


def test_safe_write_rule() -> None:
    old = ConnectorStatus("c", State.RUNNING, "w1", 5)
    assert r.can_write_safely(None, ConnectorStatus("c", State.RUNNING, "w2", 1))
    assert r.can_write_safely(old, ConnectorStatus("c", State.FAILED, "w1", 1))  # same worker
    assert r.can_write_safely(old, ConnectorStatus("c", State.RUNNING, "w2", 6))  # newer generation
    assert r.can_write_safely(old, ConnectorStatus("c", State.RUNNING, "w2", 5))  # same generation (Java <=)
    assert not r.can_write_safely(old, ConnectorStatus("c", State.UNASSIGNED, "w2", 4))


# ---------------------------------------------------------------------------------------- the config log


def feed(
    state: ConfigLog, records: list[tuple[str, bytes | None]], listener: RecordingConfigListener | None = None
) -> None:
    for key, value in records:
        for call in state.apply(key, value, max(state.offset, 0)):
            assert listener is not None
            call(listener)


def test_task_configs_apply_only_on_commit() -> None:
    log = ConfigLog()
    feed(log, [("connector-a", r.encode_config({"x": "1"})), ("task-a-0", r.encode_config({"t": "0"}))])
    snap = log.snapshot()
    assert snap.connector_configs == {"a": {"x": "1"}}
    assert snap.tasks("a") == []
    assert snap.target_state("a") is TargetState.STARTED
    feed(log, [("task-a-1", r.encode_config({"t": "1"})), ("commit-a", r.encode_commit(2))])
    snap = log.snapshot()
    assert snap.tasks("a") == [TaskId("a", 0), TaskId("a", 1)]
    assert snap.task_config(TaskId("a", 1)) == {"t": "1"}
    assert snap.task_config_generations == {"a": 0}
    assert snap.offset == 4  # next offset after the last record read (Connect's config offset)


def test_incomplete_commit_marks_the_connector_inconsistent() -> None:
    log = ConfigLog()
    feed(
        log,
        [
            ("connector-a", r.encode_config({})),
            ("task-a-1", r.encode_config({})),
            ("commit-a", r.encode_commit(2)),
        ],
    )
    assert log.snapshot().inconsistent == {"a"}
    assert log.snapshot().tasks("a") == []
    feed(
        log,
        [
            ("task-a-0", r.encode_config({})),
            ("task-a-1", r.encode_config({})),
            ("commit-a", r.encode_commit(2)),
        ],
    )
    assert log.snapshot().inconsistent == set()
    assert len(log.snapshot().tasks("a")) == 2


def test_delete_forgets_connector_and_tasks() -> None:
    log = ConfigLog()
    feed(
        log,
        [
            ("target-state-a", r.encode_target_state(TargetState.PAUSED)),
            ("connector-a", r.encode_config({})),
            ("task-a-0", r.encode_config({})),
            ("commit-a", r.encode_commit(1)),
            ("connector-a", None),
            ("target-state-a", None),
        ],
    )
    snap = log.snapshot()
    assert snap.connectors() == [] and snap.task_configs == {} and snap.target_states == {}
    # A commit whose connector's config (and tombstone) were compacted away is ignored.
    feed(log, [("task-b-0", r.encode_config({})), ("commit-b", r.encode_commit(1))])
    assert log.snapshot().task_counts == {}


def test_listener_calls_only_after_start() -> None:
    log = ConfigLog()
    listener = RecordingConfigListener()
    feed(log, [("connector-a", r.encode_config({}))], listener)
    assert listener.calls == []
    log.started = True
    key = SessionKey(b"k", "HmacSHA256", 1)
    feed(
        log,
        [
            ("connector-a", r.encode_config({"v": "2"})),
            ("target-state-a", r.encode_target_state(TargetState.STOPPED)),
            ("target-state-a", r.encode_target_state(TargetState.STOPPED)),  # unchanged: no call
            ("task-a-0", r.encode_config({})),
            ("commit-a", r.encode_commit(1)),
            ("session-key", r.encode_session_key(key)),
            ("restart-connector-a", r.encode_restart_request(RestartRequest("a", True, True))),
            ("target-state-new", r.encode_target_state(TargetState.PAUSED)),  # before its connector: no call
            ("connector-a", None),
            ("logger-cluster-org.apache", b'{"level":"DEBUG"}'),
            ("garbage", b"{}"),
        ],
        listener,
    )
    assert listener.calls == [
        ("update", "a"),
        ("target", "a"),
        ("tasks", [TaskId("a", 0)]),
        ("session", key),
        ("restart", RestartRequest("a", True, True)),
        ("remove", "a"),
        ("logger", ("org.apache", "DEBUG")),
    ]
    assert log.snapshot().session_key == key
    assert log.snapshot().target_states["new"] is TargetState.PAUSED


def test_bad_records_are_skipped() -> None:
    log = ConfigLog()
    feed(
        log,
        [
            ("connector-a", b"not json"),
            ("connector-b", b'{"properties":"nope"}'),
            ("task-x", r.encode_config({})),
            ("connector-c", r.encode_config({"n": "1"})),
        ],
    )
    assert log.snapshot().connectors() == ["c"]
