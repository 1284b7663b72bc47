"""Class names from a REST user (issue #24): ``<converter>.type`` (Debezium's custom converters) was handed
to ``importlib.import_module`` before anything checked it, so validate imported any module on the
worker's path (an import runs the module's code) and answered 500 when the import raised.

Against a real standalone worker with basic authentication and the stack's MariaDB, with a directory on
the worker's ``PYTHONPATH`` holding two modules of the test's own: one whose import creates a marker file
(and that does define a :class:`~cdc.mysql.converters.CustomConverter` subclass), one whose import raises.
Naming either is an error on that key at validate, in Connect's words (``Invalid value X for configuration
k.type: Class X could not be found.``), a 400 naming the key on create, and neither module is ever
imported. The converters cdc ships still validate.
"""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from attack import call, mysql_config, standalone_worker, validate_errors
from worker_process import WorkerProcess

pytestmark = [pytest.mark.integration, pytest.mark.e2e]


def test_a_converter_class_never_imports_an_arbitrary_module(
    tmp_path: Path,
    kafka: Any,
    mysql_db: Any,
    workers: list[WorkerProcess],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tag = uuid.uuid4().hex[:12]
    marker = tmp_path / f"imported-{tag}"
    path = tmp_path / "on-path"
    path.mkdir()
    (path / f"cdc_probe_{tag}.py").write_text(
        f"open({str(marker)!r}, 'w').write('imported')\n"
        "from cdc.mysql.converters import CustomConverter\n\n"
        "class Probe(CustomConverter):\n"
        "    def converter_for(self, column):\n"
        "        return None\n",
        encoding="utf-8",
    )
    (path / f"cdc_boom_{tag}.py").write_text("raise RuntimeError('imported')\n", encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(path), os.environ.get("PYTHONPATH", "")]))
    worker = standalone_worker(tmp_path, kafka, workers)

    shipped = {
        "converters": "boolean",
        "boolean.type": "io.debezium.connector.binlog.converters.TinyIntOneToBooleanConverter",
    }
    assert validate_errors(worker, mysql_config(mysql_db, "conv", **shipped)) == {}

    for i, class_name in enumerate(
        (f"cdc_probe_{tag}.Probe", f"cdc_probe_{tag}:Probe", f"cdc_boom_{tag}.Boom", "antigravity.X")
    ):
        config = mysql_config(mysql_db, f"conv-{i}", **{"converters": "probe", "probe.type": class_name})
        errors = validate_errors(worker, config)
        assert errors == {
            "probe.type": [
                f"Invalid value {class_name} for configuration probe.type: Class {class_name} could not be "
                "found. A custom converter is a subclass of cdc.mysql.converters.CustomConverter registered "
                "in the cdc.plugins entry point group by a package installed on the worker"
            ]
        }, errors
        response = call(worker, "PUT", f"/connectors/conv-{i}/config", json=config)
        assert response.status_code == 400, response.text
        assert "probe.type" in response.json()["message"]
    assert call(worker, "GET", "/connectors").json() == []
    time.sleep(1)
    assert not marker.exists(), "the module was imported"
    assert "RuntimeError" not in worker.log()
