"""The local stack as the harness sees it: MariaDB and Kafka addresses, and small helpers for both.

The stack is ``scripts/stack.sh`` (``make up``); the harness starts it if it does not answer. MariaDB is
reached as ``root`` over the stack's socket for bulk work (loading data without binlogging it, writing the
B3 workloads) and as ``cdc``/``cdc`` over TCP for what the contenders do.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from confluent_kafka.admin import AdminClient, NewTopic

__all__ = ["Stack"]


@dataclass
class Stack:
    repo: Path

    @property
    def stack_dir(self) -> Path:
        return Path(os.environ.get("CDC_STACK_DIR", self.repo / ".stack"))

    @property
    def bootstrap(self) -> str:
        return os.environ.get("CDC_KAFKA_BOOTSTRAP", f"127.0.0.1:{os.environ.get('CDC_KAFKA_PORT', '9092')}")

    @property
    def mysql_host(self) -> str:
        return os.environ.get("CDC_MYSQL_HOST", "127.0.0.1")

    @property
    def mysql_port(self) -> int:
        return int(os.environ.get("CDC_MYSQL_PORT", "3306"))

    @property
    def socket(self) -> Path:
        return self.stack_dir / "mariadb" / "mysqld.sock"

    # ------------------------------------------------------------------------------------------ lifecycle

    def up(self) -> None:
        subprocess.run([str(self.repo / "scripts" / "stack.sh"), "up"], check=True)

    def pid(self, service: str) -> int | None:
        """The pid of a stack service started from this checkout (``mariadb``, ``kafka``), if alive."""
        path = self.stack_dir / "run" / f"{service}.pid"
        try:
            pid = int(path.read_text().strip())
            os.kill(pid, 0)
            return pid
        except (OSError, ValueError):
            return None

    # -------------------------------------------------------------------------------------------- mariadb

    def sql(self, statements: str, database: str | None = None, *, binlog: bool = True) -> str:
        """Run SQL as root over the socket with the ``mariadb`` client; tab-separated output, no header."""
        prefix = "" if binlog else "SET SESSION sql_log_bin = 0;\n"
        args = ["mariadb", f"--socket={self.socket}", "-uroot", "-N", "-B", "--local-infile=1"]
        if database:
            args.append(database)
        done = subprocess.run(args, input=prefix + statements, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"mariadb failed: {done.stderr.strip()}")
        return done.stdout

    def sql_file(self, path: Path, database: str | None = None, *, binlog: bool = True) -> None:
        """Pipe a (large) SQL file into the ``mariadb`` client as root."""
        args = ["mariadb", f"--socket={self.socket}", "-uroot", "--local-infile=1"]
        if not binlog:
            args.append("--init-command=SET SESSION sql_log_bin = 0")
        if database:
            args.append(database)
        with path.open("rb") as fh:
            done = subprocess.run(args, stdin=fh, capture_output=True)
        if done.returncode != 0:
            raise RuntimeError(f"mariadb < {path} failed: {done.stderr.decode(errors='replace').strip()}")

    def binlog_position(self) -> tuple[str, int, str]:
        """(file, position, gtid_binlog_pos) of the binlog's end now."""
        out = self.sql("SHOW MASTER STATUS; SELECT @@gtid_binlog_pos;").split("\n")
        file, pos = out[0].split("\t")[:2]
        return file, int(pos), out[1].strip()

    def binlog_files(self, first: str, last: str) -> list[str]:
        names = [line.split("\t")[0] for line in self.sql("SHOW BINARY LOGS;").splitlines() if line]
        return [n for n in names if first <= n <= last]

    def variables(self, names: Iterable[str]) -> dict[str, str]:
        quoted = ",".join(f"'{n}'" for n in names)
        out = self.sql(f"SHOW GLOBAL VARIABLES WHERE Variable_name IN ({quoted});")
        return dict(line.split("\t", 1) for line in out.splitlines() if "\t" in line)

    def table_bytes(self, table: str) -> int:
        """InnoDB's data and index length of ``db.table`` (statistics: as of its last ANALYZE)."""
        db, name = table.split(".", 1)
        out = self.sql(
            "SELECT COALESCE(SUM(data_length + index_length), 0) FROM information_schema.tables "
            f"WHERE table_schema = '{db}' AND table_name = '{name}';"
        )
        return int(out.strip() or 0)

    def buffer_pool_bytes(self) -> int:
        return int(self.sql("SELECT @@innodb_buffer_pool_size;").strip())

    def set_buffer_pool(self, size: int, timeout: float = 300.0) -> int:
        """Resize InnoDB's buffer pool online and wait until the resize is over; returns the new size.

        The server rounds ``size`` up to whole chunks. Nothing is restarted: a restart of the stack's
        MariaDB goes back to ``scripts/stack.sh``'s ``my.cnf`` value.
        """
        self.sql(f"SET GLOBAL innodb_buffer_pool_size = {int(size)};")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            status = self.sql("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_resize_status';")
            text = status.split("\t", 1)[1].strip() if "\t" in status else ""
            if not text or "complete" in text.lower():
                break
            time.sleep(0.5)
        return self.buffer_pool_bytes()

    # ---------------------------------------------------------------------------------------------- kafka

    def admin(self) -> AdminClient:
        return AdminClient({"bootstrap.servers": self.bootstrap})

    def create_topic(self, name: str, partitions: int = 1, config: dict[str, str] | None = None) -> None:
        admin = self.admin()
        futures = admin.create_topics([NewTopic(name, partitions, 1, config=config or {})])
        for future in futures.values():
            future.result(30)

    def delete_topics(self, names: Iterable[str]) -> None:
        names = [n for n in names if n]
        if not names:
            return
        admin = self.admin()
        existing = set(admin.list_topics(timeout=10).topics)
        doomed = [n for n in names if n in existing]
        if not doomed:
            return
        for future in admin.delete_topics(doomed, operation_timeout=30).values():
            with contextlib.suppress(Exception):  # cleaning up: a topic already gone is fine
                future.result(30)

    def topics_with_prefix(self, prefix: str) -> list[str]:
        return sorted(t for t in self.admin().list_topics(timeout=10).topics if t.startswith(prefix))

    def high_watermark(self, topic: str) -> int:
        """Sum of the partitions' end offsets of ``topic`` (0 if it does not exist yet)."""
        from confluent_kafka import Consumer, TopicPartition

        consumer = Consumer(
            {
                "bootstrap.servers": self.bootstrap,
                "group.id": f"bench-hwm-{uuid.uuid4().hex}",
                "enable.auto.commit": False,
            }
        )
        try:
            meta = consumer.list_topics(topic, timeout=10).topics.get(topic)
            if meta is None or meta.error is not None:
                return 0
            total = 0
            for p in meta.partitions:
                _low, high = consumer.get_watermark_offsets(
                    TopicPartition(topic, p), timeout=10, cached=False
                )
                total += high
            return total
        finally:
            consumer.close()

    def kafka_version(self) -> str:
        libs = sorted(Path(os.environ.get("CDC_CACHE", Path.home() / ".cache" / "cdc")).glob("kafka-*/libs"))
        return libs[-1].parent.name.removeprefix("kafka-") if libs else "?"


def unique(prefix: str) -> str:
    """A name no earlier run used: ``prefix-<epoch seconds>-<4 hex>``."""
    return f"{prefix}-{int(time.time())}-{uuid.uuid4().hex[:4]}"
