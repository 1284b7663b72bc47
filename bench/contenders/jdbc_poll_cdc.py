"""B11 (JDBC polling), ours: ``cdc standalone`` with ``io.confluent.connect.jdbc.JdbcSourceConnector``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from typing import Any

from bench.core import Case, Sample, contender
from bench.procstat import TreeMonitor, cpu_seconds
from bench.scenarios.jdbc_poll import DATABASE, PollContender
from bench.stack import Stack, unique
from bench.verify import Watermarks, read_back
from bench.workers import free_port, tail

CONNECTOR = "io.confluent.connect.jdbc.JdbcSourceConnector"


def connector_config(stack: Stack, table: str, mode: str, prefix: str, batch: str) -> dict[str, str]:
    """What a user of Confluent's JDBC source writes to copy one table, key = the row's id."""
    config = {
        "name": f"{prefix}source",
        "connector.class": CONNECTOR,
        "tasks.max": "1",
        "connection.url": f"jdbc:mysql://{stack.mysql_host}:{stack.mysql_port}/{DATABASE}",
        "connection.user": "cdc",
        "connection.password": "cdc",
        "table.whitelist": table,
        "mode": mode,
        "topic.prefix": prefix,
        "poll.interval.ms": "3600000",  # one pass per run
        "transforms": "createKey,extractInt",
        "transforms.createKey.type": "org.apache.kafka.connect.transforms.ValueToKey",
        "transforms.createKey.fields": "id",
        "transforms.extractInt.type": "org.apache.kafka.connect.transforms.ExtractField$Key",
        "transforms.extractInt.field": "id",
    }
    if mode == "incrementing":
        config["incrementing.column.name"] = "id"
    if batch:
        config["batch.max.rows"] = batch
    return config


@contender
class CdcJdbcSource(PollContender):
    name = "cdc"
    role = "ours"
    order = 10

    def versions(self) -> dict[str, str]:
        try:
            from cdc.jdbc.dialects import mysql_driver

            driver = mysql_driver()
            if driver == "mysqlclient":
                from importlib.metadata import version

                driver += " " + version("mysqlclient")
            return {"cdc mysql driver": driver}
        except Exception:
            return {}

    def run(self, case: Case, run: int) -> Sample:
        stack = Stack(self.ctx.repo)
        n, table = self.poll.rows(), self.poll.table
        mode = str(case.params["mode"])
        prefix = unique(f"b11-cdc-{mode}").replace("-", "_") + "_"
        topic = prefix + table
        workdir = self.run_dir(prefix)
        port = free_port()
        worker = {
            "bootstrap.servers": stack.bootstrap,
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "key.converter.schemas.enable": "false",
            "value.converter.schemas.enable": "false",
            "offset.storage.file.filename": str(workdir / "connect.offsets"),
            "offset.flush.interval.ms": "10000",
            "listeners": f"http://127.0.0.1:{port}",
        }
        (workdir / "worker.properties").write_text("".join(f"{k}={v}\n" for k, v in worker.items()))
        config = connector_config(stack, table, mode, prefix, self.ctx.options.get("batch", ""))
        (workdir / "jdbc.json").write_text(json.dumps({"name": config["name"], "config": config}))
        argv = [
            self.ctx.python,
            "-m",
            "cdc.cli",
            "standalone",
            str(workdir / "worker.properties"),
            str(workdir / "jdbc.json"),
        ]
        if self.ctx.options.get("cpus"):
            argv = ["taskset", "-c", self.ctx.options["cpus"], *argv]
        env = dict(os.environ)
        env.setdefault("PYTHONUNBUFFERED", "1")
        mysqld = stack.pid("mariadb")
        stack.create_topic(topic, 1)
        watermarks = Watermarks(stack.bootstrap, topic)
        log = workdir / "worker.log"
        try:
            mysqld0 = cpu_seconds(mysqld) if mysqld else 0.0
            started = time.monotonic()
            with log.open("wb") as out:
                proc = subprocess.Popen(
                    argv, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
                )
            monitor = TreeMonitor(proc.pid, interval=0.2).start()
            try:
                done = self._wait(proc, watermarks, n, log)
                monitor.stop()
                wall = done - started
                cpu = monitor.cpu()
                mysqld_cpu = cpu_seconds(mysqld) - mysqld0 if mysqld else None
                peak = monitor.peak_hwm_kb
            finally:
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGTERM)
                    try:
                        proc.wait(30)
                    except subprocess.TimeoutExpired:
                        os.killpg(proc.pid, signal.SIGKILL)
                        proc.wait(10)
            back = read_back(stack.bootstrap, topic, n)
        finally:
            watermarks.close()
            if self.ctx.options.get("keep") != "1":
                stack.delete_topics([topic])
        million = max(back.records, 1) / 1e6
        shown = {k: ("***" if "password" in k else v) for k, v in config.items()}
        return Sample(
            {
                "rows_per_s": back.records / back.span_s if back.span_s > 0 else None,
                "rows_per_s_wall": back.records / wall,
                "wall_s": wall,
                "cpu_s_per_m": cpu / million,
                "mysqld_cpu_s_per_m": mysqld_cpu / million if mysqld_cpu is not None else None,
                "peak_rss_mb": peak / 1024,
                "records": float(back.records),
                "missing": float(back.missing),
                "duplicates": float(back.duplicates + back.unexpected),
            },
            notes=[
                f"cdc: `{' '.join(argv[:4])} worker.properties jdbc.json`, worker "
                f"{json.dumps({k: v for k, v in worker.items() if k != 'offset.storage.file.filename'})}, "
                f"connector {json.dumps(shown)}"
            ],
        )

    def _wait(self, proc: Any, watermarks: Watermarks, expected: int, log: Any) -> float:
        stall = float(self.ctx.options.get("stall", "120"))
        last, last_change = -1, time.monotonic()
        while True:
            high = watermarks.high()
            now = time.monotonic()
            if high >= expected:
                return now
            if proc.poll() is not None:
                raise RuntimeError(f"cdc standalone exited with {proc.returncode}: {tail(log, 15)}")
            if high != last:
                last, last_change = high, now
            elif now - last_change > stall:
                raise TimeoutError(f"cdc: stalled at {high:,} of {expected:,} rows; see {log}")
            time.sleep(0.1)
