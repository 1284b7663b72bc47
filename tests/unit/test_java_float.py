"""FLOAT values as Debezium's Kafka Connect (JDK 17) writes them: ``Float.toString``, not the shortest
round-trip spelling. The fixture holds floats JDK 17.0.15 printed (``Float.toString`` of random bit patterns
and of decimal fractions, and the edge values first); ``1.17549435E-38`` is what Debezium wrote for
``Float.MIN_NORMAL`` side by side with cdc (which wrote ``1.1754944E-38``)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from cdc.converters._java import java_float, java_float_json

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "java17_float_tostring.txt"


def _cases() -> list[tuple[float, str]]:
    out = []
    for line in FIXTURE.read_text().splitlines():
        bits, text = line.split()
        out.append((struct.unpack(">f", struct.pack(">I", int(bits, 16)))[0], text))
    return out


def test_every_float_of_the_fixture_is_spelled_as_jdk17_spells_it() -> None:
    cases = _cases()
    assert len(cases) > 3000
    wrong = [(v, t, java_float(v)) for v, t in cases if java_float(v) != t]
    assert wrong == []


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.1754943508222875e-38, "1.17549435E-38"),  # Float.MIN_NORMAL: not the shortest (1.1754944E-38)
        (0.0010000000474974513, "0.001"),
        (9.223372036854776e18, "9.223372E18"),
        (-0.0, "-0.0"),
        (float("nan"), "NaN"),
    ],
)
def test_edge_values(value: float, text: str) -> None:
    assert java_float(value) == text


def test_json_quotes_non_finite_floats() -> None:
    assert java_float_json(float("inf")) == '"Infinity"'
    assert java_float_json(1.1754943508222875e-38) == "1.17549435E-38"
