"""TLS contexts from the ``listeners.https.ssl.*`` / ``ssl.*`` keys, for the server and for peer requests.

Key and trust stores are PEM files, inline PEM (Kafka's ``ssl.keystore.certificate.chain`` and
``ssl.keystore.key``, ``ssl.truststore.certificates``) or Java stores (JKS, JCEKS, PKCS12) read with
:mod:`cdc.keystores` (``ssl.keystore.password``, ``ssl.key.password``, ``ssl.truststore.password``); the
file's content tells the format, as in the JVM since Java 9, whatever ``ssl.keystore.type`` declares. A
store that is missing or does not open is a :class:`ConfigError` naming the key, never the password.
The server's context requests or requires client certificates per ``ssl.client.auth`` and then trusts
only the trust store. The client context (a worker calling another: forwarding, task configs) trusts
only the configured trust store when there is one (the system's CAs otherwise), checks host names unless
``ssl.endpoint.identification.algorithm`` is empty, and presents the key store's certificate, so peers
that require client certificates accept their own group, as Connect's ``RestClient`` does.
"""

from __future__ import annotations

import ssl

from cdc.api.errors import ConfigError
from cdc.keystores import KeyPair, PemFiles, StoreKeys, read_keystore, read_truststore
from cdc.worker.rest.settings import SslSettings

__all__ = ["client_context", "server_context"]


def _keypair(settings: SslSettings) -> KeyPair:
    if settings.keystore_location:
        return read_keystore(
            settings.keystore_location,
            settings.keystore_password,
            StoreKeys(
                settings.key("keystore.location"),
                settings.key("keystore.password"),
                settings.key("key.password"),
            ),
            settings.key_password,
        )
    assert settings.keystore_certificate_chain and settings.keystore_key
    return KeyPair(settings.keystore_certificate_chain, settings.keystore_key)


def _load_keystore(context: ssl.SSLContext, settings: SslSettings) -> None:
    pair = _keypair(settings)
    # ssl loads a key only from a file: it lives for the call, in a private directory
    with PemFiles() as files:
        cert, key = files.write("cert.pem", pair.certificate_chain), files.write("key.pem", pair.private_key)
        try:
            context.load_cert_chain(cert, key, password=settings.key_password)
        except (OSError, ssl.SSLError) as exc:
            where = settings.keystore_location or "ssl.keystore.certificate.chain/ssl.keystore.key"
            raise ConfigError(
                f"Cannot load the key store {where} (certificate chain and private key expected): {exc}"
            ) from exc


def _load_truststore(context: ssl.SSLContext, settings: SslSettings) -> None:
    if settings.truststore_location:
        cadata = read_truststore(
            settings.truststore_location,
            settings.truststore_password,
            StoreKeys(settings.key("truststore.location"), settings.key("truststore.password")),
        )
        context.load_verify_locations(cadata=cadata)
    if settings.truststore_certificates:
        try:
            context.load_verify_locations(cadata=settings.truststore_certificates)
        except (OSError, ssl.SSLError) as exc:
            raise ConfigError(f"Cannot load the PEM trust store ssl.truststore.certificates: {exc}") from exc


def server_context(settings: SslSettings) -> ssl.SSLContext:
    """The context of an ``https`` listener."""
    if not settings.has_keystore:
        raise ConfigError(
            "an https listener needs a key store: listeners.https.ssl.keystore.location, or "
            "listeners.https.ssl.keystore.certificate.chain with listeners.https.ssl.keystore.key"
        )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    _load_keystore(context, settings)
    if settings.client_auth != "none":
        if not settings.has_truststore:
            raise ConfigError(
                "client certificates are checked against a trust store: set "
                "listeners.https.ssl.truststore.location",
                "ssl.client.auth",
                settings.client_auth,
            )
        _load_truststore(context, settings)
        context.verify_mode = ssl.CERT_REQUIRED if settings.client_auth == "required" else ssl.CERT_OPTIONAL
    return context


def client_context(settings: SslSettings) -> ssl.SSLContext:
    """The context of this worker's requests to other workers' ``https`` listeners."""
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
