"""Profile the JDBC source's path in one process: query → rows → Struct → JsonConverter → producer.

It runs what a worker's source task runs for each record (``cdc.worker.source_task``'s fast path): the
task's ``poll``, the transformation chain, the key and value JsonConverters (``schemas.enable=false``),
the offset bookkeeping and ``Producer.produce`` with a delivery callback per record; ``--sink null``
stops before the producer. With ``--profile`` it prints cProfile's top functions by own time.

python -m bench.tools.jdbc_profile --table bench.jdbc_a_200000 --mode bulk --rows 200000 [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import time
import uuid
from typing import Any


def _hwm_kb() -> int:
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--table", default="bench.jdbc_a_200000")
    parser.add_argument("--mode", default="bulk", choices=["bulk", "incrementing"])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--batch", default="1000", help="batch.max.rows")
    parser.add_argument("--sink", default="kafka", choices=["kafka", "null", "fetch"])
    parser.add_argument("--driver", default="", help="CDC_JDBC_MYSQL_DRIVER: mysqlclient or pymysql")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--no-transforms", action="store_true", help="without ValueToKey + ExtractField")
    parser.add_argument("--bootstrap", default="127.0.0.1:9092")
    args = parser.parse_args()
    if args.driver:
        os.environ["CDC_JDBC_MYSQL_DRIVER"] = args.driver

    from confluent_kafka import Producer

    from cdc.api.offsets import check_offset_map, partition_key
    from cdc.converters.json_converter import JsonConverter
    from cdc.jdbc.task import JdbcSourceTask
    from cdc.transforms.chain import build_chain

    db, table = args.table.split(".")
    config = {
        "connection.url": f"jdbc:mysql://127.0.0.1:3306/{db}",
        "connection.user": "cdc",
        "connection.password": "cdc",
        "mode": args.mode,
        "topic.prefix": "prof-",
        "batch.max.rows": args.batch,
        "poll.interval.ms": "3600000",
        "tables": f"`{db}`.`{table}`",
        "incrementing.column.name": "id" if args.mode == "incrementing" else "",
        "transforms": "createKey,extractInt",
        "transforms.createKey.type": "org.apache.kafka.connect.transforms.ValueToKey",
        "transforms.createKey.fields": "id",
        "transforms.extractInt.type": "org.apache.kafka.connect.transforms.ExtractField$Key",
        "transforms.extractInt.field": "id",
    }
    if args.no_transforms:
        config = {k: v for k, v in config.items() if not k.startswith("transforms")}
    chain = build_chain(config) if not args.no_transforms else None
    key_conv, value_conv = JsonConverter(), JsonConverter()
    key_conv.configure({"schemas.enable": "false"}, True)
    value_conv.configure({"schemas.enable": "false"}, False)
    topic = f"prof-{uuid.uuid4().hex[:8]}"
    producer = (
        Producer({"bootstrap.servers": args.bootstrap, "acks": "all", "linger.ms": 5})
        if args.sink == "kafka"
        else None
    )
    pending: dict[str, Any] = {}
    delivered = [0]

    def run() -> int:
        task = JdbcSourceTask(max_wait_s=0.5)
        task.start(config)
        count = 0
        while count < args.rows:
            records = task.poll() or []
            if args.sink == "fetch":
                count += len(records)
                continue
            for original in records:
                record = chain.apply(original) if chain is not None else original
                key = key_conv.from_connect_data(topic, record.key_schema, record.key)
                value = value_conv.from_connect_data(topic, record.value_schema, record.value)
                if producer is not None:

                    def on_delivery(err: Any, msg: Any, _r: Any = original) -> None:
                        delivered[0] += 1

                    while True:
                        try:
                            producer.produce(topic, key=key, value=value, on_delivery=on_delivery)
                            break
                        except BufferError:
                            producer.poll(0.05)
                if original.source_partition is not None and original.source_offset is not None:
                    check_offset_map("Partition", original.source_partition)
                    check_offset_map("Offset", original.source_offset)
                    pending[partition_key(original.source_partition)] = original.source_offset
            if producer is not None:
                producer.poll(0)
            count += len(records)
        if producer is not None:
            producer.flush(60)
        task.stop()
        return count

    cpu0, started = time.process_time(), time.monotonic()
    if args.profile:
        prof = cProfile.Profile()
        count = prof.runcall(run)
    else:
        count = run()
    wall, cpu = time.monotonic() - started, time.process_time() - cpu0
    print(
        json.dumps(
            {
                "rows": count,
                "seconds": round(wall, 2),
                "rows_per_s": round(count / wall),
                "cpu_s": round(cpu, 2),
                "peak_rss_mb": round(_hwm_kb() / 1024),
                "sink": args.sink,
                "driver": os.environ.get("CDC_JDBC_MYSQL_DRIVER", "default"),
            }
        )
    )
    if args.profile:
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
    if producer is not None:
        from confluent_kafka.admin import AdminClient

        AdminClient({"bootstrap.servers": args.bootstrap}).delete_topics([topic])


if __name__ == "__main__":
    main()
