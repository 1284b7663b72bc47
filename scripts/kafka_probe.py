"""Ask a Kafka broker for its metadata, with nothing but the standard library.

scripts/stack.sh uses it to tell whether the broker answers before any virtualenv exists. It sends one
Metadata request (version 4, not flexible, still served by Kafka 4.x) and succeeds when the answer names
at least one broker (--brokers N: N of them). With --list it prints the topic names, one a line.

    python3 scripts/kafka_probe.py 127.0.0.1:9092 [--list] [--timeout 2]
"""

from __future__ import annotations

import argparse
import socket
import struct
import sys

METADATA = 3
VERSION = 4


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def take(self, fmt: str) -> int:
        (value,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return int(value)

    def string(self) -> str | None:
        size = self.take(">h")
        if size < 0:
            return None
        value = self.data[self.pos : self.pos + size].decode()
        self.pos += size
        return value


def _recv_exactly(sock: socket.socket, size: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = sock.recv(size - len(chunks))
        if not chunk:
            raise ConnectionError("broker closed the connection")
        chunks += chunk
    return bytes(chunks)


def metadata(bootstrap: str, timeout: float) -> tuple[list[tuple[int, str, int]], list[str]]:
    host, _, port = bootstrap.rpartition(":")
    client_id = b"cdc-stack-probe"
    # header v1: api key, api version, correlation id, client id; body: topics = null (all), no auto-create
    request = struct.pack(">hhih", METADATA, VERSION, 1, len(client_id)) + client_id
    request += struct.pack(">ib", -1, 0)
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.sendall(struct.pack(">i", len(request)) + request)
        (size,) = struct.unpack(">i", _recv_exactly(sock, 4))
        reader = _Reader(_recv_exactly(sock, size))
    reader.take(">i")  # correlation id
    reader.take(">i")  # throttle time
    brokers = []
    for _ in range(reader.take(">i")):
        node_id = reader.take(">i")
        broker_host = reader.string() or ""
        broker_port = reader.take(">i")
        reader.string()  # rack
        brokers.append((node_id, broker_host, broker_port))
    reader.string()  # cluster id
    reader.take(">i")  # controller id
    topics = []
    for _ in range(reader.take(">i")):
        reader.take(">h")  # error code
        name = reader.string() or ""
        reader.take(">b")  # is internal
        for _ in range(reader.take(">i")):
            reader.take(">h")  # error code
            reader.take(">i")  # partition
            reader.take(">i")  # leader
            for _ in range(reader.take(">i")):  # replicas
                reader.take(">i")
            for _ in range(reader.take(">i")):  # in-sync replicas
                reader.take(">i")
        topics.append(name)
    return brokers, sorted(topics)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bootstrap", nargs="?", default="127.0.0.1:9092")
    parser.add_argument("--list", action="store_true", help="print the topic names")
    parser.add_argument("--timeout", type=float, default=2.0)
    parser.add_argument("--brokers", type=int, default=1, help="succeed only when this many are named")
    args = parser.parse_args()
    try:
        brokers, topics = metadata(args.bootstrap, args.timeout)
    except (OSError, struct.error, ValueError) as exc:
        print(f"kafka at {args.bootstrap} does not answer: {exc}", file=sys.stderr)
        return 1
    if len(brokers) < max(args.brokers, 1):
        print(f"kafka at {args.bootstrap} answers but names {len(brokers)} brokers", file=sys.stderr)
        return 1
    if args.list:
        print("\n".join(topics))
    return 0


if __name__ == "__main__":
    sys.exit(main())
