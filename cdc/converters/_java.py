"""How Java and Jackson spell values as text, where Python spells them differently.

* ``Double.toString`` (what Jackson writes for doubles): the shortest digits that round-trip (Python's
  ``repr`` shares them), in plain notation for ``1e-3 <= |x| < 1e7`` and as ``d.dddE<exp>`` outside it;
  always at least one digit after the point.
* ``Float.toString`` as the JDK 17 that runs Kafka Connect spells it (:mod:`cdc.converters._java_float`):
  not always the shortest (``1.17549435E-38``), in the same two notations.
* Jackson quotes non-finite numbers by default (``QUOTE_NON_NUMERIC_NUMBERS``): ``"NaN"``,
  ``"Infinity"``, ``"-Infinity"``.
* Jackson escapes control characters without a short form as ``\\u00XX`` with upper-case hex; orjson
  writes lower-case hex, so :func:`fix_escapes` upper-cases them (only when there are any).
* ``BigDecimal.toString`` follows the same scientific-notation rule as Python's ``Decimal.__str__``.
"""

from __future__ import annotations

import math
import re
import struct

from cdc.converters._java_float import float_to_string_jdk17

__all__ = [
    "fix_escapes",
    "java_double",
    "java_double_json",
    "java_float",
    "java_float_json",
    "to_float32",
]

_F32 = struct.Struct(">f")


def to_float32(value: float) -> float:
    """``value`` rounded to the nearest float32 (as a Java ``(float)`` cast does)."""
    try:
        return float(_F32.unpack(_F32.pack(value))[0])
    except OverflowError:
        return math.copysign(math.inf, value)


def _sci(digits: str, exp10: int) -> str:
    """``digits`` (no leading zeros) times 10^(exp10 - len(digits) + 1) in Java's scientific form."""
    digits = digits.rstrip("0") or "0"
    return f"{digits[0]}.{digits[1:] or '0'}E{exp10}"


def _digits_exp(text: str) -> tuple[str, int]:
    """Split a Python float repr (positive, finite, non-zero) into significant digits and exponent.

    The exponent is that of the first digit: 1234.5 → ("12345", 3).
    """
    mant, _, e = text.partition("e")
    exp = int(e) if e else 0
    whole, _, frac = mant.partition(".")
    digits = (whole + frac).lstrip("0")
    # position of the first significant digit relative to the decimal point
    first = len(whole.lstrip("0")) - 1 if whole.strip("0") else -(len(frac) - len(frac.lstrip("0")) + 1)
    return digits, exp + first


def _format(value: float, text: str, single: bool = False) -> str:
    if value == 0.0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    mag = abs(value)
    if 1e-3 <= mag < 1e7:
        if "e" not in text:
            return text
        # Python chose scientific for a value Java prints plainly (cannot happen for repr, but
        # float32 shortest strings may come from the %e path)
        digits, exp = _digits_exp(text.lstrip("-"))
        sign = "-" if value < 0 else ""
        if exp >= 0:
            whole = (digits + "0" * (exp + 1))[: exp + 1]
            frac = digits[exp + 1 :].rstrip("0") or "0"
        else:
            whole = "0"
            frac = ("0" * (-exp - 1) + digits).rstrip("0") or "0"
        return f"{sign}{whole}.{frac}"
    digits, exp = _digits_exp(text.lstrip("-"))
    if len(digits.rstrip("0")) == 1:
        # Java picks, among the decimals of length 1 or 2 that round to x, the one closest to x
        # (4.9E-324, not 5.0E-324); only subnormals have a closer two-digit decimal.
        two = f"{abs(value):.1e}"
        back = to_float32(float(two)) if single else float(two)
        if back == abs(value):
            digits, exp = _digits_exp(two)
    return ("-" if value < 0 else "") + _sci(digits, exp)


def java_double(value: float) -> str:
    """``Double.toString(value)``."""
    if value != value:
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return _format(value, repr(value))


def java_float(value: float) -> str:
    """``Float.toString((float) value)`` on JDK 17 (Kafka Connect's JVM)."""
    return float_to_string_jdk17(to_float32(value))


def _json_number(text: str) -> str:
    return text if text[-1].isdigit() else f'"{text}"'


def java_double_json(value: float) -> str:
    """A double as Jackson writes it inside JSON (non-finite values quoted)."""
    return _json_number(java_double(value))


def java_float_json(value: float) -> str:
    """A float as Jackson writes it inside JSON (non-finite values quoted)."""
    return _json_number(java_float(value))


_ESCAPE = re.compile(rb"\\(u00[0-9a-f]{2}|.)")


def _upper(match: re.Match[bytes]) -> bytes:
    body = match.group(1)
    return b"\\" + body.upper().replace(b"U00", b"u00") if body[:1] == b"u" else match.group(0)


def fix_escapes(data: bytes) -> bytes:
    """Upper-case the hex digits of ``\\u00xx`` escapes, as Jackson writes them."""
    if b"\\u00" not in data:
        return data
    return _ESCAPE.sub(_upper, data)
