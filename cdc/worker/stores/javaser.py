"""Read and write a Java-serialized ``java.util.HashMap<byte[], byte[]>``: Kafka Connect's standalone
offsets file.

Kafka Connect's ``FileOffsetBackingStore`` saves its offsets with ``ObjectOutputStream.writeObject`` of a
``HashMap<byte[], byte[]>`` and loads them with ``ObjectInputStream.readObject``. That object graph has a
fixed layout in the Java Object Serialization Stream Protocol (grammar in the JDK's "Object Serialization
Stream Protocol" chapter), so a small reader and writer for exactly this graph is simpler and safer than a
general Java deserializer (which would also have to refuse arbitrary classes)::

    AC ED 00 05                          STREAM_MAGIC, STREAM_VERSION
    73                                   TC_OBJECT
      72 "java.util.HashMap" <suid 8>    TC_CLASSDESC, name, serialVersionUID 362498820763181265
         03 0002                         SC_SERIALIZABLE|SC_WRITE_METHOD, 2 fields
         'F' "loadFactor"  'I' "threshold"
         78 70                           TC_ENDBLOCKDATA (no annotation), TC_NULL (no serializable super)
      <float loadFactor> <int threshold> the default fields, in field order
      77 08 <int capacity> <int size>    TC_BLOCKDATA written by HashMap.writeObject
      size x (key, value), each one of:
        75 72 "[B" <suid> 02 0000 78 70  TC_ARRAY with the byte[] class descriptor (first array only)
        75 71 007E0002                   TC_ARRAY with TC_REFERENCE to that descriptor (later arrays)
           <int length> <bytes>
        71 <handle>                      TC_REFERENCE to an array written before (same Java object)
        70                               TC_NULL
      78                                 TC_ENDBLOCKDATA

Handles count from ``0x7E0000`` in the order things are written: the HashMap class descriptor, the
HashMap object, the ``[B`` descriptor, then every array. :func:`dump_byte_map` writes exactly what Java
17's ``ObjectOutputStream`` writes for a ``HashMap`` filled by ``put`` (same capacity and threshold), so a
one-entry map is byte-identical to Java's output; the reader accepts any stream Java could have written
for this graph (block data split in chunks, back-references, null keys or values).
"""

from __future__ import annotations

import struct
from collections.abc import Mapping

__all__ = ["JavaSerializationError", "dump_byte_map", "load_byte_map"]

STREAM_MAGIC = 0xACED
STREAM_VERSION = 5

TC_NULL = 0x70
TC_REFERENCE = 0x71
TC_CLASSDESC = 0x72
TC_OBJECT = 0x73
TC_STRING = 0x74
TC_ARRAY = 0x75
TC_BLOCKDATA = 0x77
TC_ENDBLOCKDATA = 0x78
TC_RESET = 0x79
TC_BLOCKDATALONG = 0x7A
TC_LONGSTRING = 0x7C

SC_WRITE_METHOD = 0x01
SC_SERIALIZABLE = 0x02

BASE_HANDLE = 0x7E0000

HASHMAP_CLASS = "java.util.HashMap"
HASHMAP_SUID = 362498820763181265
BYTE_ARRAY_CLASS = "[B"
BYTE_ARRAY_SUID = -5984413125824719648

_PRIMITIVE_SIZES = {"B": 1, "C": 2, "D": 8, "F": 4, "I": 4, "J": 8, "S": 2, "Z": 1}


class JavaSerializationError(ValueError):
    """The bytes are not a Java-serialized ``HashMap<byte[], byte[]>`` (corrupt, truncated, other type)."""


# ------------------------------------------------------------------------------------------------ writing


def _java_capacity(size: int) -> tuple[int, int]:
    """(table capacity, threshold) of a ``new HashMap<>()`` after ``size`` puts, as Java reports them."""
    if size == 0:
        return 16, 0  # the table is allocated lazily: threshold 0, capacity() answers the default 16
    capacity = 16
    while size > capacity * 3 // 4:
        capacity *= 2
    return capacity, capacity * 3 // 4


def _utf(text: str) -> bytes:
    raw = text.encode("utf-8")  # class and field names here are ASCII, where modified UTF-8 is the same
    return struct.pack(">H", len(raw)) + raw


def dump_byte_map(entries: Mapping[bytes, bytes | None]) -> bytes:
    """Serialize ``entries`` as Java serializes a ``HashMap<byte[], byte[]>`` (None values → null)."""
    capacity, threshold = _java_capacity(len(entries))
    out = bytearray(struct.pack(">HH", STREAM_MAGIC, STREAM_VERSION))
    out += bytes([TC_OBJECT, TC_CLASSDESC]) + _utf(HASHMAP_CLASS) + struct.pack(">q", HASHMAP_SUID)
    out += bytes([SC_SERIALIZABLE | SC_WRITE_METHOD]) + struct.pack(">h", 2)
    out += b"F" + _utf("loadFactor") + b"I" + _utf("threshold")
    out += bytes([TC_ENDBLOCKDATA, TC_NULL])
    out += struct.pack(">fi", 0.75, threshold)
    out += bytes([TC_BLOCKDATA, 8]) + struct.pack(">ii", capacity, len(entries))
    next_handle = BASE_HANDLE + 2  # 0: HashMap class desc, 1: the HashMap
    array_desc_handle: int | None = None

    def write_array(data: bytes | None) -> None:
        nonlocal next_handle, array_desc_handle
        if data is None:
            out.append(TC_NULL)
            return
        out.append(TC_ARRAY)
        if array_desc_handle is None:
            out.append(TC_CLASSDESC)
            out.extend(_utf(BYTE_ARRAY_CLASS) + struct.pack(">q", BYTE_ARRAY_SUID))
            out.extend(bytes([SC_SERIALIZABLE]) + struct.pack(">h", 0) + bytes([TC_ENDBLOCKDATA, TC_NULL]))
            array_desc_handle = next_handle
            next_handle += 1
        else:
            out.append(TC_REFERENCE)
            out.extend(struct.pack(">I", array_desc_handle))
        next_handle += 1  # the array itself
        out.extend(struct.pack(">i", len(data)) + bytes(data))

    for key, value in entries.items():
        write_array(key)
        write_array(value)
    out.append(TC_ENDBLOCKDATA)
    return bytes(out)


# ------------------------------------------------------------------------------------------------ reading


class _ClassDesc:
    __slots__ = ("fields", "flags", "name", "suid", "superclass")

    def __init__(self, name: str, suid: int, flags: int) -> None:
        self.name = name
        self.suid = suid
        self.flags = flags
        self.fields: list[tuple[str, str]] = []  # (type code, name)
        self.superclass: _ClassDesc | None = None


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0
        self.handles: list[object] = []

    def fail(self, what: str) -> JavaSerializationError:
        return JavaSerializationError(f"{what} at byte {self.pos} of {len(self.data)}")

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise self.fail(f"unexpected end of data (needed {n} more bytes)")
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def u8(self) -> int:
        return self.take(1)[0]

    def peek(self) -> int:
        if self.pos >= len(self.data):
            raise self.fail("unexpected end of data")
        return self.data[self.pos]

    def unpack(self, fmt: str) -> int:
        value: int = struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]
        return value

    def utf(self) -> str:
        return self.take(self.unpack(">H")).decode("utf-8", errors="replace")

    def new_handle(self, obj: object) -> int:
        self.handles.append(obj)
        return len(self.handles) - 1

    def reference(self) -> object:
        handle = self.unpack(">I") - BASE_HANDLE
        if not 0 <= handle < len(self.handles):
            raise self.fail(f"reference to unknown handle {handle + BASE_HANDLE:#x}")
        return self.handles[handle]

    def string(self) -> str:
        tc = self.u8()
        if tc == TC_STRING:
            text = self.utf()
        elif tc == TC_LONGSTRING:
            text = self.take(self.unpack(">q")).decode("utf-8", errors="replace")
        elif tc == TC_REFERENCE:
            ref = self.reference()
            if not isinstance(ref, str):
                raise self.fail("expected a string reference")
            return ref
        else:
            raise self.fail(f"expected a string, found type code {tc:#04x}")
        self.new_handle(text)
        return text

    def skip_annotation(self) -> None:
        while True:
            tc = self.u8()
            if tc == TC_ENDBLOCKDATA:
                return
            if tc == TC_BLOCKDATA:
                self.take(self.u8())
            elif tc == TC_BLOCKDATALONG:
                self.take(self.unpack(">i"))
            else:
                raise self.fail(f"unsupported class annotation content {tc:#04x}")

    def class_desc(self) -> _ClassDesc | None:
        tc = self.u8()
        if tc == TC_NULL:
            return None
        if tc == TC_REFERENCE:
            ref = self.reference()
            if not isinstance(ref, _ClassDesc):
                raise self.fail("expected a class descriptor reference")
            return ref
        if tc != TC_CLASSDESC:
            raise self.fail(f"expected a class descriptor, found type code {tc:#04x}")
        name = self.utf()
        suid = self.unpack(">q")
        desc = _ClassDesc(name, suid, 0)
        self.new_handle(desc)
        desc.flags = self.u8()
        for _ in range(self.unpack(">h")):
            code = chr(self.u8())
            field_name = self.utf()
            if code in ("L", "["):
                self.string()  # the field's type signature
            elif code not in _PRIMITIVE_SIZES:
                raise self.fail(f"unknown field type code {code!r}")
            desc.fields.append((code, field_name))
        self.skip_annotation()
        desc.superclass = self.class_desc()
        return desc

    def byte_array(self) -> bytes | None:
        tc = self.u8()
        if tc == TC_NULL:
            return None
        if tc == TC_REFERENCE:
            ref = self.reference()
            if not isinstance(ref, bytes):
                raise self.fail("expected a reference to a byte[]")
            return ref
        if tc != TC_ARRAY:
            raise self.fail(f"expected a byte[] (TC_ARRAY), found type code {tc:#04x}")
        desc = self.class_desc()
        if desc is None or desc.name != BYTE_ARRAY_CLASS:
            raise self.fail(f"expected an array of class [B, found {desc.name if desc else None!r}")
        slot = self.new_handle(None)
        length = self.unpack(">i")
        data = self.take(length)
        self.handles[slot] = data
        return data


class _BlockData:
    """Reads primitives from the block-data chunks a ``writeObject`` method wrote (values may span chunks)."""

    def __init__(self, reader: _Reader) -> None:
        self.reader = reader
        self.buffer = b""

    def take(self, n: int) -> bytes:
        while len(self.buffer) < n:
            tc = self.reader.u8()
            if tc == TC_BLOCKDATA:
                self.buffer += self.reader.take(self.reader.u8())
            elif tc == TC_BLOCKDATALONG:
                self.buffer += self.reader.take(self.reader.unpack(">i"))
            else:
                raise self.reader.fail(f"expected block data, found type code {tc:#04x}")
        chunk, self.buffer = self.buffer[:n], self.buffer[n:]
        return chunk


def load_byte_map(data: bytes) -> dict[bytes | None, bytes | None]:
    """Parse a Java-serialized ``HashMap<byte[], byte[]>``, or raise :class:`JavaSerializationError`."""
    r = _Reader(data)
    if len(data) < 4 or struct.unpack(">HH", data[:4]) != (STREAM_MAGIC, STREAM_VERSION):
        raise JavaSerializationError(
            "not a Java serialization stream "
            f"(expected magic ACED0005, found {data[:4].hex().upper() or 'nothing'})"
        )
    r.pos = 4
    while r.peek() == TC_RESET:
        r.u8()
    tc = r.u8()
    if tc != TC_OBJECT:
        raise r.fail(f"expected an object (TC_OBJECT), found type code {tc:#04x}")
    desc = r.class_desc()
    if desc is None or desc.name != HASHMAP_CLASS:
        raise r.fail(f"expected a java.util.HashMap, found {desc.name if desc else None!r}")
    if desc.suid != HASHMAP_SUID:
        raise r.fail(f"unexpected serialVersionUID {desc.suid} for java.util.HashMap")
    if desc.superclass is not None:
        raise r.fail(f"unexpected serializable superclass {desc.superclass.name!r} of java.util.HashMap")
    if not desc.flags & SC_WRITE_METHOD:
        raise r.fail("java.util.HashMap descriptor lacks SC_WRITE_METHOD")
    r.new_handle(object())  # the HashMap itself
    for code, _name in desc.fields:
        if code in ("L", "["):
            raise r.fail("unexpected object field in java.util.HashMap")
        r.take(_PRIMITIVE_SIZES[code])
    block = _BlockData(r)
    _capacity, size = struct.unpack(">ii", block.take(8))
    if size < 0:
        raise r.fail(f"negative map size {size}")
    if block.buffer:
        raise r.fail("unexpected extra block data in java.util.HashMap")
    result: dict[bytes | None, bytes | None] = {}
    for _ in range(size):
        key = r.byte_array()
        result[key] = r.byte_array()
    tc = r.u8()
    if tc != TC_ENDBLOCKDATA:
        raise r.fail(f"expected the end of java.util.HashMap's data (TC_ENDBLOCKDATA), found {tc:#04x}")
    return result
