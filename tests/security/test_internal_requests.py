"""Attacks on a distributed worker with basic authentication (issue #20, items 2 and 6), each shown
refused against a real worker process:

* a request carrying ``X-Connect-Authorization`` skips the password on the internal paths only to meet a
  signature check made on the raw bytes, before any parsing, with the body bounded: a 40 MB body (and a
  100 MB one, to any path, with or without credentials or signature headers) is refused with 413 and the
  worker's resident memory grows by under 20 MB;
* a wrong signature gets the same answer for a connector that exists and one that does not;
* a signature made with HmacSHA1 is refused when ``inter.worker.verification.algorithms`` allows only
  HmacSHA256, though it is a valid signature with the group's session key (read here from the config
  topic), while the same body signed with HmacSHA256 is accepted.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from pathlib import Path
from typing import Any

import pytest
from attack import BASIC, MB, call, distributed_worker, rss_kb, send_body
from worker_process import WorkerProcess, wait_for


def sign(key: bytes, body: bytes, algorithm: str) -> dict[str, str]:
    """KIP-507's headers, computed here (not with the worker's code)."""
    digest = hmac.new(key, body, {"HmacSHA1": hashlib.sha1, "HmacSHA256": hashlib.sha256}[algorithm])
    return {
        "X-Connect-Authorization": base64.b64encode(digest.digest()).decode(),
        "X-Connect-Request-Signature-Algorithm": algorithm,
    }


pytestmark = [pytest.mark.integration, pytest.mark.e2e]

FAKE = {
    "X-Connect-Authorization": base64.b64encode(b"x" * 32).decode(),
    "X-Connect-Request-Signature-Algorithm": "HmacSHA256",
}


def _session_key(kafka: Any, worker: WorkerProcess) -> bytes:
    def find() -> bytes | None:
        for msg in kafka.read_to_end("sec-configs"):
            if msg.key() == b"session-key" and msg.value():
                return base64.b64decode(json.loads(msg.value())["key"])
        return None

    key: bytes = wait_for(find, 60, "the session key in the config topic")
    return key


def _source(tmp_path: Path, topic: str) -> dict[str, str]:
    (tmp_path / "in.txt").touch()
    return {"connector.class": "FileStreamSource", "file": str(tmp_path / "in.txt"), "topic": topic}


def test_signed_paths_check_the_signature_first_and_bodies_are_bounded(
    tmp_path: Path, kafka: Any, workers: list[WorkerProcess]
) -> None:
    worker = distributed_worker(tmp_path, kafka, workers, add={"filestream.connectors.enable": "true"})
    assert worker.proc is not None
    created = call(worker, "POST", "/connectors", json={"name": "real", "config": _source(tmp_path, "t1")})
    assert created.status_code == 201, created.text

    # -- a wrong signature: one answer whether the connector exists or not, nothing parsed
    answers = set()
    for name in ("real", "missing"):
        for path, method in ((f"/connectors/{name}/tasks", "POST"), (f"/connectors/{name}/fence", "PUT")):
            response = call(worker, method, path, auth=None, headers=FAKE, data=b"[{}]")
            answers.add((path.rsplit("/", 1)[1], response.status_code, response.text))
    assert answers == {
        ("tasks", 403, '{"error_code":403,"message":"Internal request contained invalid signature."}'),
        ("fence", 403, '{"error_code":403,"message":"Internal request contained invalid signature."}'),
    }
    # not even malformed JSON is looked at before the signature
    response = call(worker, "POST", "/connectors/real/tasks", auth=None, headers=FAKE, data=b"{not json")
    assert response.status_code == 403

    # -- HmacSHA1 with the real session key: refused, the algorithm is not in the allowed list
    key = _session_key(kafka, worker)
    body = json.dumps([{"task.class": "x"}]).encode()
    response = call(
        worker, "POST", "/connectors/real/tasks", auth=None, headers=sign(key, body, "HmacSHA1"), data=body
    )
    assert response.status_code == 400, response.text
    assert "does not support the 'HmacSHA1' key signing algorithm" in response.json()["message"]
    # a correct HmacSHA256 signature passes (the check is not a blanket refusal): a missing connector now
    response = call(
        worker,
        "POST",
        "/connectors/missing/tasks",
        auth=None,
        headers=sign(key, body, "HmacSHA256"),
        data=body,
        params={"forward": "false"},
    )
    assert response.status_code == 404, response.text

    # -- 40 MB behind a fake signature, 100 MB anywhere: 413, memory stays
    time.sleep(1)
    before = rss_kb(worker.proc.pid)
    status, answer, _ = send_body(worker.port, "POST", "/connectors/real/tasks", 40 * MB, FAKE)
    assert status == 413, answer
    assert b"rest.request.body.max.bytes" in answer
    cases = [
        ("POST", "/connectors", {}),
        ("POST", "/connectors", {"Authorization": BASIC}),
        ("PUT", "/connectors/real/config", {"Authorization": BASIC}),
        ("POST", "/connectors/real/tasks", FAKE),
        ("PUT", "/connectors/missing/fence", FAKE),
        ("PUT", "/connector-plugins/FileStreamSource/config/validate", {"Authorization": BASIC}),
        ("PATCH", "/connectors/real/offsets", {"Authorization": BASIC}),
        ("PUT", "/admin/loggers/root", {"Authorization": BASIC}),
        ("POST", "/no/such/path", {}),
    ]
    for method, path, headers in cases:
        for chunked in (False, True):
            status, answer, sent = send_body(worker.port, method, path, 100 * MB, headers, chunked=chunked)
            assert status == 413 or (status == 401 and "Authorization" not in headers), (path, status, answer)
            assert sent < 100 * MB  # refused before the end: the client could stop sending
    # and a client that sends the whole 100 MB anyway: read and dropped, not kept
    status, _, sent = send_body(
        worker.port, "POST", "/connectors", 100 * MB, {"Authorization": BASIC}, send_all=True
    )
    assert (status, sent) == (413, 100 * MB)
    time.sleep(1)
    grown = rss_kb(worker.proc.pid) - before
    assert grown < 20 * 1024, f"RSS grew by {grown} kB"

    # issue #19: a 300 MB POST, sent to its end, refused with 413 and the RSS growing by a few MB at most
    before = rss_kb(worker.proc.pid)
    for chunked in (False, True):
        status, _, sent = send_body(
            worker.port,
            "POST",
            "/connectors",
            300 * MB,
            {"Authorization": BASIC},
            chunked=chunked,
            send_all=True,
        )
        assert (status, sent) == (413, 300 * MB)
    grown = rss_kb(worker.proc.pid) - before
    assert grown < 5 * 1024, f"RSS grew by {grown} kB"

    # the worker still works, and a body under the limit is read as before
    assert call(worker, "GET", "/connectors").json() == ["real"]
    assert call(worker, "GET", "/connectors", auth=None).status_code == 401
    assert call(worker, "PUT", "/connectors/real/config", json=_source(tmp_path, "t2")).status_code == 200
