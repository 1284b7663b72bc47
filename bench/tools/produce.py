"""B9's Python producer: ``count`` records of ``size`` bytes from memory, as fast as confluent-kafka goes.

Like ``kafka-producer-perf-test``: one random payload of upper-case letters made once, null keys, no
throttle; the rate runs from the first ``produce`` to the end of ``flush`` (every record acknowledged).
Prints one JSON line: records, seconds, records_per_s, mb_per_s, failed.

    python bench/tools/produce.py BOOTSTRAP TOPIC COUNT [--size 200] [--acks all] [--compression lz4]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time

from confluent_kafka import KafkaError, Message, Producer


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("bootstrap")
    parser.add_argument("topic")
    parser.add_argument("count", type=int)
    parser.add_argument("--size", type=int, default=200)
    parser.add_argument("--acks", default="all")
    parser.add_argument("--compression", default="lz4")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--set", action="append", default=[], help="extra librdkafka KEY=VALUE")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    payload = bytes(rng.randrange(65, 91) for _ in range(args.size))
    conf = {"bootstrap.servers": args.bootstrap, "acks": args.acks, "compression.type": args.compression}
    conf.update(dict(kv.split("=", 1) for kv in args.set))
    producer = Producer(conf)
    failed = 0

    def on_delivery(err: KafkaError | None, _msg: Message) -> None:
        nonlocal failed
        if err is not None:
            failed += 1

    produce, poll, topic = producer.produce, producer.poll, args.topic
    started = time.perf_counter()
    for _ in range(args.count):
        while True:
            try:
                produce(topic, payload, on_delivery=on_delivery)
                break
            except BufferError:
                poll(0.005)
    left = producer.flush(120)
    seconds = time.perf_counter() - started
    sent = args.count - left
    print(
        json.dumps(
            {
                "records": sent,
                "seconds": seconds,
                "records_per_s": sent / seconds,
                "mb_per_s": sent * args.size / seconds / 1e6,
                "failed": failed + left,
            }
        ),
        flush=True,
    )
    return 0 if failed + left == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
