"""The quick starts of docs/mysql.md and docs/jdbc.md, run as a newcomer runs them: copy and paste.

The fenced blocks whose info string says ``quickstart`` are taken from the page in order:
``file=NAME`` blocks are written to NAME, ``background`` blocks are started and left running (the worker),
and the other ``sh`` blocks are run with bash in one directory, with the ``cdc`` command of this
checkout on ``PATH``. Only what would collide with other tests on the shared stack is replaced: the word
``shop`` (the database, and the names made from it) by the test's own database, ``demo`` (the topic
prefix) by a topic prefix of the test's own, the REST port 8083 by a free one, the brokers'
``localhost:9092`` by the stack's, and the MySQL quick start's ``database.server.id``. The test then checks
what ``cdc consume`` printed: the snapshot's ``op=r`` records and the streamed update (MySQL), the rows
polled before and after an insert (JDBC).
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
_OPEN = re.compile(r"^(?P<indent>\s*)```(?P<lang>\S*)(?P<info>.*)$")


@dataclass(frozen=True)
class Block:
    lang: str
    words: tuple[str, ...]
    body: str

    @property
    def file(self) -> str | None:
        for word in self.words:
            if word.startswith("file="):
                return word.removeprefix("file=")
        return None


def quickstart_blocks(markdown: str) -> list[Block]:
    """The fenced blocks marked ``quickstart``, in order, their indentation removed."""
    blocks: list[Block] = []
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        m = _OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        indent = len(m.group("indent"))
        body: list[str] = []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i])
            i += 1
        i += 1
        words = tuple(m.group("info").split())
        if "quickstart" in words:
            blocks.append(Block(m.group("lang"), words, "\n".join(body) + "\n"))
    return blocks


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run_quickstart(doc: str, tmp_path: Path, kafka: Any, mysql_db: Any) -> list[tuple[str, str]]:
    """Run the page's quick start; returns each ``sh`` block's (command text, stdout)."""
    assert (mysql_db.host, mysql_db.port) == ("127.0.0.1", 3306), "the quick starts name the stack's MariaDB"
    port = _free_port()
    prefix = kafka.topic("demo")
    replace = [
        (r"\bshop\b", mysql_db.name),
        (r"\bdemo\b", prefix),
        (r"\b8083\b", str(port)),
        (r"\blocalhost:9092\b", kafka.bootstrap_servers),
        (r"\b184054\b", str(random.randint(200_000, 900_000))),
    ]

    def local(text: str) -> str:
        for pattern, value in replace:
            text = re.sub(pattern, value, text)
        return text

    blocks = quickstart_blocks((REPO / "docs" / doc).read_text(encoding="utf-8"))
    assert any(b.file for b in blocks) and any("background" in b.words for b in blocks), blocks
    env = {
        **os.environ,
        "PATH": f"{REPO / '.venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(REPO),
    }
    outputs: list[tuple[str, str]] = []
    background: list[subprocess.Popen[bytes]] = []
    try:
        for block in blocks:
            text = local(block.body)
            if block.file:
                (tmp_path / local(block.file)).write_text(text, encoding="utf-8")
            elif "background" in block.words:
                log = (tmp_path / "background.log").open("ab")
                background.append(
                    subprocess.Popen(
                        ["bash", "-c", text],
                        cwd=tmp_path,
                        env=env,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,  # its own process group: stopped with the worker it runs
                    )
                )
                _wait_for_rest(port, background[-1], tmp_path / "background.log")
            else:
                assert block.lang == "sh", block
                argv = ["bash", "-e", "-c", text]
                run = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
                assert run.returncode == 0, f"{text}\n{run.stdout}\n{run.stderr}"
                assert "error_code" not in run.stdout, f"{text}\n{run.stdout}"
                outputs.append((text, run.stdout))
    finally:
        for proc in background:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(30)
    return outputs


def _wait_for_rest(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text(errors="replace")[-5000:]
        try:
            if requests.get(f"http://127.0.0.1:{port}/", timeout=2).status_code == 200:
                return
        except requests.ConnectionError:
            pass
        time.sleep(0.3)
    raise AssertionError("the worker's REST API did not answer:\n" + log.read_text(errors="replace")[-5000:])


def _printed(outputs: list[tuple[str, str]]) -> list[str]:
    """The lines printed by the last block of the quick start that runs ``cdc consume``."""
    consumed = [out for text, out in outputs if "cdc consume" in text]
    assert consumed, outputs
    return [line for line in consumed[-1].splitlines() if line.strip()]


def test_the_mysql_quick_start_prints_the_snapshot_and_a_change(
    tmp_path: Path, kafka: Any, mysql_db: Any
) -> None:
    outputs = _run_quickstart("mysql.md", tmp_path, kafka, mysql_db)
    created = next(out for text, out in outputs if "-X POST" in text)
    assert json.loads(created.splitlines()[0])["name"] == f"{mysql_db.name}", created
    lines = _printed(outputs)
    assert len(lines) == 3, lines
    records = [(json.loads(k), json.loads(v)) for k, v in (line.split("\t", 1) for line in lines)]
    assert [key for key, _ in records] == [{"id": 1}, {"id": 2}, {"id": 2}]
    assert [value["op"] for _, value in records] == ["r", "r", "u"]
    assert records[0][1]["after"] == {"id": 1, "name": "Ada", "email": "ada@example.com"}
    assert records[2][1]["before"]["name"] == "Bo" and records[2][1]["after"]["name"] == "Bo Li"
    assert records[2][1]["source"]["db"] == mysql_db.name


def test_the_jdbc_quick_start_prints_the_rows(tmp_path: Path, kafka: Any, mysql_db: Any) -> None:
    outputs = _run_quickstart("jdbc.md", tmp_path, kafka, mysql_db)
    lines = _printed(outputs)  # the block's two reads: before and after the insert
    first = [{"id": 1, "item": "tea", "qty": 2}, {"id": 2, "item": "cups", "qty": 6}]
    assert [json.loads(line) for line in lines] == [*first, *first, {"id": 3, "item": "pot", "qty": 1}]
