"""Connector names (issue #20, item 5): every create and update path applies the same rules, and no name
the worker accepts is one it cannot delete again.

A property-based fuzz (Hypothesis) sends names over ``POST /connectors`` and ``PUT /connectors/{n}/config``
to a real standalone worker: arbitrary Unicode (lone surrogates included), the names of the issue (newlines,
NUL, ``.``/``..``, 200 KB) and names around the length limit. No answer may be a 5xx; whatever was created is
deleted by the name the worker gave back, and the worker ends with no connector.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import requests
from attack import AUTH, standalone_worker
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from worker_process import WorkerProcess

pytestmark = [pytest.mark.integration, pytest.mark.e2e]

ISSUE_NAMES = [
    "forged\n2026-01-01 INFO admin logged in",
    "nul\x00name",
    ".",
    "..",
    "\ud800",
    "x" * 200_000,
    "é" * 512,  # 1 024 bytes: the limit
    "é" * 513,
    "a" * 1024,
    "a" * 1025,
    "rtl\u202eevil",
    "line\u2028sep",
    "with/slash",
    " padded ",
    "%2e%2e",
    "ok-name",
]
names = st.one_of(
    st.sampled_from(ISSUE_NAMES),
    st.text(st.characters(codec=None), max_size=40),
    st.text(st.characters(codec="utf-8"), min_size=1000, max_size=1100),
)


def _url_name(name: str) -> str:
    return quote(name, safe="", errors="surrogatepass")


def _body(name: str, config: dict[str, str]) -> bytes:
    # ensure_ascii keeps lone surrogates as \\ud800 escapes, as a client writing JSON by hand would
    return json.dumps({"name": name, "config": config}).encode()


def test_fuzzed_names_never_5xx_and_always_deletable(
    tmp_path: Path, kafka: Any, workers: list[WorkerProcess]
) -> None:
    worker = standalone_worker(tmp_path, kafka, workers)
    (tmp_path / "in.txt").touch()
    config = {"connector.class": "FileStreamSource", "file": str(tmp_path / "in.txt"), "topic": "t"}
    session = requests.Session()
    session.auth = AUTH
    headers = {"Content-Type": "application/json"}
    refused: list[str] = []

    def delete_created(response: requests.Response) -> None:
        created = response.json()["name"]
        deleted = session.delete(f"{worker.url}/connectors/{_url_name(created)}", timeout=30)
        assert deleted.status_code == 204, (created[:80], deleted.text[:300])

    @settings(
        max_examples=70,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(name=names, method=st.sampled_from(["POST", "PUT"]))
    def check(name: str, method: str) -> None:
        if method == "POST":
            response = session.post(
                f"{worker.url}/connectors", data=_body(name, config), headers=headers, timeout=30
            )
        else:
            url = f"{worker.url}/connectors/{_url_name(name)}/config"
            try:
                response = session.put(url, data=json.dumps(config).encode(), headers=headers, timeout=30)
            except (requests.ConnectionError, requests.exceptions.ChunkedEncodingError):
                # uvicorn refuses a request line over 16 KB (400, then closes while the client still sends)
                assert len(url) > 16 * 1024, url[:200]
                refused.append(name)
                return
        assert response.status_code < 500, (method, name[:80], response.text[:300])
        if response.status_code in (200, 201):
            delete_created(response)
        else:
            assert response.status_code in (400, 404, 405, 409, 413, 414), response.text[:300]
            refused.append(name)

    check()
    assert session.get(f"{worker.url}/connectors", timeout=30).json() == []
    assert refused, "the fuzz should have met refused names"
    log = worker.log()
    assert "2026-01-01 INFO admin logged in" not in log.replace("\\n", "\n").split("\n")


@pytest.mark.parametrize("method", ["POST", "PUT"])
def test_the_issue_names_are_refused_on_both_paths(
    tmp_path: Path, kafka: Any, workers: list[WorkerProcess], method: str
) -> None:
    worker = standalone_worker(tmp_path, kafka, workers)
    (tmp_path / "in.txt").touch()
    config = {"connector.class": "FileStreamSource", "file": str(tmp_path / "in.txt"), "topic": "t"}
    bad = ["forged\nline", "nul\x00name", ".", "..", "x" * 200_000, "a" * 1025, "rtl\u202e", "sep\u2028"]
    if method == "POST":
        bad.append("\ud800")  # a URL cannot carry it (its bytes are read as U+FFFD, a valid name)
    for name in bad:
        if method == "POST":
            response = requests.post(
                f"{worker.url}/connectors",
                data=_body(name, config),
                headers={"Content-Type": "application/json"},
                auth=AUTH,
                timeout=30,
            )
        else:
            try:
                response = requests.put(
                    f"{worker.url}/connectors/{_url_name(name)}/config", json=config, auth=AUTH, timeout=30
                )
            except (requests.ConnectionError, requests.exceptions.ChunkedEncodingError):
                assert len(name) > 16 * 1024  # a request line over 16 KB: refused, connection closed
                continue
        # (HTTP clients resolve "." and ".." in a URL to /connectors/config or /config: 405, 404)
        allowed = (400, 404, 405) if method == "PUT" and name in (".", "..") else (400,)
        assert response.status_code in allowed, (name[:40], response.status_code, response.text[:200])
    assert requests.get(f"{worker.url}/connectors", auth=AUTH, timeout=30).json() == []
    accepted = requests.put(
        f"{worker.url}/connectors/{'a' * 1024}/config", json=config, auth=AUTH, timeout=30
    )
    assert accepted.status_code == 201
