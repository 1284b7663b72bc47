"""The HTTP client a worker uses to call other workers (forwarded requests, task configs to the leader).

One :class:`PeerClient` per worker, made from its REST settings: ``https`` peers are checked against the
worker's trust store (:func:`cdc.worker.rest.tls.client_context`), and the worker's own certificate is
presented. :func:`peer_client` is the client of the last REST server started in this process, for code
that has no settings at hand (the herder's task-config requests); a process runs one worker outside tests.
"""

from __future__ import annotations

import ssl
import threading
from typing import TYPE_CHECKING, Any

from cdc.worker.rest.settings import RestSettings, SslSettings

if TYPE_CHECKING:  # requests (and urllib3, charset_normalizer, idna) load with the first peer request
    import requests
    from requests.adapters import HTTPAdapter

__all__ = ["PeerClient", "peer_client", "set_peer_client"]


def _tls_adapter(context: ssl.SSLContext) -> HTTPAdapter:
    from requests.adapters import HTTPAdapter

    class _TlsAdapter(HTTPAdapter):
        """requests with our SSLContext, and without requests adding certifi's CAs to it."""

        def __init__(self, context: ssl.SSLContext) -> None:
            self._context = context
            super().__init__()

        def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
            kwargs["ssl_context"] = self._context
            super().init_poolmanager(*args, **kwargs)

        def proxy_manager_for(self, proxy: str, **kwargs: Any) -> Any:
            kwargs["ssl_context"] = self._context
            return super().proxy_manager_for(proxy, **kwargs)

        def cert_verify(self, conn: Any, url: str, verify: Any, cert: Any) -> None:
            conn.cert_reqs = "CERT_REQUIRED"
            conn.ca_certs = None
            conn.ca_cert_dir = None

    return _TlsAdapter(context)


class PeerClient:
    def __init__(self, ssl_settings: SslSettings | None = None) -> None:
        self._ssl = ssl_settings
        self._context: ssl.SSLContext | None = None
        self._local = threading.local()  # requests.Session is not thread-safe

    @classmethod
    def from_settings(cls, settings: RestSettings) -> PeerClient:
        """A worker with an ``https`` listener trusts its trust store; others use the system's CAs (their
        ``ssl.*`` keys may well be Kafka client settings in a Java key store format)."""
        https = any(x.scheme == "https" for x in [*settings.listeners, *(settings.admin_listeners or [])])
        return cls(settings.ssl if https else None)

    def _session(self) -> requests.Session:
        session: requests.Session | None = getattr(self._local, "session", None)
        if session is None:
            import requests

            session = requests.Session()
            session.trust_env = False  # peers are reached directly, not through a user's proxy settings
            if self._ssl is not None:
                if self._context is None:
                    from cdc.worker.rest.tls import client_context

                    self._context = client_context(self._ssl)
                session.mount("https://", _tls_adapter(self._context))
            self._local.session = session
        return session

    def request(self, method: str, url: str, **kwargs: Any) -> requests.Response:
        return self._session().request(method, url, **kwargs)

    def post(self, url: str, **kwargs: Any) -> requests.Response:
        return self.request("POST", url, **kwargs)


_default = PeerClient()
_default_lock = threading.Lock()


def set_peer_client(client: PeerClient) -> None:
    global _default
    with _default_lock:
        _default = client


def peer_client() -> PeerClient:
    return _default
