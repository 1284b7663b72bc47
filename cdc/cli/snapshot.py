"""``cdc snapshot CONNECTOR_CONFIG --worker-config WORKER.properties [...]``: the parallel snapshot command.

Reads the connector config (a JSON file as users POST it, or a .properties file) and the worker file the
connector's worker starts with (Kafka, converters, the offsets store), snapshots the captured tables on
Spark, and stores the connector's offsets so that the connector, started next, streams from where the
snapshot's data ends. ``--dry-run`` prints the chunk plan and touches nothing.

Spark is configured as spark-submit is (``--master``, ``--conf KEY=VALUE``, ``--properties-file``; see
docs/snapshots.md "Spark cluster"). A run that stops for want of progress (every executor gone, the
application lost) exits with status 75 and keeps its state: the same command resumes it.

Before anything is written (:mod:`cdc.cli.snapshot_guard`): a connector RUNNING or PAUSED in the worker
group of ``--worker-config`` stops the command with status 3 and the command that stops the connector
(``--force`` skips the check); tables the server estimates too small for Spark to pay off get a word
saying the connector's own snapshot would be faster.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cdc.mysql.offsets import BinlogOffset

__all__ = ["CONNECTOR_RUNNING", "STALLED", "add_parser", "spark_settings", "write_offsets"]

log = logging.getLogger("cdc.snapshot")


def add_parser(sub: Any) -> None:
    sn = sub.add_parser(
        "snapshot",
        help="snapshot a MySQL connector's tables in parallel on Spark, then store its offsets",
        description="Snapshot the tables a MySQL/MariaDB connector captures, in parallel on Spark, "
        "writing the connector's op=r records, schema history and offsets.",
    )
    sn.add_argument("connector_config", help="connector .json (as POSTed) or .properties file")
    sn.add_argument(
        "--worker-config", required=True, help="the worker .properties file the connector runs under"
    )
    sn.add_argument(
        "--master",
        default=None,
        help="Spark master URL: local[N], spark://host:7077, yarn, k8s://https://host:443 (default: "
        "spark.master of --conf or --properties-file, else local[*])",
    )
    sn.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Spark setting, as spark-submit's --conf (repeatable; over --properties-file's)",
    )
    sn.add_argument(
        "--properties-file",
        default=None,
        help="Spark settings in a properties file, as spark-submit's (spark-defaults.conf format)",
    )
    sn.add_argument(
        "--delivery",
        choices=("exactly-once", "at-least-once"),
        default=None,
        help="exactly-once: each chunk in a Kafka transaction of its own, so read_committed consumers see "
        "one op=r per row even when executors die (the default, or the connector's "
        "snapshot.spark.delivery); at-least-once: no transactions, a retried chunk is written twice",
    )
    sn.add_argument(
        "--stall-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="stop (and keep the state for a resume) when no executor made progress for this long "
        "(default 300, or the connector's snapshot.spark.stall.timeout.ms)",
    )
    sn.add_argument(
        "--partitions",
        type=int,
        default=None,
        help="parallel readers (Spark tasks at once); each table gets at least this many chunks "
        "(default: the master's cores)",
    )
    sn.add_argument("--chunk-rows", type=int, default=50_000, help="target rows per chunk (default 50000)")
    sn.add_argument("--tables", default="", help="comma-separated db.table names (or regexes) to snapshot")
    sn.add_argument("--dry-run", action="store_true", help="print the chunk plan and exit")
    sn.add_argument("--restart", action="store_true", help="ignore an unfinished earlier run; start afresh")
    sn.add_argument(
        "--state-dir", default=None, help="where the resume file lives (default ~/.cache/cdc/snapshots)"
    )
    sn.add_argument(
        "--encoder",
        choices=("auto", "sql", "python"),
        default=None,
        help="who builds the records: sql (Spark JDBC + SQL expressions in the JVM), python (PyMySQL and "
        "our converters in Python tasks), auto (sql for every table it encodes byte-identically; the "
        "default, or the connector's snapshot.spark.encoder)",
    )
    sn.add_argument("--no-offsets", action="store_true", help="do not write the connector's offsets")
    sn.add_argument(
        "--force",
        action="store_true",
        help="run even though the connector is RUNNING or PAUSED in its worker group (it then writes "
        "duplicates beside the running task and overwrites its offsets; for a status left RUNNING by "
        "workers that were all killed)",
    )
    sn.add_argument("--quiet", action="store_true", help="no progress lines")
    sn.set_defaults(func=run)


def write_offsets(worker_props: Mapping[str, Any], name: str, prefix: str, end: BinlogOffset) -> str:
    """Store the snapshot's end as the connector's offset where its worker reads it; returns where."""
    from cdc.mysql.offsets import partition_for
    from cdc.worker.offsets import store_offset

    return store_offset(worker_props, name, partition_for(prefix), end.with_(snapshot=False).to_dict())


SPARK_MISSING = (
    "cdc snapshot runs on Apache Spark, and pyspark is not installed here. Install it with\n"
    "    pip install 'cdc[spark]'\n"
    "or, in a checkout of cdc, with\n"
    "    make spark"
)


STALLED = 75
"""The exit status of a run stopped for want of progress (EX_TEMPFAIL: run it again to resume)."""

CONNECTOR_RUNNING = 3
"""The exit status when the connector runs in its worker group (nothing was written)."""


def spark_settings(properties_file: str | None, conf: Sequence[str]) -> dict[str, str]:
    """Spark settings as spark-submit takes them: the properties file, then each ``--conf KEY=VALUE``
    over it. Only ``spark.*`` keys: anything else is refused (spark-submit would drop it with a warning)."""
    from cdc.api.errors import ConfigError
    from cdc.worker.properties import load_properties

    settings: dict[str, str] = {}
    if properties_file:
        settings.update(load_properties(properties_file))
    for item in conf:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--conf {item!r}: expected KEY=VALUE")
        settings[key.strip()] = value
    unknown = sorted(k for k in settings if not k.startswith("spark."))
    if unknown:
        raise ConfigError(f"Not Spark settings (they must start with 'spark.'): {', '.join(unknown)}")
    return settings


def _before_spark(args: argparse.Namespace, config: Mapping[str, Any], worker: Mapping[str, Any]) -> int:
    """The checks made before anything is written or Spark starts: the connector must not be running
    (unless ``--force``), and a word when the tables are too small for Spark to pay off. Returns the exit
    status to stop with, 0 to go on."""
    from cdc.cli.snapshot_guard import built_in_would_be_faster, estimated_rows, running_connector
    from cdc.mysql.spark.engine import connector_name

    name = connector_name(dict(config))
    if not args.force:
        try:
            running = running_connector(worker, name)
        except Exception as exc:
            print(
                f"Could not find out whether the connector '{name}' runs in its worker group: {exc}. "
                "Check that it is stopped, then run again with --force.",
                file=sys.stderr,
            )
            return CONNECTOR_RUNNING
        if running is not None:
            print(running.refusal(), file=sys.stderr)
            return CONNECTOR_RUNNING
    if not args.quiet:
        from cdc.mysql.validation import require_valid

        try:
            rows = estimated_rows(
                require_valid(dict(config)), [t.strip() for t in args.tables.split(",") if t.strip()]
            )
        except Exception as exc:  # the run itself reports what is wrong with the config or the server
            log.debug("No row estimate: %s", exc)
        else:
            from cdc.mysql.snapshot_engine import machine_cpus, master_cores

            cores = master_cores(args.master or "local[*]", args.partitions, machine_cpus())
            advice = built_in_would_be_faster(rows, cores)
            if advice:
                print(advice, file=sys.stderr)
    return 0


def run(args: argparse.Namespace) -> int:
    from cdc.snapshot.runners import spark_available
    from cdc.worker.config_providers import resolve_worker_config
    from cdc.worker.properties import load_connector_config, load_properties

    config = load_connector_config(args.connector_config)
    worker = resolve_worker_config(load_properties(args.worker_config))
    if not args.dry_run:
        status = _before_spark(args, config, worker)
        if status:
            return status
    if not args.dry_run and not spark_available():
        print(SPARK_MISSING, file=sys.stderr)
        return 2
    from cdc.mysql.spark.engine import SnapshotOptions, SnapshotRun
    from cdc.snapshot.watchdog import SnapshotStalled

    spark_conf = spark_settings(args.properties_file, args.conf)
    options = SnapshotOptions(
        master=args.master or spark_conf.get("spark.master") or "local[*]",
        partitions=args.partitions,
        chunk_rows=args.chunk_rows,
        tables=[t.strip() for t in args.tables.split(",") if t.strip()],
        dry_run=args.dry_run,
        restart=args.restart,
        state_dir=Path(args.state_dir) if args.state_dir else None,
        progress=not args.quiet,
        encoder=args.encoder,
        delivery=args.delivery,
        stall_timeout=args.stall_timeout,
        spark_conf=spark_conf,
    )
    job = SnapshotRun(config, worker, options)
    if args.dry_run:
        print(job.dry_run())
        return 0
    if not args.quiet:
        print(f"Spark's own output (spark-submit, Ivy, log4j) goes to {job.spark_log}", file=sys.stderr)
    try:
        summary = job.run()
    except KeyboardInterrupt:
        print(
            "Interrupted: run the same command again to resume from the chunks already done", file=sys.stderr
        )
        return 130
    except SnapshotStalled as exc:
        print(str(exc), file=sys.stderr)
        return STALLED
    finally:
        if job.runner is not None:
            job.runner.close()
    print(summary.render())
    if not args.no_offsets:
        where = write_offsets(worker, job.name, job.settings.prefix, summary.end)
        print(
            f"  offsets of '{job.name}' (server {job.settings.prefix}) set to "
            f"{summary.end.file}:{summary.end.pos} in the {where}"
        )
    return 0
