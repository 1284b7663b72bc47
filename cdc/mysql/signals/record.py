"""A signal as every channel delivers it: Debezium's ``id``, ``type`` and ``data`` (JSON text)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from cdc.api.errors import ConnectError

__all__ = ["SignalError", "SignalRecord", "parse_signal_json"]


class SignalError(ConnectError):
    """A signal that cannot be acted on (malformed, unknown type, bad data): logged and skipped."""


@dataclass(frozen=True)
class SignalRecord:
    id: str
    type: str
    data: str
    channel: str
    channel_offset: int | None = None
    """Where the signal sits in its channel (the kafka record's offset); acknowledged once acted on."""

    def payload(self) -> dict[str, Any]:
        """``data`` parsed; an empty or null data is an empty object."""
        if not self.data or self.data.strip() in ("", "null"):
            return {}
        try:
            parsed = json.loads(self.data)
        except ValueError as exc:
            raise SignalError(f"its data is not JSON ({exc})") from exc
        if not isinstance(parsed, dict):
            raise SignalError("its data is not a JSON object")
        return parsed


def parse_signal_json(text: str, channel: str, channel_offset: int | None = None) -> SignalRecord:
    """A signal from the JSON object the file and kafka channels carry: ``{"id", "type", "data"}``."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise SignalError(f"not JSON: {exc}") from exc
    if not isinstance(doc, dict) or "type" not in doc:
        raise SignalError("not a signal object with a type")
    data = doc.get("data")
    return SignalRecord(
        id=str(doc.get("id") or ""),
        type=str(doc["type"]),
        data=json.dumps(data) if data is not None and not isinstance(data, str) else str(data or ""),
        channel=channel,
        channel_offset=channel_offset,
    )
