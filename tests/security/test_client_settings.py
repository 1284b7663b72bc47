"""Kafka client settings from connector keys (issue #24): ``signal.consumer.*`` went raw to librdkafka, so
``signal.consumer.plugin.library.paths`` loaded a shared object into the worker, past the client override
policy; other keys that become client settings (``schema.history.internal.{producer,consumer}.*``,
``producer.override.*`` …) could name a command (``sasl.kerberos.kinit.cmd``) or an unsecured login.

Against a real standalone worker with basic authentication, the stack's MariaDB and Kafka:

* a real shared object (built here with gcc; its constructor writes a marker file) named in
  ``signal.consumer.plugin.library.paths`` is an error on that key at validate and a 400 naming it on
  create, and never loads; nor does it when the signal channel is built in this process for a task (a
  config stored before: the task fails instead);
* the other keys that load code or run a command are refused under every prefix;
* ``signal.consumer.*`` and the history clients' keys go through ``connector.client.config.override.policy``
  as ``producer.override.*`` do (``None``: none at all).
"""

from __future__ import annotations

import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from attack import call, mysql_config, standalone_worker, validate_errors
from worker_process import WorkerProcess

pytestmark = [pytest.mark.integration, pytest.mark.e2e]


def _shared_object(tmp_path: Path, marker: Path) -> Path:
    """A shared object whose constructor creates ``marker`` the moment it is loaded."""
    source = tmp_path / "evil.c"
    source.write_text(
        "#include <stdio.h>\n"
        "__attribute__((constructor)) static void loaded(void) {\n"
        f'  FILE *f = fopen("{marker}", "w"); if (f) {{ fputs("loaded", f); fclose(f); }}\n'
        "}\n"
        "int conf_init(void *conf, void **plug_opaquep, char *errstr, size_t errstr_size) { return 0; }\n",
        encoding="utf-8",
    )
    library = tmp_path / "libevil.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
    return library


def _signal_config(db: Any, kafka: Any, name: str, **extra: str) -> dict[str, str]:
    return mysql_config(
        db,
        name,
        **{
            "signal.enabled.channels": "source,kafka",
            "signal.kafka.bootstrap.servers": kafka.bootstrap_servers,
            "signal.kafka.topic": kafka.topic(f"{name}-signal"),
            **extra,
        },
    )


def test_a_native_library_from_a_connector_key_never_loads(
    tmp_path: Path, kafka: Any, mysql_db: Any, workers: list[WorkerProcess]
) -> None:
    marker = tmp_path / f"marker-{uuid.uuid4().hex}"
    library = _shared_object(tmp_path, marker)
    worker = standalone_worker(tmp_path, kafka, workers)
    assert validate_errors(worker, _signal_config(mysql_db, kafka, "sig")) == {}

    key = "signal.consumer.plugin.library.paths"
    config = _signal_config(mysql_db, kafka, "sig", **{key: str(library)})
    errors = validate_errors(worker, config)
    assert list(errors) == [key], errors
    assert "'plugin.library.paths' cannot be set in a connector configuration" in errors[key][0]
    for method, path, body in (
        ("PUT", "/connectors/sig/config", config),
        ("POST", "/connectors", {"name": "sig", "config": config}),
    ):
        response = call(worker, method, path, json=body)
        assert response.status_code == 400, response.text
        assert key in response.json()["message"]
    assert call(worker, "GET", "/connectors").json() == []

    # a config stored before this check: the task's signal channel refuses it before any client exists
    from cdc.api.errors import ConnectError
    from cdc.mysql.config import MySqlSettings
    from cdc.mysql.signals.channels import KafkaChannel

    settings = MySqlSettings.parse(config)
    with pytest.raises(ConnectError, match=r"plugin\.library\.paths"):
        KafkaChannel(settings, {"bootstrap.servers": kafka.bootstrap_servers})
    time.sleep(1)
    assert not marker.exists(), "the shared object was loaded"


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("signal.consumer.ssl.engine.location", "/tmp/libevil.so"),
        ("signal.consumer.ssl.providers", "evil"),
        ("signal.consumer.sasl.kerberos.kinit.cmd", "touch /tmp/kinit-marker"),
        ("schema.history.internal.producer.plugin.library.paths", "/tmp/libevil.so"),
        ("schema.history.internal.consumer.sasl.kerberos.kinit.cmd", "touch /tmp/kinit-marker"),
        ("database.history.producer.sasl.kerberos.principal", "x;touch /tmp/kinit-marker"),
        ("producer.override.sasl.kerberos.kinit.cmd", "touch /tmp/kinit-marker"),
        ("producer.override.enable.sasl.oauthbearer.unsecure.jwt", "true"),
        (
            "signal.consumer.sasl.jaas.config",
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
            'unsecuredLoginStringClaim_sub="admin";',
        ),
    ],
)
def test_settings_that_load_code_or_run_commands_are_refused_under_every_prefix(
    key: str, value: str, tmp_path: Path, kafka: Any, mysql_db: Any, workers: list[WorkerProcess]
) -> None:
    worker = standalone_worker(tmp_path, kafka, workers)
    config = _signal_config(mysql_db, kafka, "cmd", **{key: value})
    errors = validate_errors(worker, config)
    assert list(errors) == [key], errors
    response = call(worker, "PUT", "/connectors/cmd/config", json=config)
    assert response.status_code == 400 and key in response.json()["message"], response.text


def test_signal_and_history_clients_follow_the_override_policy(
    tmp_path: Path, kafka: Any, mysql_db: Any, workers: list[WorkerProcess]
) -> None:
    worker = standalone_worker(
        tmp_path, kafka, workers, {"connector.client.config.override.policy": "Principal"}
    )
    allowed = {
        "signal.consumer.security.protocol": "PLAINTEXT",
        "schema.history.internal.producer.security.protocol": "PLAINTEXT",
    }
    assert validate_errors(worker, _signal_config(mysql_db, kafka, "pol", **allowed)) == {}
    forbidden = {
        "signal.consumer.fetch.max.bytes": "1024",
        "schema.history.internal.consumer.fetch.max.bytes": "1024",
    }
    errors = validate_errors(worker, _signal_config(mysql_db, kafka, "pol", **forbidden))
    assert sorted(errors) == sorted(forbidden), errors
    for key in forbidden:
        setting = key.rsplit(".", 3)[-3:]
        assert errors[key] == [
            f"The 'Principal' policy does not allow '{'.'.join(setting)}' to be overridden in the "
            "connector configuration."
        ]
