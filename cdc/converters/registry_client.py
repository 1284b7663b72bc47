"""A small Confluent Schema Registry client: register, look up and fetch schemas, with caches.

Endpoints (Confluent's REST API, also served by Apicurio under ``/apis/ccompat/v7``):

* ``POST /subjects/{subject}/versions`` ``{"schema": "<avro json>"}`` → ``{"id": N}`` (register)
* ``POST /subjects/{subject}`` → ``{"subject", "version", "id", "schema"}`` (look up, no register)
* ``GET /schemas/ids/{id}`` → ``{"schema": "<avro json>"}``

``schema.registry.url`` may list several URLs separated by commas; a request that cannot connect moves
on to the next one. Credentials come from ``basic.auth.credentials.source``: ``URL`` (user info in the
URL, the default) or ``USER_INFO`` (``basic.auth.user.info`` = ``user:password``). Over ``https`` the
system's CAs are trusted unless the converter's ``schema.registry.ssl.truststore.*`` names a trust store
(JKS, PKCS12 or PEM); ``schema.registry.ssl.keystore.*`` adds a client certificate.

Errors: a 4xx answer is a :class:`DataError` carrying the registry's message; no answer, or a 5xx, is a
:class:`RetriableError`.
"""

from __future__ import annotations

import base64
import ssl
import threading
import urllib.parse
from collections.abc import Callable, Sequence
from typing import Any

import orjson
from requests.adapters import HTTPAdapter

from cdc.api.errors import DataError, RetriableError

__all__ = ["SchemaRegistryClient", "Transport", "requests_transport"]

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"

Transport = Callable[[str, str, bytes | None, dict[str, str]], tuple[int, bytes]]
"""``(method, url, body, headers) -> (status, body)``; raises ``OSError`` when it cannot connect."""


def requests_transport(timeout: float = 30.0, context: ssl.SSLContext | None = None) -> Transport:
    """Requests over one session; ``context`` (the registry's trust and key stores, see
    :func:`registry_ssl_context`) replaces the system's CAs for ``https`` URLs."""
    import requests

    session = requests.Session()
    if context is not None:
        session.mount("https://", _ContextAdapter(context))

    def send(method: str, url: str, body: bytes | None, headers: dict[str, str]) -> tuple[int, bytes]:
        try:
            response = session.request(method, url, data=body, headers=headers, timeout=timeout)
        except requests.RequestException as exc:
            raise OSError(str(exc)) from exc
        return response.status_code, response.content

    return send


class _ContextAdapter(HTTPAdapter):
    """An adapter whose connections use one ``ssl.SSLContext`` (trust, client certificate, host checks)."""

    def __init__(self, context: ssl.SSLContext) -> None:
        self._context = context
        super().__init__()

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        kwargs["ssl_context"] = self._context
        if not self._context.check_hostname:  # ssl.endpoint.identification.algorithm= (empty)
            kwargs["assert_hostname"] = False
        super().init_poolmanager(*args, **kwargs)


class SchemaRegistryClient:
    def __init__(
        self,
        urls: str | Sequence[str],
        *,
        user_info: str | None = None,
        transport: Transport | None = None,
    ) -> None:
        if isinstance(urls, str):
            urls = [u.strip() for u in urls.split(",") if u.strip()]
        if not urls:
            raise DataError("schema.registry.url must name at least one URL")
        self._urls: list[str] = []
        self._auth: str | None = None
        for url in urls:
            parts = urllib.parse.urlsplit(url)
            if parts.username is not None and self._auth is None:
                self._auth = (
                    f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
                )
            netloc = parts.hostname or ""
            if parts.port:
                netloc += f":{parts.port}"
            self._urls.append(urllib.parse.urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", "")))
        if user_info:
            self._auth = user_info
        self._transport = transport or requests_transport()
        self._ids: dict[tuple[str, str], int] = {}
        self._schemas: dict[int, str] = {}
        self._lock = threading.Lock()

    @property
    def urls(self) -> list[str]:
        return list(self._urls)

    def _request(self, method: str, path: str, payload: Any = None) -> Any:
        headers = {"Accept": CONTENT_TYPE, "Content-Type": CONTENT_TYPE}
        if self._auth is not None:
            headers["Authorization"] = "Basic " + base64.b64encode(self._auth.encode()).decode("ascii")
        body = orjson.dumps(payload) if payload is not None else None
        last: Exception | None = None
        for base in self._urls:
            try:
                status, content = self._transport(method, base + path, body, headers)
            except OSError as exc:
                last = exc
                continue
            if status >= 500:
                raise RetriableError(f"Schema registry {base} answered {status}: {content[:200]!r}")
            try:
                answer = orjson.loads(content) if content else None
            except orjson.JSONDecodeError as exc:
                raise DataError(
                    f"Schema registry {base} answered {status} with non-JSON {content[:200]!r}"
                ) from exc
            if status == 404 and _route_missing(answer) and urllib.parse.urlsplit(base).path in ("", "/"):
                # Apicurio Registry serves the Confluent API under /apis/ccompat/v7, not at the root:
                # users' configs name the root (http://localhost:8081), so try there once and keep it.
                moved = base.rstrip("/") + APICURIO_CCOMPAT
                try:
                    status2, content2 = self._transport(method, moved + path, body, headers)
                except OSError:
                    status2, content2 = 404, b""
                if status2 != 404 or not _route_missing(_json_or_none(content2)):
                    self._urls = [moved if u == base else u for u in self._urls]
                    status, content = status2, content2
                    answer = _json_or_none(content)
                    if status >= 500:
                        raise RetriableError(f"Schema registry {moved} answered {status}: {content[:200]!r}")
            if status >= 400:
                message = answer.get("message") if isinstance(answer, dict) else answer
                code = answer.get("error_code") if isinstance(answer, dict) else status
                raise DataError(f"{message}; error code: {code}")
            return answer
        raise RetriableError(f"No schema registry reachable at {', '.join(self._urls)}: {last}")

    def register(self, subject: str, schema: str) -> int:
        """The id of ``schema`` under ``subject``, registering it if new."""
        key = (subject, schema)
        cached = self._ids.get(key)
        if cached is not None:
            return cached
        answer = self._request(
            "POST", f"/subjects/{urllib.parse.quote(subject, safe='')}/versions", {"schema": schema}
        )
        schema_id = int(answer["id"])
        with self._lock:
            self._ids[key] = schema_id
            self._schemas.setdefault(schema_id, schema)
        return schema_id

    def lookup(self, subject: str, schema: str) -> int:
        """The id of ``schema`` already registered under ``subject`` (no registration)."""
        key = (subject, schema)
        cached = self._ids.get(key)
        if cached is not None:
            return cached
        answer = self._request(
            "POST", f"/subjects/{urllib.parse.quote(subject, safe='')}", {"schema": schema}
        )
        schema_id = int(answer["id"])
        with self._lock:
            self._ids[key] = schema_id
            self._schemas.setdefault(schema_id, schema)
        return schema_id

    def schema_by_id(self, schema_id: int) -> str:
        """The schema text registered under ``schema_id``."""
        cached = self._schemas.get(schema_id)
        if cached is not None:
            return cached
        answer = self._request("GET", f"/schemas/ids/{schema_id}")
        text = str(answer["schema"])
        with self._lock:
            self._schemas[schema_id] = text
        return text


APICURIO_CCOMPAT = "/apis/ccompat/v7"


def _json_or_none(content: bytes) -> Any:
    try:
        return orjson.loads(content) if content else None
    except orjson.JSONDecodeError:
        return None


def _route_missing(answer: Any) -> bool:
    """A 404 for an unknown route (a Confluent registry says 40401/40402/40403 for unknown subjects)."""
    if isinstance(answer, dict):
        return answer.get("error_code") in (None, 404)
    return True
