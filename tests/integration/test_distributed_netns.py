"""A distributed group across two hosts: a worker in a network namespace of the test's own.

:mod:`netlab` makes the second host: a namespace on the lab's bridge, the machine's end ``lab.address``,
the namespace's ``host.address``, its own loopback. The test starts a Kafka broker of its own listening on
the lab's address only (the shared broker on 127.0.0.1 is out of the namespace's reach, as another machine's
loopback would be), worker A on the machine (REST on the lab's address) and then worker B inside the
namespace (REST on the host's address), each advertising its own address
(``rest.advertised.host.name``). A joined first and leads.

* B refuses a create sent with ``forward=false`` (409: it is not the leader), so
* a create sent to B is forwarded across the veth to A, which writes it: both list it;
* the group spreads the tasks of two file sources over both hosts, and each host's tasks run (their
  ``worker_id`` is the host's advertised address) and write their lines to the topic.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from faultkit import PrivateKafka, Worker, free_port, group_worker_props, read_topic, wait_for
from netlab import Host, Lab, require_netns

pytestmark = pytest.mark.timeout(600)


@pytest.fixture
def host() -> Iterator[Host]:
    require_netns()
    lab = Lab("dn")
    try:
        yield lab.add_host()
    finally:
        lab.close()


def _worker(tmp_path: Path, name: str, bootstrap: str, address: str, wrap: list[str] | None) -> Worker:
    port = free_port()
    props = group_worker_props(bootstrap, "ns-group", "ns-", port, 6000, 2000)
    props["listeners"] = f"http://{address}:{port}"
    props["rest.advertised.host.name"] = address
    path = tmp_path / f"{name}.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return Worker("distributed", [str(path)], port, tmp_path / f"{name}.log", host=address, wrap=wrap)


def _source(tmp_path: Path, name: str, topic: str) -> dict[str, str]:
    data = tmp_path / f"{name}.txt"
    data.write_text("".join(f"{name} line {i}\n" for i in range(20)))
    return {"connector.class": "FileStreamSource", "file": str(data), "topic": topic, "tasks.max": "1"}


def test_a_worker_in_another_namespace_joins_and_forwards(tmp_path: Path, host: Host) -> None:
    gateway = host.lab.address
    kafka = PrivateKafka(tmp_path / "kafka", host=gateway).start()
    a = _worker(tmp_path, "a", kafka.bootstrap, gateway, None)
    b = _worker(tmp_path, "b", kafka.bootstrap, host.address, host.command([]))
    topic = "ns-lines"
    try:
        a.start(timeout=120)
        wait_for(
            lambda: requests.get(a.url + "/connectors", timeout=5).status_code == 200, 60, "A in the group"
        )
        b.start(timeout=120)
        wait_for(
            lambda: requests.get(b.url + "/connectors", timeout=5).status_code == 200, 60, "B in the group"
        )

        first = {"name": "ns-one", "config": _source(tmp_path, "one", topic)}
        refused = requests.post(b.url + "/connectors?forward=false", json=first, timeout=30)
        assert refused.status_code == 409, refused.text  # B is no leader: the next create must travel

        def create(worker: Worker, body: dict[str, Any]) -> bool:
            r = requests.post(worker.url + "/connectors", json=body, timeout=100)
            assert r.status_code in (201, 409), r.text  # 409 only while the group rebalances
            return r.status_code == 201

        wait_for(lambda: create(b, first), 90, "a create through B", b.log)
        wait_for(lambda: "ns-one" in requests.get(a.url + "/connectors", timeout=5).json(), 30, "A lists it")
        second = {"name": "ns-two", "config": _source(tmp_path, "two", topic)}
        wait_for(lambda: create(a, second), 90, "a create through A", a.log)

        def workers() -> set[str]:
            ids = set()
            for name in ("ns-one", "ns-two"):
                status = requests.get(f"{b.url}/connectors/{name}/status", timeout=10).json()
                for task in status.get("tasks", []):
                    if task.get("state") == "RUNNING":
                        ids.add(str(task["worker_id"]).split(":")[0])
            return ids

        spread = wait_for(lambda: workers() == {gateway, host.address}, 90, "a task RUNNING on each host")
        lines = wait_for(
            lambda: (v := read_topic(kafka.bootstrap, topic, "read_uncommitted")) and len(v) >= 40 and v,
            90,
            "both files' lines",
        )
    finally:
        b.stop()
        a.stop()
        kafka.stop()
    assert spread
    assert sorted(set(lines)) == sorted({f"{n} line {i}" for n in ("one", "two") for i in range(20)})
    assert "Leader is creating the session key" in a.log()
