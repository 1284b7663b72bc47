"""Java key and trust stores (JKS, JCEKS, PKCS12) and PEM files, read into PEM for Python's clients.

Users' configurations name Java stores (``ssl.truststore.location`` with ``ssl.truststore.type=JKS``,
Debezium's ``database.ssl.truststore``…) because the JVM reads them natively. Our clients do not:
``ssl.SSLContext`` takes CA certificates as PEM text (``cadata``) but a client key only from a file,
librdkafka takes PEM strings (``ssl.ca.pem``, ``ssl.certificate.pem``, ``ssl.key.pem``), PyMySQL takes an
``SSLContext`` and mysqlclient/libmariadb only file paths. So a store is read once into PEM text
(:func:`read_truststore`, :func:`read_keystore`) and, where a file is needed, written by :class:`PemFiles`
into a private directory (0700, files 0600) that is deleted on :meth:`PemFiles.close` (or when the object
is collected, or at exit).

JKS/JCEKS are read with ``pyjks``, PKCS12 with ``cryptography``. As the JVM does since Java 9
(``keystore.type.compat``), the format is recognised from the file's content, whatever type the user
declared: a PKCS12 file named with ``type=JKS`` loads. A missing file, a wrong password or a store without
what is needed is a :class:`~cdc.errors.ConfigError` naming the key the user wrote; the password itself never
appears in a message.
"""

from __future__ import annotations

import os
import shutil
import ssl
import tempfile
import weakref
from dataclasses import dataclass
from typing import Any

from cdc.errors import ConfigError

# ``cryptography`` (about 50 modules) is imported by the functions that read a store, not by this module:
# every worker imports it (the REST client's TLS), few configure a store.

__all__ = [
    "KeyPair",
    "PemFiles",
    "StoreKeys",
    "read_keystore",
    "read_truststore",
    "ssl_context",
    "store_kind",
]

_JKS_MAGIC = b"\xfe\xed\xfe\xed"
_JCEKS_MAGIC = b"\xce\xce\xce\xce"
_HIDDEN = "[hidden]"


@dataclass(frozen=True, slots=True)
class StoreKeys:
    """The configuration keys a store came from, for error messages (e.g. ``database.ssl.truststore`` and
    ``database.ssl.truststore.password``; Kafka's ``ssl.truststore.location``/``ssl.truststore.password``)."""

    location: str
    password: str
    key_password: str | None = None  # Kafka's ssl.key.password; Debezium uses the store password


@dataclass(frozen=True, slots=True)
class KeyPair:
    """A client (or server) certificate chain and its private key, PEM; the key is unencrypted PKCS#8, so
    it must only be held in memory or in a :class:`PemFiles` file."""

    certificate_chain: str
    private_key: str

    def __repr__(self) -> str:  # never the key in a log line or a traceback's locals
        return "KeyPair(certificate_chain=…, private_key=[hidden])"


def _read_bytes(location: str, keys: StoreKeys) -> bytes:
    try:
        with open(location, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise ConfigError(f"cannot read the store: {exc.strerror or exc}", keys.location, location) from None


def _pem_cert(der: bytes) -> str:
    return ssl.DER_cert_to_PEM_cert(der)


def _wrong_password(keys: StoreKeys, what: str) -> ConfigError:
    return ConfigError(
        f"the password does not open the store {what} (wrong password, or a corrupt store)",
        keys.password,
        _HIDDEN,
    )


def _load_jks(data: bytes, password: str | None, keys: StoreKeys, location: str, decrypt: bool) -> Any:
    import jks  # pyjks: imported here so that PEM-only users never load it

    try:
        return jks.KeyStore.loads(data, password, try_decrypt_keys=decrypt)
    except jks.util.KeystoreSignatureException:
        raise _wrong_password(keys, location) from None
    except jks.util.KeystoreException as exc:
        raise ConfigError(f"not a readable JKS/JCEKS store: {exc}", keys.location, location) from None


def _load_pkcs12(data: bytes, password: str | None, keys: StoreKeys, location: str) -> Any:
    from cryptography.hazmat.primitives.serialization import pkcs12

    secret = password.encode() if password is not None else None
    try:
        return pkcs12.load_pkcs12(data, secret)
    except ValueError:
        if password is None:
            raise ConfigError(
                "the PKCS12 store is protected: set its password", keys.password, None
            ) from None
        raise _wrong_password(keys, location) from None


def _kind(data: bytes) -> str:
    if data.startswith(_JKS_MAGIC) or data.startswith(_JCEKS_MAGIC):
        return "jks"
    if data.lstrip().startswith(b"-----BEGIN"):
        return "pem"
    return "pkcs12"


def store_kind(location: str) -> str:
    """``jks`` (JKS or JCEKS), ``pkcs12`` or ``pem``, from the file's first bytes (an unreadable file:
    ``pem``; the reader then names the key)."""
    try:
        with open(location, "rb") as fh:
            return _kind(fh.read(64))
    except OSError:
        return "pem"


def _pem_certificates(data: bytes, keys: StoreKeys, location: str) -> list[str]:
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    try:
        certs = x509.load_pem_x509_certificates(data)
    except ValueError as exc:
        raise ConfigError(f"not a PEM certificate file: {exc}", keys.location, location) from None
    return [c.public_bytes(serialization.Encoding.PEM).decode("ascii") for c in certs]


def read_truststore(location: str, password: str | None, keys: StoreKeys) -> str:
    """Every certificate of a trust store (JKS, JCEKS, PKCS12 or PEM) as concatenated PEM, for
    ``SSLContext.load_verify_locations(cadata=…)`` or librdkafka's ``ssl.ca.pem``.

    As in Java, a JKS trust store opens without a password (its integrity is then not checked) and, with one,
    a wrong password is refused. Trusted certificates and the certificates of key entries are both trusted,
    as Java's TrustManagerFactory does."""
    data = _read_bytes(location, keys)
    kind = _kind(data)
    pems: list[str] = []
    if kind == "pem":
        pems = _pem_certificates(data, keys, location)
    elif kind == "jks":
        store = _load_jks(data, password, keys, location, decrypt=False)
        pems = [_pem_cert(entry.cert) for entry in store.certs.values()]
        for entry in store.private_keys.values():
            pems.extend(_pem_cert(der) for _type, der in entry.cert_chain[:1])
    else:
        from cryptography.hazmat.primitives import serialization

        bundle = _load_pkcs12(data, password, keys, location)
        certs = ([bundle.cert] if bundle.cert is not None else []) + list(bundle.additional_certs)
        pems = [c.certificate.public_bytes(serialization.Encoding.PEM).decode("ascii") for c in certs]
    if not pems:
        raise ConfigError("the trust store holds no certificate", keys.location, location)
    return "".join(pems)


def _pkcs8(key: Any) -> str:
    from cryptography.hazmat.primitives import serialization

    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode("ascii")


def _pem_keypair(data: bytes, password: str | None, keys: StoreKeys, location: str) -> KeyPair:
    # a PEM key store: the certificate chain and the private key in one file (Kafka's ssl.keystore.type=PEM)
    from cryptography.hazmat.primitives import serialization

    try:
        key = serialization.load_pem_private_key(data, password.encode() if password else None)
    except (TypeError, ValueError) as exc:
        if "password" in str(exc).lower() or "decrypt" in str(exc).lower():
            raise _wrong_password(keys, location) from None
        raise ConfigError(
            f"no readable private key in the PEM file: {exc}", keys.location, location
        ) from None
    chain = "".join(_pem_certificates(data, keys, location))
    return KeyPair(chain, _pkcs8(key))


def read_keystore(
    location: str, password: str | None, keys: StoreKeys, key_password: str | None = None
) -> KeyPair:
    """The one private key of a key store (JKS, JCEKS, PKCS12 or PEM) and its certificate chain.

    ``key_password`` (Kafka's ``ssl.key.password``) opens the key when it differs from the store's password.
    A store with no private key, or with several (we cannot choose the alias the JVM's key manager would),
    is refused."""
    from cryptography.hazmat.primitives import serialization

    data = _read_bytes(location, keys)
    kind = _kind(data)
    if kind == "pem":
        return _pem_keypair(data, key_password or password, keys, location)
    if kind == "jks":
        import jks

        store = _load_jks(data, password, keys, location, decrypt=False)
        entries = list(store.private_keys.values())
        _one_key(len(entries), keys, location)
        entry = entries[0]
        try:
            entry.decrypt(key_password if key_password is not None else password)
        except jks.util.DecryptionFailureException:
            raise _wrong_password(
                StoreKeys(keys.location, keys.key_password or keys.password), f"{location}'s key"
            ) from None
        key = serialization.load_der_private_key(entry.pkey_pkcs8, None)
        chain = "".join(_pem_cert(der) for _type, der in entry.cert_chain)
        return KeyPair(chain, _pkcs8(key))
    bundle = _load_pkcs12(data, password, keys, location)
    _one_key(0 if bundle.key is None else 1, keys, location)
    certs = ([bundle.cert] if bundle.cert is not None else []) + list(bundle.additional_certs)
    chain = "".join(c.certificate.public_bytes(serialization.Encoding.PEM).decode("ascii") for c in certs)
    return KeyPair(chain, _pkcs8(bundle.key))


def _one_key(count: int, keys: StoreKeys, location: str) -> None:
    if count == 0:
        raise ConfigError("the key store holds no private key", keys.location, location)
    if count > 1:
        raise ConfigError(
            f"the key store holds {count} private keys; keep only the client's", keys.location, location
        )


def _remove(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)


class PemFiles:
    """PEM text written to files for clients that only take paths (libmariadb, ``load_cert_chain``).

    The files live in a fresh directory only the process's user can enter (0700; files 0600, created
    exclusively); :meth:`close` deletes it, as does garbage collection or interpreter exit."""

    def __init__(self, prefix: str = "cdc-tls-") -> None:
        self.directory = tempfile.mkdtemp(prefix=prefix)
        self._finalizer = weakref.finalize(self, _remove, self.directory)

    def write(self, name: str, text: str) -> str:
        """Writes ``text`` to a new file ``name`` in the directory; returns its path."""
        path = os.path.join(self.directory, name)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(text)
        return path

    def close(self) -> None:
        self._finalizer()

    @property
    def closed(self) -> bool:
        return not self._finalizer.alive

    def __enter__(self) -> PemFiles:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def ssl_context(
    cadata: str | None,
    keypair: KeyPair | None,
    *,
    verify: bool,
    check_hostname: bool,
) -> ssl.SSLContext:
    """A client context: trusts ``cadata`` (the system's CAs when None), presents ``keypair``.

    ``verify=False`` encrypts without checking the peer (Debezium's ``required``/``preferred``)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.check_hostname = verify and check_hostname
    if verify:
        context.verify_mode = ssl.CERT_REQUIRED
        if cadata is not None:
            context.load_verify_locations(cadata=cadata)
        else:
            context.load_default_certs(ssl.Purpose.SERVER_AUTH)
    else:
        context.verify_mode = ssl.CERT_NONE
    if keypair is not None:
        # ssl loads a key only from a file: it lives for the call, in a private directory
        with PemFiles() as files:
            cert = files.write("cert.pem", keypair.certificate_chain)
            key = files.write("key.pem", keypair.private_key)
            context.load_cert_chain(cert, key)
    return context
