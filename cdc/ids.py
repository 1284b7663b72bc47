"""Identifiers: RFC 9562's UUID version 7 (time-ordered), which Python 3.11's ``uuid`` lacks; used for
Debezium's run ids (the context headers' ``taskId`` run, OpenLineage's run id)."""

from __future__ import annotations

import os
import time
import uuid

__all__ = ["uuid7"]


def uuid7(now_ms: int | None = None) -> uuid.UUID:
    """RFC 9562's version 7: 48 bits of Unix milliseconds, then random bits."""
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms & ((1 << 48) - 1)) << 80 | (0x7 << 76) | ((rand >> 62) & 0xFFF) << 64
    value |= (0b10 << 62) | (rand & ((1 << 62) - 1))
    return uuid.UUID(int=value)
