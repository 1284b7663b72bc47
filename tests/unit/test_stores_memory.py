"""The in-memory stores (standalone mode and herder tests)."""

import pytest

from cdc.api.errors import NotFoundError
from cdc.api.offsets import offset_key
from cdc.worker.stores.base import (
    ConnectorStatus,
    SessionKey,
    State,
    TargetState,
    TaskId,
    TaskStatus,
    TopicStatus,
)
from cdc.worker.stores.memory import (
    MemoryConfigBackingStore,
    MemoryOffsetBackingStore,
    MemoryStatusBackingStore,
    RecordingConfigListener,
)


def test_offsets_get_set_delete_and_partitions() -> None:
    store = MemoryOffsetBackingStore()
    k1 = offset_key("inv", {"server": "a"})
    k2 = offset_key("inv", {"server": "b"})
    other = offset_key("other", {"x": 1})
    store.set({k1: b'{"pos":1}', k2: b'{"pos":2}', other: b"{}", b"not-json": b"{}"})
    assert store.get([k1, b"missing"]) == {k1: b'{"pos":1}', b"missing": None}
    assert sorted(p["server"] for p in store.connector_partitions("inv")) == ["a", "b"]
    store.set({k2: None})
    assert store.connector_partitions("inv") == [{"server": "a"}]
    assert store.get([k2]) == {k2: None}


def test_config_store_notifies_synchronously_and_snapshots_are_copies() -> None:
    store = MemoryConfigBackingStore()
    listener = RecordingConfigListener()
    store.set_update_listener(listener)
    store.put_connector_config("a", {"x": "1"})
    store.put_task_configs("a", [{"t": "0"}, {"t": "1"}])
    store.put_target_state("a", TargetState.STOPPED)
    snap = store.snapshot()
    assert snap.connectors() == ["a"]
    assert snap.tasks("a") == [TaskId("a", 0), TaskId("a", 1)]
    assert snap.target_state("a") is TargetState.STOPPED
    assert snap.task_config_generations == {"a": 0}
    snap.connector_configs["a"]["x"] = "mutated"
    assert store.snapshot().connector_configs["a"] == {"x": "1"}
    assert store.snapshot().offset == 3
    store.put_task_configs("a", [{"t": "only"}])
    assert store.snapshot().tasks("a") == [TaskId("a", 0)]
    assert store.snapshot().task_config_generations == {"a": 1}
    store.remove_connector_config("a")
    assert store.snapshot().connectors() == [] and store.snapshot().task_configs == {}
    assert listener.calls == [
        ("update", "a"),
        ("tasks", [TaskId("a", 0), TaskId("a", 1)]),
        ("target", "a"),
        ("tasks", [TaskId("a", 0)]),
        ("remove", "a"),
    ]


def test_config_store_initial_target_state_and_errors() -> None:
    store = MemoryConfigBackingStore()
    store.put_connector_config("p", {}, TargetState.PAUSED)
    store.put_connector_config("p", {"v": "2"})  # an update keeps the state
    assert store.snapshot().target_state("p") is TargetState.PAUSED
    with pytest.raises(NotFoundError):
        store.put_task_configs("missing", [{}])
    with pytest.raises(NotFoundError):
        store.put_target_state("missing", TargetState.PAUSED)
    key = SessionKey(b"k", "HmacSHA256", 5)
    store.put_session_key(key)
    assert store.snapshot().session_key == key


def test_status_store_put_get_destroy() -> None:
    store = MemoryStatusBackingStore()
    store.put(ConnectorStatus("c", State.RUNNING, "w1", 1))
    store.put(TaskStatus(TaskId("c", 1), State.RUNNING, "w1", 1))
    store.put(TaskStatus(TaskId("c", 0), State.FAILED, "w1", 1, "trace"))
    assert store.get("c") == ConnectorStatus("c", State.RUNNING, "w1", 1)
    assert [t.id.task for t in store.get_all("c")] == [0, 1]
    assert store.get_task(TaskId("c", 0)).trace == "trace"  # type: ignore[union-attr]
    assert store.connectors() == {"c"}
    store.put(TaskStatus(TaskId("c", 1), State.DESTROYED, "w1", 1))
    assert store.get_task(TaskId("c", 1)) is None
    store.put(ConnectorStatus("c", State.DESTROYED, "w1", 1))
    assert store.get("c") is None and store.get_all("c") == [] and store.connectors() == set()


def test_status_store_safe_write() -> None:
    store = MemoryStatusBackingStore()
    store.put_safe(ConnectorStatus("c", State.RUNNING, "w1", 5))
    store.put_safe(ConnectorStatus("c", State.UNASSIGNED, "w2", 4))  # older generation, other worker
    assert store.get("c") == ConnectorStatus("c", State.RUNNING, "w1", 5)
    store.put_safe(ConnectorStatus("c", State.PAUSED, "w1", 1))  # same worker
    assert store.get("c").state is State.PAUSED  # type: ignore[union-attr]
    store.put_safe(TaskStatus(TaskId("c", 0), State.RUNNING, "w1", 5))
    store.put_safe(TaskStatus(TaskId("c", 0), State.UNASSIGNED, "w2", 3))
    assert store.get_task(TaskId("c", 0)).worker_id == "w1"  # type: ignore[union-attr]
    store.put(TaskStatus(TaskId("c", 0), State.UNASSIGNED, "w2", 3))  # put is unconditional
    assert store.get_task(TaskId("c", 0)).worker_id == "w2"  # type: ignore[union-attr]


def test_status_store_topics() -> None:
    store = MemoryStatusBackingStore()
    store.put_topic(TopicStatus("t1", "c", 0, 10))
    store.put_topic(TopicStatus("t2", "c", 1, 11))
    assert store.get_topic("c", "t1") == TopicStatus("t1", "c", 0, 10)
    assert {t.topic for t in store.get_all_topics("c")} == {"t1", "t2"}
    store.delete_topic("c", "t1")
    assert store.get_topic("c", "t1") is None
    assert store.get_all_topics("nobody") == []
