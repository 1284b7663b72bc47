"""Secrets the worker holds never leave it through logs, status traces or stored task configs.

What counts as a secret value (recorded in one process-wide :class:`SecretRegistry`):

* every value a config provider returned for a ``${alias:path:key}`` placeholder (file, dir, env …),
  in the worker's properties and in every connector config the worker resolves;
* the value of every key that is a PASSWORD by declaration or looks secret by name (``*.password``,
  ``sasl.jaas.config``, ``*secret*``; :func:`cdc.config.mask_secrets`' rule), and the secret options of a
  JAAS line (``password``, ``clientSecret`` …, quoted either way or not, as written and unescaped:
  :func:`jaas_secrets`), and the value of every key a connector's ``custom.sanitize.pattern`` matches
  (Debezium's rule, :mod:`cdc.config.sanitize`).

Values shorter than :data:`MIN_SECRET_LENGTH` are not recorded: masking ``"1"`` or ``"true"`` in every
line would make the logs useless and would not hide such a password anyway.

Where they are masked:

* logs: :class:`RedactingFilter` on the root handlers (:func:`install_log_redaction`) rewrites the message
  and the exception text of every record to show ``[hidden]`` instead;
* status traces: :func:`format_trace` is the one way the worker turns an exception into the ``trace`` of
  a FAILED connector or task (what the status topic and ``GET …/status`` carry);
* REST answers that show what the worker did with a resolved config — status, active topics, validate,
  every error message — go through :func:`redact_json` (``cdc.worker.rest``), so a placeholder written
  where a value shows (``"topic": "${file:/etc/passwd:root}"``) does not carry the file back;
* task configs: :func:`reverse_transform` puts placeholders back into the task configs a connector
  generated from its resolved config before they are stored (Connect's ``Worker.reverseTransform``), so
  the config topic and ``GET …/tasks`` hold ``${file:…}``, never the value. Connector configs are stored
  as submitted, placeholders included, and resolved only in memory when a connector or task starts.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import traceback
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from cdc.config import Password, mask_secrets
from cdc.config.sanitize import sanitized_keys
from cdc.worker.config_providers import VARIABLE_PATTERN

__all__ = [
    "MIN_SECRET_LENGTH",
    "RedactingFilter",
    "SecretRegistry",
    "format_trace",
    "install_log_redaction",
    "jaas_secrets",
    "jdbc_url_secrets",
    "redact",
    "redact_json",
    "register_config_secrets",
    "reverse_transform",
    "secrets",
    "tracking_resolver",
]

MIN_SECRET_LENGTH = 4
HIDDEN = Password.HIDDEN
# A JAAS option that holds a secret (password, clientSecret …), its value as written: "…", '…' or a word.
_JAAS_SECRET = re.compile(
    r"""([\w$-]*(?:password|secret|credential)[\w$-]*)\s*=\s*"""
    r"""(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|([^\s;"']+))""",
    re.I,
)
_JAAS_SECRET_NAME = re.compile("password|secret|credential", re.I)
_URL_SECRET = re.compile(r"[?&;]([^=&;]*(?:password|secret))=([^&;]*)", re.I)
_URL_USERINFO = re.compile(r"jdbc:[a-z0-9]+://[^/@?:]*:([^@/?]*)@", re.I)


class SecretRegistry:
    """The secret values known to this process; :meth:`redact` hides them in any text."""

    def __init__(self) -> None:
        self._values: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self._lock = threading.Lock()

    def add(self, values: Iterable[str]) -> None:
        fresh = set()
        for value in values:
            if not isinstance(value, str) or len(value) < MIN_SECRET_LENGTH:
                continue
            fresh.add(value)
            # The same value as repr() and JSON write it (a trace shows strings in those forms).
            fresh.add(repr(value)[1:-1])
            fresh.add(json.dumps(value)[1:-1])
        fresh = {v for v in fresh if len(v) >= MIN_SECRET_LENGTH}
        with self._lock:
            if fresh <= self._values:
                return
            self._values |= fresh
            ordered = sorted(self._values, key=len, reverse=True)  # longest first: no partial masks
            self._pattern = re.compile("|".join(re.escape(v) for v in ordered))

    def __contains__(self, value: object) -> bool:
        return value in self._values

    def __bool__(self) -> bool:
        return self._pattern is not None

    def redact(self, text: str) -> str:
        pattern = self._pattern
        return text if pattern is None else pattern.sub(HIDDEN, text)

    def clear(self) -> None:
        """For tests."""
        with self._lock:
            self._values.clear()
            self._pattern = None


secrets = SecretRegistry()


def redact(text: str) -> str:
    return secrets.redact(text)


def redact_json(value: Any) -> Any:
    """``value`` (a JSON answer) with every known secret masked in its strings, keys included."""
    if not secrets:
        return value
    if isinstance(value, str):
        return secrets.redact(value)
    if isinstance(value, dict):
        return {redact_json(k): redact_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_json(item) for item in value]
    return value


def format_trace(exc: BaseException) -> str:
    """The stack trace of ``exc`` as a status record carries it, secrets masked."""
    return redact("".join(traceback.format_exception(exc)))


def register_config_secrets(raw: Mapping[str, Any], resolved: Mapping[str, Any] | None = None) -> None:
    """Record the secrets of one config: provider values (``raw`` vs ``resolved``) and secret-named keys."""
    resolved = raw if resolved is None else resolved
    found: list[str] = []
    custom = sanitized_keys(resolved)  # custom.sanitize.pattern: more keys masked (cdc.config.sanitize)
    for key, value in resolved.items():
        if not isinstance(value, str):
            value = value.value() if isinstance(value, Password) else None
            if value is None:
                continue
        raw_value = raw.get(key)
        if isinstance(raw_value, str) and raw_value != value and VARIABLE_PATTERN.search(raw_value):
            found.extend(_provided_parts(raw_value, value))
        if key in custom or mask_secrets({key: value}).get(key) == HIDDEN:
            found.append(value)
            found.extend(jaas_secrets(value))
        elif value.startswith("jdbc:"):
            found.extend(jdbc_url_secrets(value))
    secrets.add(found)


def jdbc_url_secrets(url: str) -> list[str]:
    """The passwords a JDBC URL carries (``password``, ``sslpassword``, ``trustCertificateKeyStorePassword``,
    ``keyStorePassword`` …, and ``user:password@``), as written and decoded: ``connection.url`` is a plain
    STRING key, so its secrets are recorded by property."""
    from urllib.parse import unquote, unquote_plus

    found: list[str] = []
    for match in _URL_SECRET.finditer(url):
        written = match.group(2)
        found.extend({written, unquote_plus(written)})
    authority = _URL_USERINFO.match(url)
    if authority:
        found.extend({authority.group(1), unquote(authority.group(1))})
    return found


def jaas_secrets(value: str) -> list[str]:
    """The secret options of a JAAS line (``password``, ``clientSecret`` …): each as written (escapes and
    all, as the line shows it) and as Kafka's parser reads it (what the client sends, which a message may
    quote). Also for a value that is no valid JAAS line: whatever looks like such an option."""
    from cdc.api.errors import ConfigError
    from cdc.kafka.jaas import parse_jaas

    found = [next(g for g in m.groups()[1:] if g is not None) for m in _JAAS_SECRET.finditer(value)]
    try:
        options = parse_jaas(value).options
    except ConfigError:
        return found
    found.extend(v for k, v in options.items() if _JAAS_SECRET_NAME.search(k))
    return found


def _provided_parts(raw_value: str, value: str) -> list[str]:
    """The substrings of ``value`` the placeholders of ``raw_value`` stood for (the whole when unsure)."""
    pieces = VARIABLE_PATTERN.split(raw_value)
    # split() interleaves the groups of each match; keep only the literal text between placeholders.
    literals = pieces[:: VARIABLE_PATTERN.groups + 1]
    regex = "^" + "(.*?)".join(re.escape(x) for x in literals) + "$"
    match = re.match(regex, value, re.S)
    if match is None:
        return [value]
    return [g for g in match.groups() if g]


Resolver = Callable[[dict[str, str]], dict[str, str]]


def tracking_resolver(resolve: Resolver) -> Resolver:
    """``resolve`` (a config provider transform) that records what it resolves as secrets."""

    def resolve_and_record(config: dict[str, str]) -> dict[str, str]:
        resolved = resolve(config)
        register_config_secrets(config, resolved)
        return resolved

    return resolve_and_record


def reverse_transform(
    raw_connector_config: Mapping[str, str],
    resolved_connector_config: Mapping[str, str],
    task_configs: list[dict[str, str]],
) -> list[dict[str, str]]:
    """Task configs with config provider placeholders put back where the connector copied their values.

    As Connect's ``Worker.reverseTransform``: every key whose raw connector value holds a placeholder gets
    that raw value. Beyond it, a task value equal to a resolved placeholder value under another key gets
    that key's raw value too (it resolves to the same text when the task starts).
    """
    raw_by_key = {
        k: v for k, v in raw_connector_config.items() if isinstance(v, str) and VARIABLE_PATTERN.search(v)
    }
    raw_by_value = {}
    for key, raw in raw_by_key.items():
        value = resolved_connector_config.get(key)
        if isinstance(value, str) and value != raw and len(value) >= MIN_SECRET_LENGTH:
            raw_by_value[value] = raw
    out = []
    for config in task_configs:
        fixed = dict(config)
        for key, value in config.items():
            if value in raw_by_value:
                fixed[key] = raw_by_value[value]
        fixed.update(raw_by_key)
        out.append(fixed)
    return out


class RedactingFilter(logging.Filter):
    """Masks known secrets in a record's message and exception text (install it on handlers)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not secrets:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a bad format string is the logging module's to report
            return True
        masked = secrets.redact(message)
        if masked != message:
            record.msg, record.args = masked, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = secrets.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = secrets.redact(record.stack_info)
        return True


def install_log_redaction(logger: logging.Logger | None = None) -> None:
    """Add a :class:`RedactingFilter` to each handler of ``logger`` (the root logger) that lacks one."""
    for handler in (logger or logging.getLogger()).handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())
