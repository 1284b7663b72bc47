"""``cdc consume``'s output: kafka-console-consumer's DefaultMessageFormatter and its properties."""

from __future__ import annotations

import pytest

from cdc.api.errors import ConfigError
from cdc.cli.consume import Formatter, parse_properties


def test_the_default_prints_the_value_only() -> None:
    assert Formatter().format(b'{"id":1}', b'{"op":"r"}') == '{"op":"r"}\n'
    assert Formatter().format(b"k", None) == "null\n"  # a tombstone


def test_every_part_in_kafkas_order_with_its_separators() -> None:
    props = parse_properties(
        [
            "print.key=true",
            "print.timestamp=true",
            "print.partition=true",
            "print.offset=true",
            "print.headers=true",
            "key.separator= | ",
            "null.literal=NULL",
        ],
        "--property",
    )
    line = Formatter.from_properties(props).format(
        None, b"v", timestamp=(1, 1700000000000), partition=2, offset=41, headers=[("a", b"1"), ("b", None)]
    )
    assert line == "CreateTime:1700000000000 | Partition:2 | Offset:41 | a:1,b:NULL | NULL | v\n"
    assert (
        Formatter.from_properties({"print.headers": "true", "print.value": "false"}).format(b"k", b"v")
        == "NO_HEADERS\n"
    )


def test_escaped_separators_and_bytes_that_are_not_utf8() -> None:
    props = {"print.key": "true", "key.separator": "\\t", "line.separator": "\\n\\n"}
    formatter = Formatter.from_properties(props)
    assert formatter.format(b"\xff", "é".encode()) == "\\xff\té\n\n"


@pytest.mark.parametrize(
    ("items", "needle"),
    [(["print.keys=true"], "Unknown --property print.keys"), (["print.key=yes"], "expected true or false")],
)
def test_bad_properties_are_refused(items: list[str], needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        Formatter.from_properties(parse_properties(items, "--property"))
    with pytest.raises(ConfigError, match="expected KEY=VALUE"):
        parse_properties(["print.key"], "--property")
