"""TLS contexts from the ``listeners.https.ssl.*`` / ``ssl.*`` keys, for the server and for peer requests.

Only PEM material is read (``ssl.keystore.type=PEM``, ``ssl.truststore.type=PEM``; Kafka's names for
files and inline values): Java key stores (JKS, PKCS12) are refused with the command that converts them.
The server's context requests or requires client certificates per ``ssl.client.auth`` and then trusts
only the trust store. The client context (a worker calling another: forwarding, task configs) trusts
only the configured trust store when there is one (the system's CAs otherwise), checks host names unless
``ssl.endpoint.identification.algorithm`` is empty, and presents the key store's certificate, so peers
that require client certificates accept their own group, as Connect's ``RestClient`` does.
"""

from __future__ import annotations

import contextlib
import os
import ssl
import tempfile
from collections.abc import Iterator

from cdc.api.errors import ConfigError
from cdc.worker.rest.settings import SslSettings

__all__ = ["client_context", "server_context"]

_CONVERT = (
    "convert it to PEM, e.g. `keytool -importkeystore -srckeystore ks.jks -destkeystore ks.p12 "
    "-deststoretype PKCS12` then `openssl pkcs12 -in ks.p12 -out ks.pem`"
)


def _check_types(settings: SslSettings) -> None:
    if settings.keystore_type != "PEM":
        raise ConfigError(
            f"only PEM key stores are supported; {_CONVERT}", "ssl.keystore.type", settings.keystore_type
        )
    if settings.truststore_type != "PEM":
        raise ConfigError(
            f"only PEM trust stores are supported; {_CONVERT}",
            "ssl.truststore.type",
            settings.truststore_type,
        )


@contextlib.contextmanager
def _inline_pem(chain: str, key: str) -> Iterator[tuple[str, str]]:
    # ssl can only load a key from a file: write it to a private directory, gone when loaded.
    with tempfile.TemporaryDirectory(prefix="cdc-tls-") as tmp:
        cert_path, key_path = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
        for path, text in ((cert_path, chain), (key_path, key)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="ascii") as fh:
                fh.write(text)
        yield cert_path, key_path


def _load_keystore(context: ssl.SSLContext, settings: SslSettings) -> None:
    try:
        if settings.keystore_location:
            context.load_cert_chain(settings.keystore_location, password=settings.key_password)
        elif settings.keystore_certificate_chain and settings.keystore_key:
            with _inline_pem(settings.keystore_certificate_chain, settings.keystore_key) as (cert, key):
                context.load_cert_chain(cert, key, password=settings.key_password)
    except (OSError, ssl.SSLError) as exc:
        where = settings.keystore_location or "ssl.keystore.certificate.chain/ssl.keystore.key"
        raise ConfigError(
            f"Cannot load the PEM key store {where} (certificate chain and private key expected): {exc}"
        ) from exc


def _load_truststore(context: ssl.SSLContext, settings: SslSettings) -> None:
    try:
        if settings.truststore_location:
            context.load_verify_locations(cafile=settings.truststore_location)
        if settings.truststore_certificates:
            context.load_verify_locations(cadata=settings.truststore_certificates)
    except (OSError, ssl.SSLError) as exc:
        where = settings.truststore_location or "ssl.truststore.certificates"
        raise ConfigError(f"Cannot load the PEM trust store {where}: {exc}") from exc


def server_context(settings: SslSettings) -> ssl.SSLContext:
    """The context of an ``https`` listener."""
    _check_types(settings)
    if not settings.has_keystore:
        raise ConfigError(
            "an https listener needs a PEM key store: listeners.https.ssl.keystore.location, or "
            "listeners.https.ssl.keystore.certificate.chain with listeners.https.ssl.keystore.key"
        )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    _load_keystore(context, settings)
    if settings.client_auth != "none":
        if not settings.has_truststore:
            raise ConfigError(
                "client certificates are checked against a trust store: set "
                "listeners.https.ssl.truststore.location (PEM)",
                "ssl.client.auth",
                settings.client_auth,
            )
        _load_truststore(context, settings)
        context.verify_mode = ssl.CERT_REQUIRED if settings.client_auth == "required" else ssl.CERT_OPTIONAL
    return context


def client_context(settings: SslSettings) -> ssl.SSLContext:
    """The context of this worker's requests to other workers' ``https`` listeners."""
    _check_types(settings)
    if settings.has_truststore:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        _load_truststore(context, settings)
    else:
        context = ssl.create_default_context()
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.check_hostname = settings.endpoint_identification
    context.verify_mode = ssl.CERT_REQUIRED
    if settings.has_keystore:
        _load_keystore(context, settings)
    return context
