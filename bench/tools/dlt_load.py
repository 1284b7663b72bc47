"""Load one MySQL table with dlt's ``sql_database`` source into duckdb; print one JSON line of figures.

Runs inside dlt's own virtualenv (``bench/contenders/jdbc_poll_dlt.py`` makes it): only dlt, SQLAlchemy,
duckdb and the MySQL driver are needed, nothing of cdc.

python dlt_load.py --url mysql+mysqldb://cdc:cdc@127.0.0.1:3306/bench --table jdbc_a_1000000 \
    --mode bulk|incrementing --workdir DIR [--backend sqlalchemy] [--chunk-size 50000]
"""

from __future__ import annotations

import argparse
import json
import os
import time


def main() -> None:
    started = time.monotonic()
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--table", required=True)
    parser.add_argument("--mode", choices=["bulk", "incrementing"], default="bulk")
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--backend", default="sqlalchemy")
    parser.add_argument("--chunk-size", type=int, default=50_000)
    args = parser.parse_args()
    os.environ.setdefault("RUNTIME__LOG_LEVEL", "WARNING")
    os.environ.setdefault("RUNTIME__DLTHUB_TELEMETRY", "false")

    import dlt
    from dlt.sources.sql_database import sql_table

    imported = time.monotonic()
    resource = sql_table(
        credentials=args.url, table=args.table, backend=args.backend, chunk_size=args.chunk_size
    )
    if args.mode == "incrementing":
        resource.apply_hints(incremental=dlt.sources.incremental("id"))
    db_file = os.path.join(args.workdir, "dlt.duckdb")
    pipeline = dlt.pipeline(
        pipeline_name="b11",
        destination=dlt.destinations.duckdb(db_file),
        dataset_name="b11",
        pipelines_dir=os.path.join(args.workdir, "pipelines"),
    )
    run_started = time.monotonic()
    pipeline.run(resource, write_disposition="append")
    run_ended = time.monotonic()

    import duckdb

    with duckdb.connect(db_file, read_only=True) as con:
        count, distinct, low, high = con.execute(
            f"SELECT count(*), count(DISTINCT id), min(id), max(id) FROM b11.{args.table}"
        ).fetchone()
    steps = {}
    trace = pipeline.last_trace
    for step in getattr(trace, "steps", []) or []:
        if step.started_at and step.finished_at:
            steps[step.step] = round((step.finished_at - step.started_at).total_seconds(), 3)
    print(
        json.dumps(
            {
                "rows": count,
                "distinct": distinct,
                "min_id": low,
                "max_id": high,
                "run_s": run_ended - run_started,
                "import_s": imported - started,
                "steps": steps,
                "dlt": dlt.__version__,
                "duckdb": duckdb.__version__,
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
