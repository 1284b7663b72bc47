"""Config providers (issue #20, item 4), against a real standalone worker with basic authentication:

* a placeholder written where a value shows — ``"topic": "${file:…:key}"`` — is resolved when the task runs
  (the records go to that topic), but no REST answer carries the value back: not the active topics, not the
  status, not validate, not an error;
* ``config.providers.file.param.allowed.paths`` keeps a REST user from reading other files through a
  provider: ``${file:/etc/passwd:root}`` is refused at create with "not allowed" on its key, and nothing of
  the file shows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from attack import call, provider_worker
from worker_process import WorkerProcess, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.e2e]


def test_resolved_values_never_come_back_and_allowed_paths_hold(
    tmp_path: Path, kafka: Any, workers: list[WorkerProcess]
) -> None:
    worker = provider_worker(tmp_path, kafka, workers)
    secrets = tmp_path / "secrets"
    topic = kafka.create_topic("hidden-topic-name")
    missing = tmp_path / "no-such-directory" / "secret-file-name.txt"
    (secrets / "app.properties").write_text(f"topic={topic}\nfile={missing}\n", encoding="utf-8")
    (tmp_path / "in.txt").write_text("a line\n", encoding="utf-8")
    placeholder = f"${{file:{secrets}/app.properties:topic}}"
    config = {"connector.class": "FileStreamSource", "file": str(tmp_path / "in.txt"), "topic": placeholder}
    assert call(worker, "POST", "/connectors", json={"name": "leak", "config": config}).status_code == 201

    # the task resolved it: the line reached the real topic
    wait_for(lambda: kafka.read_to_end(topic), 60, "the line in the resolved topic")

    def answers() -> list[str]:
        return [
            call(worker, "GET", "/connectors/leak/topics").text,
            call(worker, "GET", "/connectors/leak/status").text,
            call(worker, "GET", "/connectors/leak/tasks/0/status").text,
            call(worker, "GET", "/connectors?expand=status&expand=info").text,
            call(worker, "GET", "/connectors/leak/config").text,
            call(worker, "GET", "/connectors/leak/tasks").text,
            call(worker, "PUT", "/connector-plugins/FileStreamSource/config/validate", json=config).text,
        ]

    wait_for(lambda: "[hidden]" in answers()[0], 30, "the topic tracked (and masked)")
    for text in answers():
        assert topic not in text, text

    # an error carrying a resolved value: the file a sink task cannot create
    bad = {
        "connector.class": "FileStreamSink",
        "file": f"${{file:{secrets}/app.properties:file}}",
        "topics": kafka.topic("other"),
    }
    assert call(worker, "PUT", "/connectors/leak2/config", json=bad).status_code == 201
    status = wait_for(
        lambda: (
            (s := call(worker, "GET", "/connectors/leak2/status").json()).get("tasks")
            and s["tasks"][0]["state"] == "FAILED"
            and s
        ),
        60,
        "the task FAILED on the missing directory",
    )
    trace = status["tasks"][0]["trace"]
    assert "Couldn't find or create file '[hidden]'" in trace and str(missing) not in str(status)

    # outside allowed.paths: refused at create (the placeholder is resolved before validation, as Connect
    # does), naming the key; nothing of the file shown
    steal = {**config, "topic": "${file:/etc/passwd:root}"}
    answer = call(worker, "PUT", "/connectors/steal/config", json=steal)
    assert answer.status_code == 400, answer.text
    assert "topic: The path /etc/passwd is not allowed to be accessed" in answer.json()["message"]
    assert "/bin/" not in answer.text and ":0:0:" not in answer.text
    assert call(worker, "GET", "/connectors/steal/status").status_code == 404
