"""``Float.toString`` as the JDKs up to 18 spell it (``sun.misc.FloatingDecimal``'s ``dtoa``).

Kafka Connect's JsonConverter writes a FLOAT32 through Jackson, which writes ``Float.toString``. Before JDK 19
(JDK-4511638) that method does not always give the shortest decimal that reads back as the float: its digit
loop stops on a *symmetric* test of the rounding interval and rounds the last digit, so ``Float.MIN_NORMAL``
is ``1.17549435E-38`` where the shortest spelling is ``1.1754944E-38``, and ``1.0E-5f`` comes out as
``1.0E-5`` but ``3.4028235E38f`` as itself. Debezium's Kafka Connect (Java 17, the LTS its 3.x images and
``make compat`` run) writes these spellings, and a consumer that parses the JSON number as a double sees
different doubles for the two spellings: cdc writes what that JVM writes.

This is the algorithm, step for step (the int, long and big-integer branches are one computation on Python
integers, with the int and long branches' overflow of ``m`` and their strict ``>`` kept: the big-integer
branch compares with ``>=``). ``tests/unit/test_java_float.py`` checks it against values a JDK 17 printed.
"""

from __future__ import annotations

import math
import struct

__all__ = ["float_to_string_jdk17"]

_EXP_SHIFT = 52
_SINGLE_EXP_SHIFT = 23
_MAX_SMALL_BIN_EXP = 62
_MIN_SMALL_BIN_EXP = -(63 // 3)
# FloatingDecimal.insignificantDigitsNumber
_INSIGNIFICANT = tuple(
    int(n)
    for n in (  # noqa: SIM905 (the table as FloatingDecimal writes it)
        "0 0 0 0 1 1 1 2 2 2 3 3 3 3 4 4 4 5 5 5 6 6 6 6 7 7 7 8 8 8 9 9 9 9 10 10 10 11 "
        "11 11 12 12 12 12 13 13 13 14 14 14 15 15 15 15 16 16 16 17 17 17 18 18 18 19"
    ).split()
)
# binary digits of 5^i (FloatingDecimal.N_5_BITS), for the choice of the int, long or big branch
_N_5_BITS = [0 if i == 0 else (5**i).bit_length() for i in range(27)]
_F32 = struct.Struct(">f")
_I32 = struct.Struct(">I")


def _wrap(value: int, bits: int) -> int:
    """A Java int (32) or long (64) arithmetic result: two's complement wrap-around."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _estimate_dec_exp(fract_bits: int, bin_exp: int) -> int:
    d2 = struct.unpack(">d", struct.pack(">Q", 0x3FF0000000000000 | (fract_bits & ((1 << 52) - 1))))[0]
    d = (d2 - 1.5) * 0.289529654 + 0.176091259 + bin_exp * 0.301029995663981
    return math.floor(d)


def _insignificant_digits_for_pow2(p2: int) -> int:
    return _INSIGNIFICANT[p2] if 1 < p2 < len(_INSIGNIFICANT) else 0


def _long_digits(dec_exponent: int, lvalue: int, insignificant: int) -> tuple[list[int], int]:
    """``developLongDigits``: an integer-valued float's digits (trailing zeros dropped)."""
    if insignificant:
        pow10 = 10**insignificant
        residue = lvalue % pow10
        lvalue //= pow10
        dec_exponent += insignificant
        if residue >= pow10 >> 1:
            lvalue += 1
    text = str(lvalue)
    stripped = text.rstrip("0")
    dec_exponent += len(text) - 1
    return [int(c) for c in stripped], dec_exponent + 1


def _dtoa(bin_exp: int, fract_bits: int, n_significant_bits: int) -> tuple[list[int], int]:
    """Digits and decimal exponent (the value is ``0.d1d2... * 10^exponent``)."""
    tail_zeros = (fract_bits & -fract_bits).bit_length() - 1
    n_fract_bits = _EXP_SHIFT + 1 - tail_zeros
    n_tiny_bits = max(0, n_fract_bits - bin_exp - 1)
    if (
        _MIN_SMALL_BIN_EXP <= bin_exp <= _MAX_SMALL_BIN_EXP
        and n_tiny_bits < 27
        and n_fract_bits + _N_5_BITS[n_tiny_bits] < 64
        and n_tiny_bits == 0
    ):
        insignificant = (
            _insignificant_digits_for_pow2(bin_exp - n_significant_bits - 1)
            if bin_exp > n_significant_bits
            else 0
        )
        if bin_exp >= _EXP_SHIFT:
            shifted = fract_bits << (bin_exp - _EXP_SHIFT)
        else:
            shifted = fract_bits >> (_EXP_SHIFT - bin_exp)
        return _long_digits(0, shifted, insignificant)
    dec_exp = _estimate_dec_exp(fract_bits, bin_exp)
    b5 = max(0, -dec_exp)
    b2 = b5 + n_tiny_bits + bin_exp
    s5 = max(0, dec_exp)
    s2 = s5 + n_tiny_bits
    m5 = b5
    m2 = b2 - n_significant_bits
    fract_bits >>= tail_zeros
    b2 -= n_fract_bits - 1
    common = min(b2, s2)
    b2 -= common
    s2 -= common
    m2 -= common
    if n_fract_bits == 1:  # an exact power of two: the next lower float is half as far away
        m2 -= 1
    if m2 < 0:
        b2 -= m2
        s2 -= m2
        m2 = 0
    b_bits = n_fract_bits + b2 + (_N_5_BITS[b5] if b5 < len(_N_5_BITS) else b5 * 3)
    ten_s_bits = s2 + 1 + (_N_5_BITS[s5 + 1] if s5 + 1 < len(_N_5_BITS) else (s5 + 1) * 3)
    b = fract_bits * 5**b5 << b2
    s = 5**s5 << s2
    m = 5**m5 << m2
    tens = s * 10
    width = 32 if b_bits < 32 and ten_s_bits < 32 else 64 if b_bits < 64 and ten_s_bits < 64 else 0
    digits: list[int] = []

    def step(first: bool) -> tuple[int, bool, bool]:
        nonlocal b, m
        q = b // s
        b = 10 * (b % s)
        if not width:
            m *= 10
            return q, b < m, b + m >= tens
        m = _wrap(m * 10, width)
        if not first and m <= 0:  # the int/long branch's m overflowed: it stops ("certainly > b")
            return q, True, True
        return q, b < m, _wrap(b + m, width) > tens

    q, low, high = step(True)
    if q == 0 and not high:
        dec_exp -= 1  # the estimate was one too high: the leading zero is dropped
    else:
        digits.append(q)
    if dec_exp < -3 or dec_exp >= 8:  # the E form needs a digit after the point
        low = high = False
    while not low and not high:
        q, low, high = step(False)
        digits.append(q)
    low_digit_difference = _wrap((b << 1) - tens, width) if width else (b << 1) - tens
    exponent = dec_exp + 1
    if high and (not low or low_digit_difference > 0 or (low_digit_difference == 0 and digits[-1] & 1)):
        exponent = _roundup(digits, exponent)
    return digits, exponent


def _roundup(digits: list[int], exponent: int) -> int:
    i = len(digits) - 1
    while digits[i] == 9 and i > 0:
        digits[i] = 0
        i -= 1
    if digits[i] == 9:  # carry out of the first digit: 1 and zeros, one more in the exponent
        digits[0] = 1
        return exponent + 1
    digits[i] += 1
    return exponent


def _chars(negative: bool, digits: list[int], exponent: int) -> str:
    text = "".join(map(str, digits))
    sign = "-" if negative else ""
    if 0 < exponent < 8:
        whole = text[:exponent]
        if len(whole) < exponent:
            return f"{sign}{whole}{'0' * (exponent - len(whole))}.0"
        return f"{sign}{whole}.{text[exponent:] or '0'}"
    if -3 < exponent <= 0:
        return f"{sign}0.{'0' * -exponent}{text}"
    e = exponent - 1
    return f"{sign}{text[0]}.{text[1:] or '0'}E{e}"


def float_to_string_jdk17(value: float) -> str:
    """``Float.toString((float) value)`` as JDK 17 writes it."""
    (bits,) = _I32.unpack(_F32.pack(value))
    negative = bool(bits >> 31)
    fract = bits & 0x7FFFFF
    bin_exp = (bits >> _SINGLE_EXP_SHIFT) & 0xFF
    if bin_exp == 0xFF:
        return "NaN" if fract else ("-Infinity" if negative else "Infinity")
    if bin_exp == 0:
        if fract == 0:
            return "-0.0" if negative else "0.0"
        leading = 32 - fract.bit_length()
        shift = leading - (31 - _SINGLE_EXP_SHIFT)
        fract <<= shift
        bin_exp = 1 - shift
        n_significant = 32 - leading
    else:
        fract |= 1 << _SINGLE_EXP_SHIFT
        n_significant = _SINGLE_EXP_SHIFT + 1
    bin_exp -= 127
    digits, exponent = _dtoa(bin_exp, fract << (_EXP_SHIFT - _SINGLE_EXP_SHIFT), n_significant)
    return _chars(negative, digits, exponent)
