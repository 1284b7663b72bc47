"""``cdc consume TOPIC``: print a topic's records, as ``kafka-console-consumer`` does.

The stack has no Kafka command-line tools (no JVM client is installed), and a newcomer following the quick
starts (docs/mysql.md, docs/jdbc.md) needs to see the events. The flags are kafka-console-consumer's
(``--bootstrap-server``, ``--from-beginning``, ``--max-messages``, ``--timeout-ms``, ``--group``,
``--partition``, ``--offset``, ``--isolation-level``, ``--property``, ``--consumer-property``,
``--consumer.config``) and so are the output and its formatter properties (``print.key``,
``print.value``, ``print.timestamp``, ``print.partition``, ``print.offset``, ``print.headers``,
``key.separator``, ``line.separator``, ``headers.separator``, ``null.literal``). Keys and values are
printed as UTF-8 text (bytes that are not UTF-8 as escapes), as the StringDeserializer would; Avro values
(Confluent's wire format) are printed as their bytes, like kafka-console-consumer without a deserializer.

At the end, on stderr: ``Processed a total of N messages``. Without ``--group`` a throw-away group
``console-consumer-<random>`` that commits nothing is used.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

__all__ = ["Formatter", "add_parser", "parse_properties"]

_FORMATTER_KEYS = (
    "print.key",
    "print.value",
    "print.timestamp",
    "print.partition",
    "print.offset",
    "print.headers",
    "key.separator",
    "line.separator",
    "headers.separator",
    "null.literal",
)


def add_parser(sub: Any) -> None:
    co = sub.add_parser(
        "consume",
        help="print a topic's records (like kafka-console-consumer)",
        description="Print the records of a Kafka topic, one a line, as kafka-console-consumer does.",
    )
    co.add_argument("topic", nargs="?", help="the topic to read (or --topic)")
    co.add_argument("--topic", dest="topic_option", default=None, help="the topic to read")
    co.add_argument(
        "--bootstrap-server",
        default="localhost:9092",
        help="the brokers, host:port[,…] (default localhost:9092)",
    )
    co.add_argument(
        "--from-beginning",
        action="store_true",
        help="start with the earliest record (default: only records written from now on)",
    )
    co.add_argument("--max-messages", type=int, default=None, help="exit after this many records")
    co.add_argument(
        "--timeout-ms", type=int, default=None, help="exit when no record arrived for this long (ms)"
    )
    co.add_argument("--group", default=None, help="consumer group (its offsets are committed)")
    co.add_argument("--partition", type=int, default=None, help="read only this partition")
    co.add_argument(
        "--offset",
        default=None,
        help="with --partition: earliest, latest or an offset to start at (default latest)",
    )
    co.add_argument(
        "--isolation-level",
        choices=("read_committed", "read_uncommitted"),
        default="read_uncommitted",
        help="read_committed: skip records of aborted transactions (default read_uncommitted)",
    )
    co.add_argument(
        "--property",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="output format: print.key, print.value, print.timestamp, print.partition, print.offset, "
        "print.headers (true/false), key.separator, line.separator, headers.separator, null.literal",
    )
    co.add_argument(
        "--consumer-property",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a consumer setting (librdkafka's names, which are Kafka's for the common ones: "
        "security.protocol, sasl.mechanism …)",
    )
    co.add_argument(
        "--consumer.config",
        dest="consumer_config",
        default=None,
        help="consumer settings in a properties file",
    )
    co.set_defaults(func=run)


def parse_properties(items: Sequence[str], what: str) -> dict[str, str]:
    from cdc.api.errors import ConfigError

    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{what} {item!r}: expected KEY=VALUE")
        out[key.strip()] = value
    return out


def _unescape(text: str) -> str:
    # kafka-console-consumer takes "\t" and "\n" in separators as escapes
    return text.encode("utf-8").decode("unicode_escape") if "\\" in text else text


def _text(data: bytes | str | None, null: str) -> str:
    if data is None:
        return null
    if isinstance(data, str):
        return data
    return data.decode("utf-8", errors="backslashreplace")


@dataclass(frozen=True)
class Formatter:
    """kafka-console-consumer's DefaultMessageFormatter: timestamp, partition, offset, headers, key, value,
    each followed by ``key.separator`` when something follows it, then ``line.separator``."""

    print_key: bool = False
    print_value: bool = True
    print_timestamp: bool = False
    print_partition: bool = False
    print_offset: bool = False
    print_headers: bool = False
    key_separator: str = "\t"
    line_separator: str = "\n"
    headers_separator: str = ","
    null_literal: str = "null"

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> Formatter:
        from cdc.api.errors import ConfigError

        unknown = sorted(set(props) - set(_FORMATTER_KEYS))
        if unknown:
            raise ConfigError(f"Unknown --property {', '.join(unknown)}; known: {', '.join(_FORMATTER_KEYS)}")

        def flag(key: str, default: bool) -> bool:
            value = props.get(key)
            if value is None:
                return default
            if value.strip().lower() not in ("true", "false"):
                raise ConfigError(f"--property {key}={value}: expected true or false")
            return value.strip().lower() == "true"

        return cls(
            print_key=flag("print.key", False),
            print_value=flag("print.value", True),
            print_timestamp=flag("print.timestamp", False),
            print_partition=flag("print.partition", False),
            print_offset=flag("print.offset", False),
            print_headers=flag("print.headers", False),
            key_separator=_unescape(props.get("key.separator", "\t")),
            line_separator=_unescape(props.get("line.separator", "\n")),
            headers_separator=_unescape(props.get("headers.separator", ",")),
            null_literal=props.get("null.literal", "null"),
        )

    def format(
        self,
        key: bytes | None,
        value: bytes | None,
        *,
        timestamp: tuple[int, int] = (0, -1),
        partition: int = 0,
        offset: int = 0,
        headers: Sequence[tuple[str, str | bytes | None]] | None = None,
    ) -> str:
        parts: list[str] = []
        if self.print_timestamp:
            kind, ts = timestamp
            label = {1: "CreateTime", 2: "LogAppendTime"}.get(kind)
            parts.append(f"{label}:{ts}" if label else "NO_TIMESTAMP")
        if self.print_partition:
            parts.append(f"Partition:{partition}")
        if self.print_offset:
            parts.append(f"Offset:{offset}")
        if self.print_headers:
            if headers:
                shown = (f"{k}:{_text(v, self.null_literal)}" for k, v in headers)
                parts.append(self.headers_separator.join(shown))
            else:
                parts.append("NO_HEADERS")
        if self.print_key:
            parts.append(_text(key, self.null_literal))
        if self.print_value:
            parts.append(_text(value, self.null_literal))
        return self.key_separator.join(parts) + self.line_separator


def _consumer_settings(args: argparse.Namespace) -> dict[str, Any]:
    from cdc.worker.properties import load_properties

    settings: dict[str, Any] = {}
    if args.consumer_config:
        settings.update(load_properties(args.consumer_config))
    settings.update(parse_properties(args.consumer_property, "--consumer-property"))
    settings["bootstrap.servers"] = args.bootstrap_server
    if args.group:
        settings["group.id"] = args.group
    elif "group.id" not in settings:
        settings["group.id"] = f"console-consumer-{random.randint(1, 99999)}"
        settings["enable.auto.commit"] = False  # a throw-away group: nothing to remember
    settings["auto.offset.reset"] = "earliest" if args.from_beginning else "latest"
    settings["isolation.level"] = args.isolation_level
    settings.setdefault("enable.partition.eof", False)
    # A topic that does not exist yet (a connector just created) is waited for: look again every 2 s
    # rather than librdkafka's 5 minutes.
    settings.setdefault("topic.metadata.refresh.interval.ms", 2000)
    return settings


def _start_offset(args: argparse.Namespace) -> int:
    from confluent_kafka import OFFSET_BEGINNING, OFFSET_END

    from cdc.api.errors import ConfigError

    chosen = args.offset or ("earliest" if args.from_beginning else "latest")
    if chosen == "earliest":
        return int(OFFSET_BEGINNING)
    if chosen == "latest":
        return int(OFFSET_END)
    try:
        return int(chosen)
    except ValueError:
        raise ConfigError(f"--offset {chosen!r}: expected earliest, latest or a number") from None


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

    from cdc.api.errors import ConfigError

    out = out if out is not None else sys.stdout
    topic = args.topic_option or args.topic
    if not topic:
        raise ConfigError("Name the topic: cdc consume TOPIC (or --topic TOPIC)")
    if args.offset is not None and args.partition is None:
        raise ConfigError("--offset needs --partition (as kafka-console-consumer)")
    formatter = Formatter.from_properties(parse_properties(args.property, "--property"))
    consumer = Consumer(_consumer_settings(args))
    if args.partition is not None:
        consumer.assign([TopicPartition(topic, args.partition, _start_offset(args))])
    else:
        consumer.subscribe([topic])
    stop = False

    def on_signal(_signum: int, _frame: Any) -> None:
        nonlocal stop
        stop = True

    previous = signal.signal(signal.SIGTERM, on_signal)
    count = 0
    last = time.monotonic()
    try:
        while not stop and (args.max_messages is None or count < args.max_messages):
            message = consumer.poll(0.5)
            if message is None:
                if args.timeout_ms is not None and (time.monotonic() - last) * 1000 >= args.timeout_ms:
                    break
                continue
            error = message.error()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    continue
                if error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART and not error.fatal():
                    continue  # as kafka-console-consumer: wait for the topic to appear
                raise KafkaException(error)
            last = time.monotonic()
            raw_headers = message.headers() or []
            headers = list(raw_headers.items()) if isinstance(raw_headers, dict) else list(raw_headers)
            out.write(
                formatter.format(
                    message.key(),
                    message.value(),
                    timestamp=message.timestamp(),
                    partition=message.partition() or 0,
                    offset=message.offset() or 0,
                    headers=headers,
                )
            )
            out.flush()
            count += 1
    except KeyboardInterrupt:
        pass
    except BrokenPipeError:  # `cdc consume … | head`: the reader is gone; nothing more to write there
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    finally:
        signal.signal(signal.SIGTERM, previous)
        consumer.close()
    print(f"Processed a total of {count} messages", file=sys.stderr)
    return 0
