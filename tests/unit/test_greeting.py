"""What ``cdc.greeting`` says about the server at a port, with loopback listeners of the test's own."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from cdc.greeting import GreetingError, greeted_socket


@contextmanager
def _listener(answer: bytes | None, close: bool) -> Iterator[int]:
    """A loopback server that sends ``answer`` (None: nothing) to each client, then closes or waits."""
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    done = threading.Event()

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            if answer is not None:
                conn.sendall(answer)
            if not close:
                done.wait(10)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield port
    finally:
        done.set()
        thread.join(5)
        server.close()


def test_a_mysql_greeting_is_left_for_the_driver() -> None:
    greeting = b"\x0a\x00\x00\x00\x0a5.5.5-10.11.0-MariaDB\x00"
    with _listener(greeting, close=False) as port:
        sock = greeted_socket("127.0.0.1", port, 2)
        try:
            assert sock.recv(64) == greeting[:64]  # peeked, not consumed
        finally:
            sock.close()


@pytest.mark.parametrize(
    ("answer", "close", "needle"),
    [
        (None, False, "sent no MySQL/MariaDB greeting within 1 s"),
        (None, True, "closed the connection without a MySQL/MariaDB greeting"),
        (
            b"HTTP/1.1 400 Bad Request\r\n\r\n",
            True,
            "did not answer as MySQL/MariaDB; it sent b'HTTP/1.1 400",
        ),
    ],
)
def test_what_answered_is_said(answer: bytes | None, close: bool, needle: str) -> None:
    with _listener(answer, close) as port:
        started = time.monotonic()
        with pytest.raises(GreetingError) as failure:
            greeted_socket("127.0.0.1", port, 1)
        assert time.monotonic() - started < 3
    assert needle in str(failure.value) and f"127.0.0.1:{port}" in str(failure.value)


def test_a_closed_port_is_connection_refused() -> None:
    probe = socket.create_server(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    with pytest.raises(GreetingError, match=r"Connection refused: nothing listens at 127\.0\.0\.1"):
        greeted_socket("127.0.0.1", port, 1)
