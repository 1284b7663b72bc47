"""murmur2 against values computed by Java's org.apache.kafka.common.utils.Utils.murmur2."""

import pytest

from cdc.kafka.murmur2 import murmur2, partition_for, to_positive

# Kafka's own UtilsTest.testMurmur2 vectors.
KAFKA_VECTORS = [
    (b"21", -973932308),
    (b"foobar", -790332482),
    (b"a-little-bit-long-string", -985981536),
    (b"a-little-bit-longer-string", -1486304829),
    (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971),
    (b"abc", 479470107),
]

# Computed with kafka-clients 4.4.0's Utils.murmur2 on JDK 17 (every tail length, UTF-8, all bytes).
JAVA_VECTORS = [
    (b"", 275646681),
    (b"a", -1563381124),
    (b"ab", 316155434),
    (b"abc", 479470107),
    (b"abcd", -1323649548),
    (b"abcde", 461995741),
    (b"abcdef", 1870650108),
    (b"abcdefg", -346467175),
    ("été".encode(), -2101193575),
    ("\U0001f600x".encode(), -1018136956),
    (b"connector-x", 711577214),
    (b'["inv",{"server":"dbserver1"}]', -2095839402),
    (b"status-task-a-b-c-12", 847168575),
    (bytes(range(256)), -1948347274),
]


@pytest.mark.parametrize(("data", "expected"), KAFKA_VECTORS + JAVA_VECTORS)
def test_murmur2_matches_java(data: bytes, expected: int) -> None:
    assert murmur2(data) == expected


# Partitions users saw Kafka Connect choose (seed-configs/README.md).
SEEN = [
    (b'["mysql_cdc_ops_source_avro_01",{"server":"mysqlavro"}]', 25, 0),
    (b'["mysql_jdbc_om_source_00",{"protocol":"1","table":"om.customers"}]', 25, 8),
    (b"status-connector-mysql_cdc_ops_source_avro_01", 5, 3),
    (b"status-task-mysql_cdc_ops_source_avro_01-0", 5, 3),
    (b"status-topic-mysqlavro:connector-mysql_cdc_ops_source_avro_01", 5, 4),
    (b"connector-anything", 1, 0),
]


@pytest.mark.parametrize(("key", "partitions", "expected"), SEEN)
def test_partition_for_matches_what_users_saw(key: bytes, partitions: int, expected: int) -> None:
    assert partition_for(key, partitions) == expected


def test_to_positive_clears_the_sign_bit() -> None:
    assert to_positive(-1) == 0x7FFFFFFF
    assert to_positive(-(2**31)) == 0
    assert to_positive(5) == 5


def test_partition_for_rejects_no_partitions() -> None:
    with pytest.raises(ValueError):
        partition_for(b"k", 0)


def test_kafka_pythons_murmur2_is_javas() -> None:
    """cdc's murmur2 is kafka-python's: the same partitions as Java's for every vector and seen key."""
    from kafka.partitioner.default import murmur2 as kafka_python_murmur2

    for data, expected in KAFKA_VECTORS + JAVA_VECTORS:
        assert kafka_python_murmur2(data) == expected & 0xFFFFFFFF
    for key, partitions, expected in SEEN:  # DefaultPartitioner.partition's arithmetic
        assert (kafka_python_murmur2(key) & 0x7FFFFFFF) % partitions == expected
