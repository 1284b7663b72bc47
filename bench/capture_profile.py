"""Micro benchmark: the MySQL source's capture path in one process, without Kafka (not a test).

Reads B3's prepared binlog range (``~/.cache/cdc/bench/b3-<case>.json``, written by ``make bench
SCENARIO=B3``) with ``MySqlSourceTask`` started from the range's start offset, polls it as the worker
does, and optionally runs each record through the JsonConverter (``--convert``): events/s of the capture
thread + poll, and of the whole path to bytes. ``--profile`` prints cProfile's top functions of the
polling thread and the capture thread (via ``threading.setprofile``), for finding where per-event time
goes. Nothing is produced to Kafka, so the figure is an upper bound for the worker.

    .venv/bin/python -m bench.capture_profile [--case updates] [--convert] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import random
import threading
import time
from pathlib import Path
from typing import Any

from cdc import gc_settings
from cdc.api.connector import OffsetStorageReader, SourceTaskContext
from cdc.api.offsets import partition_key
from cdc.converters.json_converter import JsonConverter
from cdc.mysql.task import MySqlSourceTask

PREFIX = "capbench"


class _Offsets(OffsetStorageReader):
    def __init__(self, offset: dict[str, Any]) -> None:
        self._offset = offset

    def offsets(self, partitions: Any) -> dict[str, dict[str, Any]]:
        return {partition_key(p): self._offset for p in partitions}


class _Context(SourceTaskContext):
    def __init__(self, offset: dict[str, Any]) -> None:
        self._reader = _Offsets(offset)

    def configs(self) -> dict[str, str]:
        return {}

    def offset_storage_reader(self) -> OffsetStorageReader:
        return self._reader


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", default="updates")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", default="3306")
    parser.add_argument("--user", default="cdc")
    parser.add_argument("--password", default="cdc")
    parser.add_argument("--convert", action="store_true", help="also JSON-convert key and value")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--ssl-mode", default="disabled", help="database.ssl.mode (B3 runs disabled)")
    args = parser.parse_args()

    state = Path.home() / ".cache" / "cdc" / "bench" / f"b3-{args.case}.json"
    rng = json.loads(state.read_text())
    db = rng["table"].split(".")[0]
    offset = {"file": rng["start_file"], "pos": rng["start_pos"], "gtids": rng["start_gtid"]}
    config = {
        "connector.class": "io.debezium.connector.mysql.MySqlConnector",
        "database.hostname": args.host,
        "database.port": args.port,
        "database.user": args.user,
        "database.password": args.password,
        "database.ssl.mode": args.ssl_mode,  # B3's contender config: the loopback stream in plain text
        "database.server.id": str(random.randrange(7400, 8400)),
        "topic.prefix": PREFIX,
        "database.include.list": db,
        "table.include.list": rng["table"],
        "snapshot.mode": "recovery",
        "snapshot.locking.mode": "none",
        "include.schema.changes": "false",
        "schema.history.internal": "io.debezium.relational.history.MemorySchemaHistory",
    }
    key_conv, value_conv = JsonConverter(), JsonConverter()
    key_conv.configure({"schemas.enable": "false"}, is_key=True)
    value_conv.configure({"schemas.enable": "false"}, is_key=False)

    profiles: list[cProfile.Profile] = []
    if args.profile:
        lock = threading.Lock()

        def start_profile(*_: Any) -> None:
            prof = cProfile.Profile()
            with lock:
                profiles.append(prof)
            threading.setprofile(None)
            prof.enable()

        threading.setprofile(start_profile)  # threads started from now on profile themselves

    gc_settings.tune()  # the collector's settings of a worker process (`cdc distributed` calls it)
    task = MySqlSourceTask()
    task.initialize(_Context(offset))
    main_prof = cProfile.Profile() if args.profile else None
    expected = int(rng["events"])
    seen = 0
    task.start(config)
    if main_prof is not None:
        main_prof.enable()
    started = first = time.perf_counter()
    cpu0 = cpu_first = time.process_time()
    while seen < expected:
        records = task.poll() or []
        if records and not seen:
            first = time.perf_counter()
            cpu_first = time.process_time()  # start-up (the recovery snapshot's schema reads) excluded
        for record in records:
            if record.topic == f"{PREFIX}.{rng['table']}":
                seen += 1
            if args.convert:
                key_conv.from_connect_data(record.topic, record.key_schema, record.key)
                value_conv.from_connect_data(record.topic, record.value_schema, record.value)
        if time.perf_counter() - started > 600:
            break
    elapsed = time.perf_counter() - first
    cpu_end = time.process_time()
    cpu, steady = cpu_end - cpu0, cpu_end - cpu_first
    if main_prof is not None:
        main_prof.disable()
    task.stop()
    print(
        f"{seen:,} events in {elapsed:.2f} s: {seen / elapsed:,.0f} ev/s; process CPU {cpu:.2f} s "
        f"({cpu / max(seen, 1) * 1e6:.1f} us/event; from the first record {steady / max(seen, 1) * 1e6:.1f} "
        f"us/event){' with JSON conversion' if args.convert else ''}"
    )
    if main_prof is not None:
        print("==== polling thread")
        pstats.Stats(main_prof).sort_stats("tottime").print_stats(25)
        for prof in profiles:
            print("==== other thread")
            pstats.Stats(prof).sort_stats("tottime").print_stats(35)


if __name__ == "__main__":
    main()
