"""Connecting to a MySQL/MariaDB server within the connect timeout, greeting included, with errors that say
what answered.

Why: PyMySQL's ``connect_timeout`` bounds only the TCP connect. A MySQL server speaks first (its handshake
greeting); a Kafka broker or a PostgreSQL server waits for its client to speak first, so a connector
pointed at one of their ports waited for a greeting with no timeout at all (PostgreSQL closes the
connection after 60 s: "Lost connection to MySQL server during query"; Kafka never does). mysqlclient's
timeout does cover the greeting, but words it "Lost connection to server at 'handshake: reading initial
communication packet', system error: 110", and a refused port as "Can't connect to server on … (115)"
(EINPROGRESS, the errno of its non-blocking connect, not the reason).

:func:`greeted_socket` connects and waits (at most ``timeout`` seconds) for the server's first packet,
*peeking* at it so that the driver then reads the greeting from the same socket as if it were new:
PyMySQL takes such a socket (``connect(sock)``), so no second connection is opened. What did not answer as
MySQL is a :class:`GreetingError` whose message says what happened: nothing listens (connection refused),
no server answered the connect, a server accepted but sent nothing (not MySQL/MariaDB: is the port right?),
closed without a word, or sent bytes that are not a MySQL greeting (shown). :func:`explain` words
mysqlclient's errors the same way.
"""

from __future__ import annotations

import errno
import socket
from typing import Any

__all__ = ["GreetingError", "explain", "greeted_socket", "pymysql_connect"]

_PROTOCOL_10 = 0x0A
_ERR_PACKET = 0xFF  # a MySQL server may greet with an error (too many connections, host blocked): MySQL


class GreetingError(OSError):
    """The server at the address did not answer as MySQL/MariaDB (or nothing answered)."""

    def __str__(self) -> str:
        return str(self.strerror)  # the message alone, without OSError's "[Errno n]"


def greeted_socket(host: str, port: int, timeout: float) -> socket.socket:
    """A TCP socket to ``host:port`` whose first packet, a MySQL/MariaDB greeting, is waiting unread."""
    where = f"{host}:{port}"
    try:
        sock = socket.create_connection((host, port), timeout)
    except ConnectionRefusedError as exc:
        raise GreetingError(
            errno.ECONNREFUSED, f"Connection refused: nothing listens at {where} (is the port right?)"
        ) from exc
    except TimeoutError as exc:
        raise GreetingError(
            errno.ETIMEDOUT, f"No server answered at {where} within {timeout:g} s (connect timed out)"
        ) from exc
    except OSError as exc:
        raise GreetingError(exc.errno or 0, f"Cannot connect to {where}: {exc.strerror or exc}") from exc
    try:
        sock.settimeout(timeout)
        try:
            first = sock.recv(64, socket.MSG_PEEK)
        except TimeoutError as exc:
            raise GreetingError(
                errno.ETIMEDOUT,
                f"The server at {where} accepted the connection but sent no MySQL/MariaDB greeting within "
                f"{timeout:g} s: it is not a MySQL or MariaDB server (is the port right? a Kafka broker "
                "or a PostgreSQL server, for example, waits for its client to speak first)",
            ) from exc
        except OSError as exc:
            raise GreetingError(
                exc.errno or 0, f"The server at {where} broke the connection before greeting: {exc}"
            ) from exc
        if not first:
            raise GreetingError(
                errno.ECONNRESET,
                f"The server at {where} closed the connection without a MySQL/MariaDB greeting: it is not a "
                "MySQL or MariaDB server, or it refuses this client",
            )
        if not _is_greeting(first):
            raise GreetingError(
                errno.EPROTO,
                f"The server at {where} did not answer as MySQL/MariaDB; it sent {first[:32]!r}: it is "
                "not a MySQL or MariaDB server (is the port right?)",
            )
        sock.settimeout(None)
        return sock
    except BaseException:
        sock.close()
        raise


def _is_greeting(data: bytes) -> bool:
    """A first packet (3-byte length, sequence 0) holding a protocol 10 handshake or an error."""
    if len(data) < 5:
        return len(data) < 4 or data[3] == 0  # too short to tell: the driver will
    return data[3] == 0 and data[4] in (_PROTOCOL_10, _ERR_PACKET)


def pymysql_connect(timeout: float, **kwargs: Any) -> Any:
    """``pymysql.connect(**kwargs)`` on a :func:`greeted_socket` (TCP only: ``host`` and ``port``)."""
    from cdc.drivers import pymysql_connect as connect_without_multi_statements

    conn = connect_without_multi_statements(defer_connect=True, connect_timeout=timeout, **kwargs)
    conn.connect(
        greeted_socket(str(kwargs.get("host") or "localhost"), int(kwargs.get("port") or 3306), timeout)
    )
    return conn


def explain(exc: BaseException, host: str, port: int) -> str | None:
    """A readable reason for mysqlclient's connect errors (None: its own message says it)."""
    code = exc.args[0] if exc.args else 0
    text = str(exc.args[1]) if len(exc.args) > 1 else str(exc)
    where = f"{host}:{port}"
    if code == 2002 and "(115)" in text:
        # EINPROGRESS hides the reason: ask the network once more, briefly, for the real one.
        try:
            socket.create_connection((host, port), 3).close()
        except ConnectionRefusedError:
            return f"Connection refused: nothing listens at {where}"
        except OSError as probe:
            return f"Cannot connect to {where}: {probe.strerror or probe}"
        return None
    if code == 2002 and "(111)" in text:
        return f"Connection refused: nothing listens at {where}"
    if code == 2013 and "reading initial communication packet" in text:
        return (
            f"The server at {where} accepted the connection but sent no MySQL/MariaDB greeting: it is not "
            "a MySQL or MariaDB server (is the port right?)"
        )
    return None
