"""``schema.name.adjustment.mode``: Debezium's ``SchemaNameAdjuster`` for Avro-valid schema names.

Checked against Debezium 3.5's ``SchemaNameAdjuster.AVRO``/``AVRO_UNICODE`` (``tests/unit/test_mysql_keys.py``
holds their answers): a character other than ``[A-Za-z0-9_.]`` is replaced, ``_`` (avro) or ``_uXXXX``
(avro_unicode, which also replaces ``_`` so that the mapping is reversible); only the name's *first*
character must be a letter or ``_``: a digit there gets a ``_`` in front (avro) or is replaced
(avro_unicode), any other character is replaced.
"""

from __future__ import annotations

__all__ = ["adjust_schema_name"]


def _valid(c: str, first: bool, unicode: bool) -> bool:
    if c == "_":
        return not unicode
    if c.isascii() and c.isalpha():
        return True
    return not first and c.isascii() and (c.isdigit() or c == ".")


def adjust_schema_name(name: str, mode: str) -> str:
    """``name`` as Debezium's adjuster for ``mode`` (none, avro, avro_unicode) gives it."""
    mode = mode.lower()
    if mode == "none" or not name:
        return name
    unicode = mode == "avro_unicode"
    out: list[str] = []
    for i, c in enumerate(name):
        if ord(c) > 0xFFFF:  # Java sees two UTF-16 code units, each replaced
            units = c.encode("utf-16-be")
            codes = (int.from_bytes(units[k : k + 2], "big") for k in (0, 2))
            out.append("".join(f"_u{u:04x}" for u in codes) if unicode else "__")
        elif _valid(c, i == 0, unicode):
            out.append(c)
        elif unicode:
            out.append(f"_u{ord(c):04x}")
        elif i == 0 and c.isascii() and c.isdigit():
            out.append("_" + c)
        else:
            out.append("_")
    return "".join(out)
