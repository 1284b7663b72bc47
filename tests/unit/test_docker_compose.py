"""docker/compose.yaml offers the services the tests and users need, configured for CDC.

No Docker engine (nor `docker compose config`) is at hand where these tests run, so the file is checked
here: parsed with PyYAML when it is installed, else read as text for the same facts.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

DOCKER = Path(__file__).resolve().parents[2] / "docker"
COMPOSE = DOCKER / "compose.yaml"
BINLOG_FLAGS = [
    "--binlog-format=ROW",
    "--binlog-row-image=FULL",
    "--binlog-row-metadata=FULL",
    "--gtid-mode=ON",
    "--enforce-gtid-consistency=ON",
    "--server-id=1",
]
PORTS = {"mysql": "3306:3306", "kafka": "9092:9092", "schema-registry": "8081:8081", "worker": "8083:8083"}


def _parsed() -> dict[str, Any] | None:
    try:
        import yaml  # type: ignore[import-untyped]
    except ImportError:
        return None
    return dict(yaml.safe_load(COMPOSE.read_text()))


def test_compose_has_the_services_and_ports() -> None:
    compose = _parsed()
    if compose is None:
        text = COMPOSE.read_text()
        for service, port in PORTS.items():
            assert re.search(rf"^  {re.escape(service)}:$", text, re.M), service
            assert f'"127.0.0.1:{port}"' in text, port
        return
    services = compose["services"]
    assert set(PORTS) <= set(services)
    for service, port in PORTS.items():
        assert any(str(p).endswith(port) for p in services[service]["ports"]), (service, port)
    assert services["mysql"]["image"].startswith("mysql:8.4")
    assert services["kafka"]["image"].startswith("apache/kafka:4.")
    assert services["worker"]["command"] == ["cdc", "distributed", "/etc/cdc/worker.properties"]


@pytest.mark.parametrize("flag", BINLOG_FLAGS)
def test_mysql_runs_with_the_binlog_flags(flag: str) -> None:
    compose = _parsed()
    if compose is None:
        assert f"- {flag}\n" in COMPOSE.read_text()
    else:
        assert flag in compose["services"]["mysql"]["command"]


def test_mounted_files_exist() -> None:
    text = COMPOSE.read_text()
    mounts = re.findall(r"^\s+- (\.\.?/[^:]+):", text, re.M)
    assert mounts
    for mount in mounts:
        assert (DOCKER / mount).resolve().is_file(), mount
    assert (DOCKER.parent / "Dockerfile").is_file()
