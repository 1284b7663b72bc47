"""Connector names: the rules every path that creates or updates a connector applies, in one place.

Connect's rules (``ConnectorConfig``'s ``NonEmptyStringWithoutControlChars``, ``ConnectorsResource``'s
``/`` check) are kept, with the same messages, and tightened where a name accepted by Connect harms the
worker or the group:

* at most :data:`MAX_NAME_BYTES` bytes of UTF-8. Names travel in the group protocol as int16-length
  strings (32 767 bytes), in every assignment, status key and URL; one name of 200 KB stored in the config
  topic made every rebalance fail. 1 024 bytes is far beyond any name in use and leaves room in a
  request line (percent-encoded: 3 KB) and in the protocol;
* no control character (C0, DEL, C1), no line or paragraph separator (U+2028, U+2029: a forged log
  line), no bidirectional override or isolate (U+202A-U+202E, U+2066-U+2069: a name shown reversed);
* not ``.`` or ``..``: HTTP clients remove such path segments, so ``/connectors/../tasks`` reached
  ``/tasks`` and the connector could never be addressed again;
* valid Unicode (no lone surrogate, which JSON's ``\\ud800`` can carry and UTF-8 cannot encode).

A name stored by an older version that breaks these rules is not run (:class:`~cdc.worker.stores.
config_state.ConfigLog` sets it aside) and can be deleted over REST by its name or, when the name cannot
be written in a URL, by its :func:`alias` (logged at ERROR when the config topic is read).
"""

from __future__ import annotations

import hashlib

__all__ = ["MAX_NAME_BYTES", "alias", "name_error", "printable"]

MAX_NAME_BYTES = 1024
ALIAS_PREFIX = "invalid-connector-name-"

_SEPARATORS = {0x2028, 0x2029}
_BIDI = set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A))


def _is_control(code: int) -> bool:
    return code < 0x20 or 0x7F <= code <= 0x9F


def name_error(name: str) -> str | None:
    """Why ``name`` cannot name a connector, or None when it can."""
    if not name:
        return "String must be non-empty"
    if "/" in name:
        return "connector names may not contain '/'"
    if name in (".", ".."):
        return "connector names may not be '.' or '..'"
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:
        return "connector names must be valid Unicode (no lone surrogates)"
    if size > MAX_NAME_BYTES:
        return f"connector names may hold at most {MAX_NAME_BYTES} bytes of UTF-8, this one has {size}"
    controls = [ord(c) for c in name if _is_control(ord(c))]
    if controls:
        codes = ", ".join(str(code) for code in controls)
        return f"String may not contain control sequences but had the following ASCII chars: {codes}"
    others = [f"U+{ord(c):04X}" for c in name if ord(c) in _SEPARATORS or ord(c) in _BIDI]
    if others:
        return (
            f"connector names may not contain line separators or bidirectional controls: {', '.join(others)}"
        )
    return None


def alias(name: str) -> str:
    """A short ASCII name that addresses a stored connector whose own name breaks the rules."""
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()
    return ALIAS_PREFIX + digest[:20]


def printable(name: str, limit: int = 80) -> str:
    """``name`` as it may appear in a log line or a message: escaped, and cut at ``limit`` characters."""
    shown = name[:limit].encode("unicode_escape", "backslashreplace").decode("ascii")
    return shown + (f"... ({len(name)} characters)" if len(name) > limit else "")
