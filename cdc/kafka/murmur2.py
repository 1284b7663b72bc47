"""Java's ``org.apache.kafka.common.utils.Utils.murmur2``: the hash behind Kafka's default partitioner.

A keyed record goes to ``(murmur2(key) & 0x7fffffff) % partitions`` in every Java producer, so Kafka
Connect's internal topics place each key on a partition fixed by this function. A compatible worker
must put the same key on the same partition (readers keep the last value per key *within a
partition*; the same key on two partitions has no defined winner). librdkafka computes the same hash
when the producer sets ``partitioner=murmur2_random``; this module lets us check and predict it.
"""

from __future__ import annotations

__all__ = ["murmur2", "partition_for", "to_positive"]

_SEED = 0x9747B28C
_M = 0x5BD1E995
_R = 24
_MASK = 0xFFFFFFFF


def murmur2(data: bytes) -> int:
    """The 32-bit murmur2 hash of ``data`` as Java computes it (a signed int)."""
    length = len(data)
    h = (_SEED ^ length) & _MASK
    whole = length - length % 4
    for i in range(0, whole, 4):
        k = int.from_bytes(data[i : i + 4], "little")
        k = (k * _M) & _MASK
        k ^= k >> _R
        k = (k * _M) & _MASK
        h = (h * _M) & _MASK
        h ^= k
    rest = length % 4
    # Java's switch falls through: 3 mixes bytes 2, 1 and 0; 2 mixes 1 and 0; 1 mixes byte 0.
    if rest == 3:
        h ^= data[whole + 2] << 16
    if rest >= 2:
        h ^= data[whole + 1] << 8
    if rest >= 1:
        h ^= data[whole]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def to_positive(n: int) -> int:
    """Java's ``Utils.toPositive``: clear the sign bit (not ``abs``: ``Integer.MIN_VALUE`` maps to 0)."""
    return n & 0x7FFFFFFF


def partition_for(key: bytes, partitions: int) -> int:
    """The partition Java's default partitioner picks for a keyed record."""
    if partitions <= 0:
        raise ValueError(f"partition count must be positive, not {partitions}")
    return to_positive(murmur2(key)) % partitions
