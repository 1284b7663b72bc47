"""JDBC polling: dataset A (1 M rows; ``--rows 200000`` for a quick run) read in bulk and incrementing mode.

Preparation, once per invocation: dataset A is loaded into ``bench.jdbc_a_<rows>`` (reused while it holds
that many rows; ``--set fresh=1`` reloads it). Every contender reads the whole table once per run:

* **ours**: ``cdc standalone`` with ``io.confluent.connect.jdbc.JdbcSourceConnector`` (the seed's
  configuration shape: ``table.whitelist``, ``mode``, ``incrementing.column.name``, ``topic.prefix``;
  ``poll.interval.ms`` one hour so a run is one pass; ``batch.max.rows`` Confluent's default 100 unless
  ``--set batch=N``), JsonConverter with ``schemas.enable=false`` for keys and values, and the
  ``ValueToKey`` + ``ExtractField$Key`` transforms users add so the key is the row's id. A run lasts from
  the process's start until the topic holds every row; the topic is then read back and keys counted.
* **dlt** ``sql_database`` (``sql_table``, default backend ``sqlalchemy``, ``chunk_size`` 50 000; with
  ``incremental("id")`` in incrementing mode) loading into **duckdb**, its fastest local destination: a
  different sink than Kafka, so its rows/s is "query to rows loaded in a local file". It runs in its own
  virtualenv (``${CDC_CACHE}/peers/dlt-venv``) with the same MySQL driver as ours (mysqlclient; ``--set
  dlt_driver=pymysql`` for PyMySQL); its rows are counted in duckdb afterwards.
* **Confluent's JDBC source** is not run: ``io.confluent:kafka-connect-jdbc`` is only on Confluent's own
  Maven repository, which our registries do not reach (``mvn dependency:get`` answers "Missing").
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import ClassVar

from bench import datagen
from bench.core import Case, Contender, Metric, Scenario, scenario
from bench.stack import Stack

__all__ = ["DATABASE", "JdbcPoll", "PollContender"]

DATABASE = "bench"


@scenario
class JdbcPoll(Scenario):
    id = "B11"
    title = "JDBC polling of dataset A (bulk and incrementing)"
    measures = (
        "Rows per second reading a dataset-A table whole with a polling source: ours (`cdc standalone`, "
        "Confluent's JdbcSourceConnector config, JSON without schemas, key = id) end to end into Kafka, and "
        "dlt's `sql_database` into duckdb (a different sink: a local file, no Kafka). Figures: rows/s from "
        "the first to the last row (ours: Kafka timestamps of the first and last record; dlt: its "
        "`pipeline.run`), rows/s from process start to the last row, CPU-seconds per million rows of the "
        "contender's processes and of mysqld, peak RSS, and the rows read back (missing and duplicated ids)."
    )
    default_rows = 1_000_000
    metrics = (
        Metric("rows_per_s", "rows/s, first to last row", "rows/s", "higher", 0),
        Metric("rows_per_s_wall", "rows/s, process start to last row", "rows/s", "higher", 0),
        Metric("wall_s", "seconds, process start to last row", "s", "lower", 1),
        Metric("cpu_s_per_m", "contender CPU-seconds per million rows", "s", "lower", 1),
        Metric("mysqld_cpu_s_per_m", "mysqld CPU-seconds per million rows", "s", "lower", 2),
        Metric("peak_rss_mb", "contender peak RSS", "MB", "lower", 0),
        Metric("records", "rows read back", "", "higher", 0, ratio=False),
        Metric("missing", "missing ids", "", "lower", 0, ratio=False),
        Metric("duplicates", "duplicated ids", "", "lower", 0, ratio=False),
    )

    def cases(self) -> list[Case]:
        n = self.rows()
        return [
            Case("bulk", f"bulk mode, {n:,} rows", {"mode": "bulk"}),
            Case("incrementing", f"incrementing mode (id), {n:,} rows", {"mode": "incrementing"}),
        ]

    @property
    def table(self) -> str:
        return f"jdbc_a_{self.rows()}"

    def setup(self) -> None:
        self.stack = Stack(self.ctx.repo)
        n = self.rows()
        full = f"{DATABASE}.{self.table}"
        try:
            count = self.stack.sql(f"SELECT COUNT(*) FROM {full};").strip()
        except RuntimeError:
            count = ""
        if count == str(n) and self.ctx.options.get("fresh") != "1":
            self.ctx.log(f"[bench]   reusing {full} ({n:,} rows)")
            return
        started = time.monotonic()
        self.ctx.log(f"[bench]   loading {n:,} rows of dataset A into {full}")
        datagen.load(self.stack, "A", full, n, int(self.ctx.options.get("seed", "42")), self.ctx.workdir)
        self.stack.sql(f"ANALYZE TABLE {full};")
        self.ctx.info.setdefault("notes", []).append(
            f"{full} loaded ({n:,} rows) in {time.monotonic() - started:.0f} s"
        )


class PollContender(Contender):
    scenario_id: ClassVar[str] = "B11"

    @property
    def poll(self) -> JdbcPoll:
        assert isinstance(self.scenario, JdbcPoll)
        return self.scenario

    def run_dir(self, name: str) -> Path:
        path = self.ctx.workdir / "b11" / name
        path.mkdir(parents=True, exist_ok=True)
        return path
