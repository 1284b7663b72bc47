"""The incremental snapshot's pure parts: Debezium's offset keys (Java-serialized key arrays, the
collections JSON), the chunk bounds SQL, signal parsing and the actions a signal's JSON asks for."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any, cast

import pytest

from cdc.api.errors import ConnectError
from cdc.history.model import TableId
from cdc.mysql.incremental import IncrementalSnapshot
from cdc.mysql.incremental.chunks import greater_than
from cdc.mysql.incremental.context import DataCollection, IncrementalContext
from cdc.mysql.incremental.javaser import JavaLong, decode_object_array, encode_object_array
from cdc.mysql.signals.actions import SignalActions
from cdc.mysql.signals.record import SignalError, SignalRecord, parse_signal_json

# ObjectOutputStream.writeObject(new Object[]{1, 2L, "a", (short) 3, new BigDecimal("12.30"),
#   new BigInteger("123456789012345678901234567890"), true, 1.5, null, 7, 8L}) by OpenJDK 17, as hex.
JAVA_WRITTEN = (
    "ACED0005757200135B4C6A6176612E6C616E672E4F626A6563743B90CE589F1073296C02000078700000000B73720011"
    "6A6176612E6C616E672E496E746567657212E2A0A4F781873802000149000576616C7565787200106A6176612E6C616E"
    "672E4E756D62657286AC951D0B94E08B0200007870000000017372000E6A6176612E6C616E672E4C6F6E673B8BE490CC"
    "8F23DF0200014A000576616C75657871007E00030000000000000002740001617372000F6A6176612E6C616E672E5368"
    "6F7274684D37133460DA5202000153000576616C75657871007E00030003737200146A6176612E6D6174682E42696744"
    "6563696D616C54C71557F981284F0300024900057363616C654C0006696E7456616C7400164C6A6176612F6D6174682F"
    "426967496E74656765723B7871007E000300000002737200146A6176612E6D6174682E426967496E74656765728CFC9F"
    "1FA93BFB1D030006490008626974436F756E744900096269744C656E67746849001366697273744E6F6E7A65726F4279"
    "74654E756D49000C6C6F776573745365744269744900067369676E756D5B00096D61676E69747564657400025B427871"
    "007E0003FFFFFFFFFFFFFFFFFFFFFFFEFFFFFFFE00000001757200025B42ACF317F8060854E002000078700000000204"
    "CE78787371007E000DFFFFFFFFFFFFFFFFFFFFFFFEFFFFFFFE000000017571007E00100000000D018EE90FF6C373E0EE"
    "4E3F0AD278737200116A6176612E6C616E672E426F6F6C65616ECD207280D59CFAEE0200015A000576616C7565787001"
    "737200106A6176612E6C616E672E446F75626C6580B3C24A296BFB0402000144000576616C75657871007E00033FF800"
    "0000000000707371007E0002000000077371007E00050000000000000008"
)


def test_reads_what_java_wrote() -> None:
    values = decode_object_array(JAVA_WRITTEN)
    assert values == [1, 2, "a", 3, Decimal("12.30"), 123456789012345678901234567890, True, 1.5, None, 7, 8]
    assert isinstance(values[1], JavaLong) and not isinstance(values[0], JavaLong)


def test_writes_what_java_writes() -> None:
    # OpenJDK 17's ObjectOutputStream.writeObject(new Object[]{5L}), as hex: ours is byte for byte the same.
    assert encode_object_array([JavaLong(5)]).upper() == (
        "ACED0005757200135B4C6A6176612E6C616E672E4F626A6563743B90CE589F1073296C020000787000000001"
        "7372000E6A6176612E6C616E672E4C6F6E673B8BE490CC8F23DF0200014A000576616C7565787200106A6176"
        "612E6C616E672E4E756D62657286AC951D0B94E08B02000078700000000000000005"
    )
    # Every type of the Java-written array (a Python int is written as Integer, so no Short), read back.
    # (OpenJDK 17 read this encoding back to the same Java values when it was written.)
    values = [
        1,
        JavaLong(2),
        "a",
        Decimal("12.30"),
        123456789012345678901234567890,
        True,
        1.5,
        None,
        7,
        JavaLong(8),
    ]
    assert decode_object_array(encode_object_array(values)) == values


# The incremental_snapshot_primary_key the real Debezium 3.5 MariaDB connector committed for the composite
# key (a INT, b VARCHAR, c DATE) = (1, 'x', 2020-01-01) of `make compat`'s t_composite (27 November 2026):
# the DATE is a java.time.LocalDate (java.time.Ser, externalizable).
DEBEZIUM_DATE_KEY = (
    "aced0005757200135b4c6a6176612e6c616e672e4f626a6563743b90ce589f1073296c020000787000000003737200116a"
    "6176612e6c616e672e496e746567657212e2a0a4f781873802000149000576616c7565787200106a6176612e6c616e672e"
    "4e756d62657286ac951d0b94e08b020000787000000001740001787372000d6a6176612e74696d652e536572955d84ba1b"
    "2248b20c00007870770703000007e4010178"
)


def test_a_date_key_is_a_local_date_as_debezium_writes_it() -> None:
    import datetime

    values = [1, "x", datetime.date(2020, 1, 1)]
    assert decode_object_array(DEBEZIUM_DATE_KEY) == values
    assert encode_object_array(values) == DEBEZIUM_DATE_KEY
    # two dates in one key: the second refers to the first's class descriptor
    two = [datetime.date(1, 12, 31), datetime.date(9999, 1, 2)]
    assert decode_object_array(encode_object_array(two)) == two
    with pytest.raises(ConnectError, match="datetime"):
        encode_object_array([datetime.datetime(2020, 1, 1)])


def test_keys_of_one_shape_are_written_from_a_template_as_the_writer_writes_them() -> None:
    # The template (one per sequence of classes) must give the general writer's bytes for any values.
    shapes: list[list[Any]] = [
        [JavaLong(5)],
        [1, None, JavaLong(3)],
        ["a", JavaLong(2), "h\u00e9llo"],
        [True, 1.5, None, "x" * 100],
        [None, None],
        [],
        ["\u00e9" * 0x3FFF],
        [JavaLong(-1), -5, "", False],
    ]
    for shape in shapes:
        for values in (shape, [_other(v) for v in shape]):
            assert encode_object_array(values) == _written(values)
            assert decode_object_array(encode_object_array(values)) == values
    # Values outside the templates' classes still go through the writer.
    assert decode_object_array(encode_object_array([2**40, "x" * 0x4000, Decimal("1.5")])) == [
        2**40,
        "x" * 0x4000,
        Decimal("1.5"),
    ]


def _other(value: Any) -> Any:
    """Another value of the same Java class."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, JavaLong):
        return JavaLong(value * 7919 - 2**62)
    if isinstance(value, int | float):
        return value * 3 - 1
    return value + "\u20acz" if isinstance(value, str) else value


def _written(values: list[Any]) -> str:
    from cdc.mysql.incremental.javaser import _encode

    return _encode(values)


def test_a_serialized_null_and_garbage() -> None:
    assert decode_object_array("ACED000570") is None
    with pytest.raises(Exception, match="Failed to deserialize"):
        decode_object_array("ACED00057501")


def test_context_round_trips_through_debezium_keys() -> None:
    context = IncrementalContext()
    context.add(
        [DataCollection(TableId("db", "a"), "id > 5", ""), DataCollection(TableId("db", "b"), "", "code")],
        "sig-1",
    )
    context.maximum_key = [JavaLong(900)]
    context.last_sent = [JavaLong(400)]
    offset = context.store({"file": "binlog.000001", "pos": 4})
    assert json.loads(offset["incremental_snapshot_collections"]) == [
        {
            "incremental_snapshot_collections_id": "db.a",
            "incremental_snapshot_collections_additional_condition": "id > 5",
            "incremental_snapshot_collections_surrogate_key": None,
        },
        {
            "incremental_snapshot_collections_id": "db.b",
            "incremental_snapshot_collections_additional_condition": None,
            "incremental_snapshot_collections_surrogate_key": "code",
        },
    ]
    assert offset["incremental_snapshot_correlation_id"] == "sig-1"
    assert "snapshot" not in offset  # a window's (watermark's) offset is not flagged; its rows' are
    row = context.store_row(offset, [JavaLong(401)])
    assert (
        row["snapshot"] == "INCREMENTAL"
        and row["incremental_snapshot_primary_key"] != (offset["incremental_snapshot_primary_key"])
    )
    assert "snapshot" not in offset and context.last_sent == [401]
    context.last_sent = [JavaLong(400)]
    back = IncrementalContext.from_offset(offset)
    assert back.chunk_end == [400] and back.maximum_key == [900]
    assert [c.table for c in back.collections] == [TableId("db", "a"), TableId("db", "b")]
    assert back.collections[0].condition == "id > 5" and back.collections[1].surrogate_key == "code"
    # Resumed, before a row is sent, the stored key is where it resumes (not a null that restarts the table).
    assert back.store({})["incremental_snapshot_primary_key"] == offset["incremental_snapshot_primary_key"]
    back.next_collection()
    back.next_collection()
    assert back.store({"file": "f"}) == {"file": "f"}  # done: no snapshot keys any more


def test_an_offset_before_a_chunks_rows_are_sent_never_names_the_chunks_end() -> None:
    """The chunk is read (its end key set) before its window's rows are sent: the window watermarks'
    offsets, committed in between, must not name that end, or a restart then skips the chunk's rows. As
    Debezium's, they name the last row sent: none yet (null) for a table's first chunk, found by ``make
    compat``'s offset after every record; a resumed snapshot's resume point after a restart, until the rows
    of its first chunk are sent, even once that chunk was read."""
    context = IncrementalContext()
    context.add([DataCollection(TableId("db", "a"), "", "")], "sig-1")
    context.maximum_key = [JavaLong(900)]
    context.chunk_end = [JavaLong(2)]  # the first chunk was read: rows 1 and 2, not sent yet
    assert context.store({"file": "f", "pos": 4})["incremental_snapshot_primary_key"] == "aced000570"
    sent = context.store_row(context.store({"file": "f", "pos": 5}), [JavaLong(2)])
    context.chunk_end = [JavaLong(4)]  # the second chunk read: its window names the first chunk's last row
    window = context.store({"file": "f", "pos": 6})
    assert window["incremental_snapshot_primary_key"] == sent["incremental_snapshot_primary_key"]
    back = IncrementalContext.from_offset(window)  # a restart resumes after row 2, reads rows 3-4
    back.chunk_end = [JavaLong(4)]
    assert back.store({})["incremental_snapshot_primary_key"] == sent["incremental_snapshot_primary_key"]
    back.revert_chunk()  # a chunk whose window was disturbed is read again from the resume point
    assert back.chunk_end == [2]


def test_key_order_bounds_over_several_columns() -> None:
    sql, params = greater_than(["a", "b", "c"], [1, "x", JavaLong(3)])
    assert sql == "((`a` > %s) OR (`a` = %s AND `b` > %s) OR (`a` = %s AND `b` = %s AND `c` > %s))"
    assert params == [1, 1, "x", 1, "x", 3]


def test_signal_json_of_the_file_and_kafka_channels() -> None:
    signal = parse_signal_json(
        '{"id": "d1", "type": "execute-snapshot", "data": {"data-collections": ["db.t"]}}', "file"
    )
    assert signal.payload() == {"data-collections": ["db.t"]}
    assert SignalRecord("x", "log", "", "source").payload() == {}
    with pytest.raises(SignalError):
        parse_signal_json("[1]", "file")
    with pytest.raises(SignalError):
        SignalRecord("x", "log", "{nope", "source").payload()


class _Recorder:
    """Stands in for the incremental snapshot: records what the actions asked of it."""

    signal_table = TableId("db", "debezium_signal")
    read_only = False

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def execute(self, *args: Any) -> None:
        self.calls.append(("execute", *args))

    def stop(self, patterns: list[str]) -> None:
        self.calls.append(("stop", patterns))

    def pause(self) -> None:
        self.calls.append(("pause",))

    def resume(self) -> None:
        self.calls.append(("resume",))


def _actions() -> tuple[SignalActions, _Recorder, list[Any]]:
    recorder = _Recorder()
    blocking: list[Any] = []
    actions = SignalActions(
        cast(IncrementalSnapshot, recorder), lambda tables, conds: blocking.append((tables, conds)), "srv"
    )
    return actions, recorder, blocking


def test_actions_from_the_json_debezium_users_send(caplog: pytest.LogCaptureFixture) -> None:
    actions, recorder, blocking = _actions()
    send = lambda t, d: actions.dispatch(SignalRecord("id-1", t, json.dumps(d), "file"))  # noqa: E731
    send(
        "execute-snapshot",
        {
            "data-collections": ["db.a", " db.b.* "],
            "type": "INCREMENTAL",
            "additional-conditions": [{"data-collection": "db.a", "filter": "x > 1"}],
            "surrogate-key": "code",
        },
    )
    send("execute-snapshot", {"data-collections": ["db.c"], "additional-condition": "y = 2"})
    send("execute-snapshot", {"data-collections": ["db.d"], "type": "blocking"})
    send("stop-snapshot", {"data-collections": ["db.a"], "type": "incremental"})
    send("stop-snapshot", {"type": "incremental"})
    send("pause-snapshot", {})
    send("resume-snapshot", {})
    assert recorder.calls == [
        ("execute", "id-1", ["db.a", "db.b.*"], [("db.a", "x > 1")], "code"),
        ("execute", "id-1", ["db.c"], [(".*", "y = 2")], ""),
        ("stop", ["db.a"]),
        ("stop", []),
        ("pause",),
        ("resume",),
    ]
    assert blocking == [(["db.d"], [])]
    # Malformed ones are logged with their id and skipped; nothing is called.
    recorder.calls.clear()
    caplog.set_level("WARNING")
    send("execute-snapshot", {"data-collections": []})
    send("execute-snapshot", {"data-collections": ["db.a"], "type": "sideways"})
    send(
        "execute-snapshot",
        {"data-collections": ["db.a"], "additional-conditions": [{"data-collection": "("}]},
    )
    send("stop-snapshot", {"type": "blocking"})
    send("no-such-thing", {})
    actions.dispatch(SignalRecord("id-2", "log", "{broken", "source"))
    assert recorder.calls == []
    skipped = [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()]
    assert len(skipped) == 6 and all("'id-" in m for m in skipped)


def test_an_incremental_snapshot_without_a_signal_table_is_skipped() -> None:
    actions, recorder, _ = _actions()
    recorder.signal_table = None  # type: ignore[assignment]
    actions.dispatch(SignalRecord("x", "execute-snapshot", '{"data-collections": ["db.a"]}', "kafka"))
    assert recorder.calls == []
    recorder.read_only = True  # read.only needs none
    actions.dispatch(SignalRecord("x", "execute-snapshot", '{"data-collections": ["db.a"]}', "kafka"))
    assert len(recorder.calls) == 1


def test_a_spark_back_fill_start_travels_in_the_offsets() -> None:
    """The start of the current table's Spark back-fill is kept while it runs, dropped with the table, and
    ignored when it names another table than the current one (a hand-edited or stale offset)."""
    context = IncrementalContext()
    context.add([DataCollection(TableId("db", "a")), DataCollection(TableId("db", "b"))], "sig-2")
    assert "incremental_snapshot_spark_start" not in context.store({"file": "f", "pos": 4})
    context.spark_start = {"file": "binlog.000003", "pos": 1234}
    offset = context.store({"file": "binlog.000003", "pos": 2000})
    assert json.loads(offset["incremental_snapshot_spark_start"]) == {
        "table": "db.a",
        "start": {"file": "binlog.000003", "pos": 1234},
    }
    back = IncrementalContext.from_offset(offset)
    assert back.spark_start == {"file": "binlog.000003", "pos": 1234}
    back.next_collection()
    assert back.spark_start is None
    assert "incremental_snapshot_spark_start" not in back.store({"file": "f"})
    other = dict(offset, incremental_snapshot_spark_start=json.dumps({"table": "db.b", "start": {"pos": 1}}))
    assert IncrementalContext.from_offset(other).spark_start is None


@pytest.mark.parametrize(
    ("engine", "initial", "expected"),
    [("auto", "local", False), ("auto", "spark", True), ("local", "spark", False), ("SPARK", "local", True)],
)
def test_which_engine_reads_incremental_snapshots(engine: str, initial: str, expected: bool) -> None:
    from cdc.mysql.config import MySqlSettings

    settings = MySqlSettings.parse(
        {
            "topic.prefix": "p",
            "database.hostname": "h",
            "database.user": "u",
            "database.server.id": "5",
            "incremental.snapshot.engine": engine,
            "snapshot.engine": initial,
        }
    )
    assert settings.incremental_spark is expected


def test_an_unknown_incremental_engine_is_refused() -> None:
    from cdc.mysql.validation import require_valid

    with pytest.raises(Exception, match=r"incremental\.snapshot\.engine"):
        require_valid(
            {
                "connector.class": "io.debezium.connector.mysql.MySqlConnector",
                "topic.prefix": "p",
                "database.hostname": "h",
                "database.user": "u",
                "database.server.id": "5",
                "incremental.snapshot.engine": "flink",
            }
        )


def test_an_offset_debezium_flagged_incremental_is_accepted_over_rest() -> None:
    """PATCH …/offsets with the offset of an incremental snapshot's row, as Debezium 3.x writes it."""
    from cdc.api.offsets import InvalidOffsetError
    from cdc.mysql.offsets import BinlogOffset, check_offset

    offset = {
        "file": "binlog.000002",
        "pos": 4,
        "snapshot": "INCREMENTAL",
        "incremental_snapshot_primary_key": None,
    }
    check_offset("p", {"server": "p"}, offset)
    assert not BinlogOffset.from_dict(offset).snapshot  # no initial snapshot to redo on a restart
    with pytest.raises(InvalidOffsetError, match="INCREMENTAL"):
        check_offset("p", {"server": "p"}, {**offset, "snapshot": "SOMETIMES"})
