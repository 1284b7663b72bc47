"""The standalone offsets file: Kafka Connect's Java-serialized HashMap<byte[],byte[]>, atomic writes."""

import io
import os
import struct
from pathlib import Path

import pytest
from javaobj.v2.core import JavaStreamParser

from cdc.worker.stores.file import FileOffsetBackingStore, OffsetFileError, read_offset_file
from cdc.worker.stores.javaser import JavaSerializationError, dump_byte_map, load_byte_map

KEY = b'["inv",{"server":"dbserver1"}]'
VALUE = b'{"file":"binlog.000006","pos":2030242}'


def utf(s: str) -> bytes:
    return struct.pack(">H", len(s)) + s.encode()


def java_one_entry_map(key: bytes, value: bytes) -> bytes:
    """Built by hand from the Java Object Serialization Stream Protocol (what ObjectOutputStream writes)."""
    return b"".join(
        [
            bytes.fromhex("ACED0005"),  # STREAM_MAGIC, STREAM_VERSION
            b"\x73",  # TC_OBJECT
            b"\x72" + utf("java.util.HashMap"),  # TC_CLASSDESC, className
            struct.pack(">q", 362498820763181265),  # serialVersionUID
            b"\x03",  # SC_WRITE_METHOD | SC_SERIALIZABLE
            struct.pack(">h", 2),  # two fields, in name order
            b"F" + utf("loadFactor"),
            b"I" + utf("threshold"),
            b"\x78",  # TC_ENDBLOCKDATA: no class annotation
            b"\x70",  # TC_NULL: no serializable superclass (AbstractMap is not)
            struct.pack(">f", 0.75),  # loadFactor
            struct.pack(">i", 12),  # threshold of a 16-bucket table
            b"\x77\x08" + struct.pack(">ii", 16, 1),  # TC_BLOCKDATA: buckets, size
            b"\x75",  # TC_ARRAY (key)
            b"\x72" + utf("[B") + struct.pack(">q", -5984413125824719648) + b"\x02" + struct.pack(">h", 0),
            b"\x78\x70",  # no annotation, no superclass
            struct.pack(">i", len(key)) + key,
            b"\x75",  # TC_ARRAY (value)
            b"\x71" + struct.pack(">I", 0x7E0002),  # TC_REFERENCE to the [B class descriptor (3rd handle)
            struct.pack(">i", len(value)) + value,
            b"\x78",  # TC_ENDBLOCKDATA: end of HashMap.writeObject's data
        ]
    )


# Written by Java 17: ObjectOutputStream.writeObject of a HashMap {k1=v1, k2=null, k3=v3} (byte[] keys).
JAVA_THREE_ENTRIES = bytes.fromhex(
    "aced0005737200116a6176612e7574696c2e486173684d61700507dac1c31660d103000246000a6c6f6164466163746f72"
    "4900097468726573686f6c6478703f4000000000000c77080000001000000003757200025b42acf317f8060854e0020000"
    "7870000000026b317571007e00020000000276317571007e0002000000026b32707571007e0002000000026b337571007e"
    "000200000002763378"
)


def test_writer_is_byte_identical_to_java_for_one_entry() -> None:
    assert dump_byte_map({KEY: VALUE}) == java_one_entry_map(KEY, VALUE)


def test_reader_reads_the_hand_built_stream() -> None:
    assert load_byte_map(java_one_entry_map(KEY, VALUE)) == {KEY: VALUE}


def test_reader_reads_a_file_java_wrote() -> None:
    assert load_byte_map(JAVA_THREE_ENTRIES) == {b"k1": b"v1", b"k2": None, b"k3": b"v3"}


def test_empty_map_matches_java() -> None:
    # new HashMap<>() never filled: threshold 0, capacity() 16, size 0.
    data = dump_byte_map({})
    assert data.endswith(struct.pack(">fi", 0.75, 0) + b"\x77\x08" + struct.pack(">ii", 16, 0) + b"\x78")
    assert load_byte_map(data) == {}


@pytest.mark.parametrize("size", [0, 1, 12, 13, 40, 1000])
def test_round_trip_and_java_capacity(size: int) -> None:
    entries = {f'["c",{{"p":{i}}}]'.encode(): f'{{"o":{i}}}'.encode() for i in range(size)}
    data = dump_byte_map(entries)
    assert load_byte_map(data) == entries
    capacity, count = struct.unpack(">ii", data[0x49:0x51])
    assert count == size
    assert size <= capacity * 3 // 4 or size == 0  # the table Java would have grown to


def test_javaobj_parses_our_output_as_a_hashmap_of_byte_arrays() -> None:
    """An independent Java-serialization parser agrees with the layout we write."""
    contents = JavaStreamParser(io.BytesIO(dump_byte_map({b"k": b"v", b"n": None})), []).run()
    obj = contents[0]
    assert obj.classdesc.name == "java.util.HashMap"
    annotations = obj.annotations[obj.classdesc]
    assert bytes(annotations[1].data) == b"k"
    assert bytes(annotations[2].data) == b"v"


def test_back_reference_to_the_same_array() -> None:
    data = bytearray(java_one_entry_map(KEY, VALUE))
    # Make the value a TC_REFERENCE to the key array (handle 0x7E0003), as Java writes a shared byte[].
    start = data.index(b"\x75\x71")
    data[start:-1] = b"\x71" + struct.pack(">I", 0x7E0003)
    assert load_byte_map(bytes(data)) == {KEY: KEY}


@pytest.mark.parametrize(
    "bad",
    [
        b"",
        b"\xac\xed",
        b"not java at all",
        java_one_entry_map(KEY, VALUE)[:-1],  # lost TC_ENDBLOCKDATA
        java_one_entry_map(KEY, VALUE)[:60],
        java_one_entry_map(KEY, VALUE)[:-20],
        java_one_entry_map(KEY, VALUE).replace(b"java.util.HashMap", b"java.util.TreeMap"),
    ],
)
def test_reader_rejects_truncated_or_foreign_data(bad: bytes) -> None:
    with pytest.raises(JavaSerializationError):
        load_byte_map(bad)


def test_reader_rejects_every_truncation() -> None:
    data = java_one_entry_map(KEY, VALUE)
    for n in range(len(data)):
        with pytest.raises(JavaSerializationError):
            load_byte_map(data[:n])


# ---------------------------------------------------------------------------------------------- the store


def test_missing_file_is_empty_and_set_creates_it(tmp_path: Path) -> None:
    path = tmp_path / "connect.offsets"
    store = FileOffsetBackingStore(path)
    store.start()
    assert store.get([KEY]) == {KEY: None}
    store.set({KEY: VALUE})
    assert read_offset_file(path) == {KEY: VALUE}
    assert path.read_bytes() == java_one_entry_map(KEY, VALUE)


def test_reads_a_file_kafka_connect_wrote(tmp_path: Path) -> None:
    path = tmp_path / "connect.offsets"
    path.write_bytes(JAVA_THREE_ENTRIES)
    store = FileOffsetBackingStore(path)
    store.start()
    assert store.get([b"k1", b"k2", b"k3"]) == {b"k1": b"v1", b"k2": None, b"k3": b"v3"}


def test_set_none_deletes_and_survives_restart(tmp_path: Path) -> None:
    path = tmp_path / "o.dat"
    store = FileOffsetBackingStore(str(path))
    store.start()
    other = b'["inv",{"server":"other"}]'
    store.set({KEY: VALUE, other: b'{"pos":1}'})
    store.set({other: None})
    reopened = FileOffsetBackingStore(path)
    reopened.start()
    assert reopened.get([KEY, other]) == {KEY: VALUE, other: None}
    assert reopened.connector_partitions("inv") == [{"server": "dbserver1"}]


@pytest.mark.parametrize(
    "content", [b"", b"\xac\xed\x00\x05\x73", b"garbage", java_one_entry_map(KEY, VALUE)[:-7]]
)
def test_corrupt_or_truncated_file_is_an_error_naming_it(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "connect.offsets"
    path.write_bytes(content)
    store = FileOffsetBackingStore(path)
    with pytest.raises(OffsetFileError, match=str(path)):
        store.start()
    # ... and never a silent reset: a set does not overwrite the unreadable file either.
    with pytest.raises(OffsetFileError):
        store.set({KEY: VALUE})
    assert path.read_bytes() == content


def test_failed_write_leaves_old_file_and_store_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "connect.offsets"
    store = FileOffsetBackingStore(path)
    store.start()
    store.set({KEY: VALUE})
    before = path.read_bytes()

    def full_disk(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OffsetFileError, match="No space left"):
        store.set({KEY: b'{"pos":2}'})
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert store.get([KEY]) == {KEY: VALUE}
    assert [p.name for p in tmp_path.iterdir()] == ["connect.offsets"]  # no temp file left behind


def test_write_keeps_file_permissions(tmp_path: Path) -> None:
    path = tmp_path / "connect.offsets"
    path.write_bytes(dump_byte_map({}))
    path.chmod(0o600)
    store = FileOffsetBackingStore(path)
    store.start()
    store.set({KEY: VALUE})
    assert path.stat().st_mode & 0o777 == 0o600
