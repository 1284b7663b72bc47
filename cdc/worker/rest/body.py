"""Request bodies: JSON parsing and the coercions Jackson applies to Connect's entity types.

Connect binds config bodies to ``Map<String, String>``; Jackson turns JSON numbers and booleans into
their text (``1`` → ``"1"``, ``1.50`` → ``"1.50"``, ``true`` → ``"true"``) and refuses objects and arrays.
Numbers are therefore parsed as their source text when a string map is expected.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request

from cdc.worker.rest.errors import RestError

__all__ = ["as_object", "as_string_map", "read_json"]

_JSON_TYPES = ("application/json", "text/json")


def _check_content_type(request: Request) -> None:
    # Jersey answers 415 to a body that is not declared JSON (curl -d without -H sends a form type).
    content_type = request.headers.get("content-type")
    if content_type is None:
        return
    media = content_type.split(";", 1)[0].strip().lower()
    if media and media not in _JSON_TYPES and not media.endswith("+json"):
        raise RestError(415, "HTTP 415 Unsupported Media Type")


async def read_json(request: Request, *, numbers_as_text: bool = False, required: bool = True) -> Any:
    """The parsed body; 400 on malformed JSON, 415 on a non-JSON content type."""
    raw = await request.body()
    if not raw.strip():
        if required:
            raise RestError(400, "Request body is missing; a JSON entity is required")
        return None
    _check_content_type(request)
    return parse_json(raw, numbers_as_text=numbers_as_text)


def parse_json(raw: bytes, *, numbers_as_text: bool = False) -> Any:
    try:
        text = raw.decode("utf-8")
        if numbers_as_text:
            return json.loads(text, parse_int=str, parse_float=str, parse_constant=_reject_constant)
        return json.loads(text, parse_constant=_reject_constant)
    except UnicodeDecodeError as e:
        raise RestError(400, f"Invalid UTF-8 in request body: {e}") from None
    except ValueError as e:
        raise RestError(400, f"Unrecognized token in request body, malformed JSON: {e}") from None
    except RecursionError:
        raise RestError(400, "Request body is nested too deeply") from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"Non-standard token '{name}'")


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "Object value (token `JsonToken.START_OBJECT`)"
    if isinstance(value, list):
        return "Array value (token `JsonToken.START_ARRAY`)"
    if value is None:
        return "null value"
    return f"{type(value).__name__} value"


def as_object(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise RestError(400, f"Cannot deserialize value of type `{what}` from {_kind(value)}")
    return value


def _scalar_text(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return str(value)
    return None


def as_string_map(value: Any, *, allow_null: bool = False) -> dict[str, Any]:
    """A flat ``{str: str}`` map (``{str: str | None}`` with ``allow_null``), scalars stringified."""
    obj = as_object(value, "java.util.Map<java.lang.String,java.lang.String>")
    out: dict[str, Any] = {}
    for key, item in obj.items():
        if item is None:
            if not allow_null:
                raise RestError(400, f"Configuration value for '{key}' must not be null")
            out[key] = None
            continue
        text = _scalar_text(item)
        if text is None:
            raise RestError(
                400, f"Cannot deserialize value of type `java.lang.String` from {_kind(item)} for '{key}'"
            )
        out[key] = text
    return out
