"""A column's SQL on the JVM path of a Spark snapshot chunk (:mod:`cdc.mysql.spark.jvm`).

For each column, :func:`column_sql` gives the SQL the server computes in the chunk's SELECT and what
Spark then does with that text (a :class:`_Column`), mirroring :class:`cdc.mysql.types.TypeMapper` so the
bytes equal the Python path's; a column it cannot reproduce exactly raises :class:`Unsupported`, and the
table takes the Python path. The table's query, its envelope and the producing task stay in ``jvm.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cdc.mysql.types import BINARY_TYPES, TEXT_TYPES

__all__ = ["Unsupported", "column_sql", "quote_name"]


class Unsupported(Exception):
    """This table (or run) cannot be encoded in SQL byte-identically; the Python path takes it."""


def quote_name(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


# ----------------------------------------------------------------------------------- SQL fragments
# Most of a value's JSON text is computed by the server in the chunk's SELECT (exact integer and DECIMAL
# arithmetic, its own date functions), so the Spark expressions stay small: Catalyst and the code
# generator spend seconds on large expression trees. The server's expressions return NULL for a NULL
# and '' where the Python converter gives its 'zero' value (an invalid date), never otherwise.


def _valid_date_sql(t: str) -> str:
    """Whether the server's text ``t`` of a DATE/DATETIME is a date ``datetime.date`` accepts (PyMySQL
    hands anything else over as text, which the converter turns into its zero value)."""
    y, m, d = (f"CAST(SUBSTR({t}, {i}, {n}) AS UNSIGNED)" for i, n in ((1, 4), (6, 2), (9, 2)))
    leap = f"(({y} % 4 = 0 AND {y} % 100 <> 0) OR {y} % 400 = 0)"
    days_in_month = (
        f"(CASE WHEN {m} = 2 THEN IF({leap}, 29, 28) WHEN {m} IN (4, 6, 9, 11) THEN 30 ELSE 31 END)"
    )
    return f"({y} >= 1 AND {m} BETWEEN 1 AND 12 AND {d} BETWEEN 1 AND {days_in_month})"


def _date_sql(col: str) -> str:
    """DATE → epoch days (proleptic Gregorian, as Python's ``date`` arithmetic)."""
    t = f"CAST({col} AS CHAR)"
    return (
        f"CASE WHEN {t} IS NULL THEN NULL WHEN {_valid_date_sql(t)} "
        f"THEN CAST(DATEDIFF({col}, '1970-01-01') AS CHAR) ELSE '' END"
    )


def _datetime_sql(col: str, millis: bool) -> str:
    """DATETIME as UTC wall clock → epoch microseconds (or milliseconds), integer arithmetic only."""
    t = f"CAST({col} AS CHAR)"
    micros = (
        f"(CAST(DATEDIFF({col}, '1970-01-01') AS SIGNED) * 86400000000 "
        f"+ (HOUR({col}) * 3600 + MINUTE({col}) * 60 + SECOND({col})) * 1000000 + MICROSECOND({col}))"
    )
    # DIV truncates where Python's // floors: the same here, fsp <= 3 leaves whole milliseconds
    value = f"{micros} DIV 1000" if millis else micros
    return f"CASE WHEN {t} IS NULL THEN NULL WHEN {_valid_date_sql(t)} THEN CAST({value} AS CHAR) ELSE '' END"


def _timestamp_sql(col: str) -> str:
    """TIMESTAMP (the session is UTC) → ZonedTimestamp text; the zero value and the epoch itself (which
    no real TIMESTAMP can be, as the Python converter reasons) → ''."""
    t = f"CAST({col} AS CHAR)"
    fraction_zero = f"REPLACE(REPLACE(SUBSTR({t}, 20), '.', ''), '0', '') = ''"
    zero = f"({t} LIKE '0000-%' OR ({t} LIKE '1970-01-01 00:00:00%' AND {fraction_zero}))"
    # a snapshot's TIMESTAMP text is ISO_OFFSET_DATE_TIME: the fraction without its trailing zeros
    no_zeros = f"TRIM(TRAILING '.' FROM TRIM(TRAILING '0' FROM {t}))"
    trimmed = f"CASE WHEN {t} LIKE '%.%' THEN {no_zeros} ELSE {t} END"
    text = f"CONCAT('\"', REPLACE({trimmed}, ' ', 'T'), 'Z\"')"
    return f"CASE WHEN {t} IS NULL THEN NULL WHEN {zero} THEN '' ELSE {text} END"


def _time_sql(col: str, millis: bool) -> str:
    """TIME → signed microseconds (or milliseconds); HOUR() … MICROSECOND() of a TIME are its magnitude's."""
    t = f"CAST({col} AS CHAR)"
    magnitude = f"((HOUR({col}) * 3600 + MINUTE({col}) * 60 + SECOND({col})) * 1000000 + MICROSECOND({col}))"
    if millis:
        magnitude = f"({magnitude} DIV 1000)"  # exact: at most 3 fraction digits
    return f"CAST(IF({t} LIKE '-%', -1, 1) * {magnitude} AS CHAR)"


def _twos_hex_sql(col: str, scale: int, precision: int) -> str:
    """A DECIMAL's unscaled value u as the hex digits of its minimal two's complement
    (``BigInteger.toByteArray``), before the complement: even length, sign byte included, of ``a`` = u
    or, for a negative u, ``a`` = |u| - 1 (whose bits are ~u's); prefixed with '-' when u < 0 (Spark
    then complements the digits). Exact DECIMAL arithmetic of the server, 32-bit limbs, every literal
    exact: precision up to 65."""
    unscaled = f"({col} * 1{'0' * scale})" if scale else f"({col})"
    a = f"(ABS({unscaled}) - ({unscaled} < 0))"
    if precision <= 18:
        digits = f"HEX(CAST({a} AS SIGNED))"  # HEX() of a DECIMAL would go through a double
    else:
        limbs = max(1, -(-(10**precision - 1).bit_length() // 32))
        parts = []
        for i in range(limbs):
            low = f"MOD({a}, {2 ** (32 * i)})" if i else "0"
            upper = f"MOD({a}, {2 ** (32 * (i + 1))})" if i < limbs - 1 else a
            limb = (
                f"CAST(({upper} - {low}) / {2 ** (32 * i)} AS UNSIGNED)"
                if i
                else f"CAST(MOD({a}, 4294967296) AS UNSIGNED)"
            )
            parts.append(f"LPAD(HEX({limb}), 8, '0')")
        digits = f"TRIM(LEADING '0' FROM CONCAT({', '.join(reversed(parts))}))"
    d = f"IF({digits} = '', '0', {digits})"
    even = f"IF(LENGTH({d}) % 2 = 1, CONCAT('0', {d}), {d})"
    signed = f"IF(LEFT({even}, 1) >= '8', CONCAT('00', {even}), {even})"
    return f"CONCAT(IF({unscaled} < 0, '-', ''), {signed})"


def _base64_sql(binary: str) -> str:
    """Base64 without the line breaks MariaDB's TO_BASE64 puts every 76 characters."""
    return f"REPLACE(TO_BASE64({binary}), CHAR(10), '')"


def _quoted(sql: str) -> str:
    return f"CONCAT('\"', {sql}, '\"')"


# ----------------------------------------------------------------------------------- columns


@dataclass(frozen=True)
class _Column:
    """One column of the chunk query: the server's SQL for it, and what Spark does with that text:
    ``raw`` (it is the JSON text; '' where the Python converter gives its zero value, computed from
    ``zero_sample``), ``string`` (a string to escape as Jackson does), ``double``/``float`` (a number
    to write with Jackson's shortest digits), ``float_as_double`` (a FLOAT(M,D): the float32 widened to a
    double, written as a double), ``twos`` (two's-complement hex to base64)."""

    select: str
    kind: str
    zero_sample: Any = None


def column_sql(m: Any, mapper: Any, numeric: bool) -> _Column:
    """The SQL mapping of a column, mirroring :class:`cdc.mysql.types.TypeMapper`; raises Unsupported."""
    c = m.column
    col = quote_name(c.name)
    base = c.base_type
    length = c.length
    as_char = f"CAST({col} AS CHAR)"
    boolean = f"CASE WHEN {col} IS NULL THEN NULL WHEN {col} <> 0 THEN 'true' ELSE 'false' END"
    if base in ("BOOLEAN", "BOOL"):
        return _Column(boolean, "raw")
    if base == "BIT":
        if not length or length == 1:
            return _Column(boolean, "raw")
        nbytes = (length + 7) // 8  # io.debezium.data.Bits: little-endian
        return _Column(_quoted(_base64_sql(f"REVERSE(UNHEX(LPAD(HEX({col}), {2 * nbytes}, '0')))")), "raw")
    if base in ("TINYINT", "SMALLINT", "MEDIUMINT", "INT", "INTEGER"):
        return _Column(f"CAST({col} AS SIGNED)", "raw")
    if base in ("BIGINT", "SERIAL"):
        if c.unsigned and mapper.bigint_mode == "precise":
            if numeric:
                return _Column(as_char, "raw")
            return _Column(_twos_hex_sql(col, 0, 20), "twos")
        # CAST(… AS SIGNED) wraps an unsigned value >= 2^63 to its negative complement, as Debezium does.
        return _Column(f"CAST({col} AS SIGNED)", "raw")
    if base == "FLOAT" and c.scale is None and (length is None or length <= 24):
        return _Column(as_char, "float")
    if base == "FLOAT" and c.scale is not None:
        # FLOAT(M,D) is a float32 in the row, written as its exact double (-9999.9990234375), as Debezium does
        return _Column(as_char, "float_as_double")
    if base in ("FLOAT", "DOUBLE", "DOUBLE PRECISION", "REAL"):
        return _Column(as_char, "double")
    if base in ("DECIMAL", "NUMERIC", "DEC", "FIXED"):
        scale = c.scale or 0
        precision = length if length is not None else 10
        if mapper.decimal_mode == "double":
            return _Column(as_char, "double")
        if mapper.decimal_mode == "string" or numeric:
            # BigDecimal.toString / str(Decimal) is the plain text as long as the scale is at most 6.
            if scale > 6:
                raise Unsupported(f"a decimal as text with scale {scale} > 6 (scientific notation)")
            return _Column(_quoted(as_char) if mapper.decimal_mode == "string" else as_char, "raw")
        return _Column(_twos_hex_sql(col, scale, precision), "twos")
    if base in _TEXT_TYPES or base in ("ENUM", "SET", "JSON"):
        return _Column(col, "string")
    if base in _BINARY_TYPES:
        mode = mapper.binary_mode
        if mode == "hex":
            return _Column(_quoted(f"LOWER(HEX({col}))"), "raw")
        if mode == "base64-url-safe":
            return _Column(_quoted(f"REPLACE(REPLACE({_base64_sql(col)}, '+', '-'), '/', '_')"), "raw")
        if mode not in ("bytes", "base64"):
            raise Unsupported(f"binary.handling.mode={mode}")
        return _Column(_quoted(_base64_sql(col)), "raw")
    if base == "YEAR":
        y = f"CAST({col} AS UNSIGNED)"
        if mapper.adjust_years:
            y = f"CASE WHEN {y} < 70 THEN {y} + 2000 WHEN {y} < 100 THEN {y} + 1900 ELSE {y} END"
        return _Column(f"CAST({y} AS CHAR)", "raw")
    if mapper.time_mode == "connect":
        raise Unsupported("time.precision.mode=connect")
    fsp = length or 0
    if base == "DATE":
        return _Column(_date_sql(col), "raw", "0000-00-00")
    if base == "DATETIME":
        return _Column(_datetime_sql(col, fsp <= 3), "raw", "0000-00-00 00:00:00")
    if base == "TIMESTAMP":
        return _Column(_timestamp_sql(col), "raw", "0000-00-00 00:00:00")
    if base == "TIME":
        return _Column(_time_sql(col, mapper.time_mode == "adaptive" and fsp <= 3), "raw")
    raise Unsupported(f"column {c.name} of type {c.type_name}")


_TEXT_TYPES, _BINARY_TYPES = TEXT_TYPES, BINARY_TYPES  # the type mapping's own lists
