"""B14's contenders: cdc's Debezium-class JDBC sink, Debezium's own in Kafka Connect (its defaults and its
best settings), and the ceiling (the same changes applied by a Python script, no Kafka)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any, ClassVar

from bench import jars
from bench.core import Case, contender
from bench.procstat import TreeMonitor
from bench.scenarios.b14_sink import SCHEMA, TARGETS, SinkContender
from bench.stack import Stack, unique
from bench.workers import WorkerProcess, cdc_worker, connect_worker, free_port, worker_properties

__all__ = ["CdcSink", "Ceiling", "DebeziumBest", "DebeziumDefaults"]

_REGISTRY = os.environ.get("CDC_SCHEMA_REGISTRY_URL", "http://127.0.0.1:8081")


def _apicurio_converters() -> dict[str, str]:
    """Kafka Connect's converters for the Avro topic: Apicurio's AvroConverter reading Confluent's wire
    format (a magic byte and a 4-byte id: ``as-confluent``) whose ids are Apicurio's content ids (what its
    Confluent API, which cdc's AvroConverter registers through, hands out), from the registry's own API."""
    registry = _REGISTRY.rstrip("/").removesuffix("/apis/ccompat/v7") + "/apis/registry/v2"
    out: dict[str, str] = {}
    for role in ("key.converter", "value.converter"):
        out[role] = "io.apicurio.registry.utils.converter.AvroConverter"
        out[f"{role}.apicurio.registry.url"] = registry
        out[f"{role}.apicurio.registry.as-confluent"] = "true"
        out[f"{role}.apicurio.registry.use-id"] = "contentId"
        out[f"{role}.apicurio.registry.headers.enabled"] = "false"
        out[f"{role}.apicurio.registry.auto-register"] = "false"
    return out


def _converters(fmt: str) -> dict[str, str]:
    if fmt == "json":
        return {
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "key.converter.schemas.enable": "true",
            "value.converter.schemas.enable": "true",
        }
    return {
        "key.converter": "io.confluent.connect.avro.AvroConverter",
        "value.converter": "io.confluent.connect.avro.AvroConverter",
        "key.converter.schema.registry.url": _REGISTRY,
        "value.converter.schema.registry.url": _REGISTRY,
    }


def _sink_config(case: Case, topic: str, extra: dict[str, str]) -> dict[str, str]:
    return {
        "connector.class": "io.debezium.connector.jdbc.JdbcSinkConnector",
        "tasks.max": "1",
        "topics": topic,
        "connection.url": TARGETS[case.params["target"]],
        "connection.username": "cdc",
        "connection.password": "cdc",
        "insert.mode": "upsert",
        "primary.key.mode": "record_key",
        "delete.enabled": "true",
        "schema.evolution": "basic",
        "collection.name.format": f"{SCHEMA}.items",
        **extra,
    }


class _WorkerSink(SinkContender):
    """A worker process running one sink connector."""

    settings: ClassVar[dict[str, str]] = {}
    worker_settings: ClassVar[dict[str, str]] = {}
    connector = ""

    def sink_settings(self) -> dict[str, str]:
        return dict(self.settings)

    def converters(self, fmt: str) -> dict[str, str]:
        return _converters(fmt)

    def spec(self, props: dict[str, str]) -> Any:
        raise NotImplementedError

    def start(self, case: Case, topic: str, workdir: Path) -> Any:
        stack = Stack(self.ctx.repo)
        group = unique(f"bench-b14-{self.name}")
        props = worker_properties(
            stack.bootstrap,
            group,
            free_port(),
            {**self.converters(case.params["format"]), **self.worker_settings},
        )
        worker = WorkerProcess(self.spec(props))
        worker.wait_ready()
        self.connector = f"{group}-sink"
        worker.create_connector(self.connector, _sink_config(case, topic, self.sink_settings()))
        return worker

    def monitor(self, handle: Any) -> TreeMonitor:
        return handle.monitor

    def peak_rss_kb(self, handle: Any) -> int:
        return int(handle.monitor.peak_rss_kb)

    def stop(self, handle: Any) -> None:
        handle.stop()

    def failed(self, handle: Any) -> str | None:
        try:
            status = handle.status(self.connector)
        except Exception:
            return None
        for task in status.get("tasks", []):
            if task.get("state") == "FAILED":
                trace = str(task.get("trace", ""))
                causes = [ln.strip() for ln in trace.splitlines() if ln.startswith("Caused by")]
                return f"task FAILED: {(causes[-1] if causes else trace[:300])[:400]}"
        return None


@contender
class CdcSink(_WorkerSink):
    name = "cdc"
    role = "ours"
    order = 10
    settings = {"batch.size": "5000"}

    def spec(self, props: dict[str, str]) -> Any:
        return cdc_worker(self.ctx.workdir, self.ctx.python, props, cpus=self.ctx.options.get("cpus"))


class _DebeziumSink(_WorkerSink):
    role = "peer"

    def setup(self) -> None:
        jars.connect_libs(self.ctx.cache)
        jars.debezium_jdbc_sink_plugin_path(self.ctx.cache)

    def converters(self, fmt: str) -> dict[str, str]:
        # Confluent's AvroConverter is not on Maven Central: Apicurio's, which reads the same wire format
        if fmt == "avro":
            return _apicurio_converters()
        return _converters(fmt)

    def spec(self, props: dict[str, str]) -> Any:
        roots = [jars.debezium_jdbc_sink_plugin_path(self.ctx.cache)]
        if props.get("value.converter", "").startswith("io.apicurio."):
            roots.append(jars.apicurio_converter_plugin_path(self.ctx.cache))
        props = {**props, "plugin.path": ",".join(str(r) for r in roots)}
        return connect_worker(self.ctx.workdir, self.ctx.cache, props, cpus=self.ctx.options.get("cpus"))

    def versions(self) -> dict[str, str]:
        return {"debezium jdbc sink": f"debezium-connector-jdbc {jars.DEBEZIUM_JDBC_VERSION}"}


@contender
class DebeziumDefaults(_DebeziumSink):
    name = "debezium-defaults"
    order = 20


@contender
class DebeziumBest(_DebeziumSink):
    """Debezium's documented knobs for throughput: larger batches, the reduction buffer (one write per key
    per batch) and consumer fetches sized to the batch. PostgreSQL's UNNEST insert
    (``dialect.postgres.unnest.insert.enabled``) only with ``--set debezium_unnest=true``: in 3.6.0.Final
    it binds a MicroTimestamp's raw microseconds and the task fails ("date/time field value out of
    range: 1743748600000000"), so it is not a setting that works here."""

    name = "debezium-best"
    order = 30
    tunes = "debezium-defaults"
    settings = {
        "batch.size": "5000",
        "use.reduction.buffer": "true",
        "consumer.override.max.poll.records": "5000",
        "consumer.override.fetch.min.bytes": "1048576",
        "consumer.override.fetch.max.wait.ms": "100",
        "consumer.override.max.partition.fetch.bytes": "10485760",
    }
    worker_settings = {"connector.client.config.override.policy": "All"}

    def sink_settings(self) -> dict[str, str]:
        unnest = self.ctx.options.get("debezium_unnest", "false")
        return {**self.settings, "dialect.postgres.unnest.insert.enabled": unnest}


@contender
class Ceiling(SinkContender):
    """The same changes applied by ``bench/tools/b14_ceiling.py`` (no Kafka, no conversion)."""

    name = "ceiling"
    role = "ceiling"
    order = 40

    def start(self, case: Case, topic: str, workdir: Path) -> Any:
        load = str(self.ctx.rows or self.b14.rows())
        env = {**os.environ, "PYTHONPATH": str(self.ctx.repo)}
        proc = subprocess.Popen(
            [self.ctx.python, "-m", "bench.tools.b14_ceiling", case.params["target"], load], env=env
        )
        return proc, TreeMonitor(proc.pid).start()

    def monitor(self, handle: Any) -> TreeMonitor:
        return handle[1]

    def peak_rss_kb(self, handle: Any) -> int:
        return int(handle[1].peak_rss_kb)

    def stop(self, handle: Any) -> None:
        proc, monitor = handle
        monitor.stop()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
