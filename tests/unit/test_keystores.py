"""cdc.keystores: JKS, PKCS12 and PEM stores made by the JDK's keytool and openssl, read into PEM."""

from __future__ import annotations

import os
import socket
import ssl
import stat
import subprocess
import threading
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from cdc.errors import ConfigError
from cdc.keystores import KeyPair, PemFiles, StoreKeys, read_keystore, read_truststore, ssl_context

# keytool (the JDK, which Spark needs too) and openssl make the stores: a machine without them fails here

TRUST = StoreKeys("database.ssl.truststore", "database.ssl.truststore.password")
KEYS = StoreKeys("database.ssl.keystore", "database.ssl.keystore.password")


def _run(*args: str) -> None:
    subprocess.run(args, check=True, capture_output=True)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CA, a server certificate for localhost signed by it, a client key pair, and stores of them."""
    d = tmp_path_factory.mktemp("pki")
    _run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=test CA",
         "-keyout", str(d / "ca.key"), "-out", str(d / "ca.pem"))  # fmt: skip
    for name in ("server", "client"):
        _run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={name}",
             "-keyout", str(d / f"{name}.key"), "-out", str(d / f"{name}.csr"))  # fmt: skip
        ext = d / f"{name}.ext"
        ext.write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
        _run("openssl", "x509", "-req", "-in", str(d / f"{name}.csr"), "-CA", str(d / "ca.pem"),
             "-CAkey", str(d / "ca.key"), "-CAcreateserial", "-days", "2", "-extfile", str(ext),
             "-out", str(d / f"{name}.pem"))  # fmt: skip
    for kind in ("JKS", "PKCS12"):
        _run("keytool", "-importcert", "-noprompt", "-alias", "ca", "-file", str(d / "ca.pem"),
             "-keystore", str(d / f"trust.{kind.lower()}"), "-storetype", kind,
             "-storepass", "trustpass")  # fmt: skip
    # the client's key: openssl makes a PKCS12, keytool converts it to JKS (as users do)
    _run("openssl", "pkcs12", "-export", "-in", str(d / "client.pem"), "-inkey", str(d / "client.key"),
         "-certfile", str(d / "ca.pem"), "-name", "client", "-passout", "pass:keypass",
         "-out", str(d / "client.pkcs12"))  # fmt: skip
    _run("keytool", "-importkeystore", "-noprompt", "-srckeystore", str(d / "client.pkcs12"),
         "-srcstoretype", "PKCS12", "-srcstorepass", "keypass", "-destkeystore", str(d / "client.jks"),
         "-deststoretype", "JKS", "-deststorepass", "keypass")  # fmt: skip
    # a JKS whose key password differs from the store password (Kafka's ssl.key.password)
    _run("keytool", "-importkeystore", "-noprompt", "-srckeystore", str(d / "client.pkcs12"),
         "-srcstoretype", "PKCS12", "-srcstorepass", "keypass", "-destkeystore", str(d / "client2.jks"),
         "-deststoretype", "JKS", "-deststorepass", "storepass", "-destkeypass", "otherkeypass",
         "-srcalias", "client", "-destalias", "client")  # fmt: skip
    (d / "client-combined.pem").write_text((d / "client.pem").read_text() + (d / "client.key").read_text())
    return d


def _subjects(pem: str) -> list[str]:
    return [c.subject.rfc4514_string() for c in x509.load_pem_x509_certificates(pem.encode())]


@pytest.mark.parametrize("kind", ["jks", "pkcs12"])
def test_truststore_yields_the_ca(pki: Path, kind: str) -> None:
    pem = read_truststore(str(pki / f"trust.{kind}"), "trustpass", TRUST)
    assert _subjects(pem) == ["CN=test CA"]
    ca = x509.load_pem_x509_certificate((pki / "ca.pem").read_bytes())
    assert pem == ca.public_bytes(serialization.Encoding.PEM).decode()


def test_jks_truststore_opens_without_password_as_in_java(pki: Path) -> None:
    assert _subjects(read_truststore(str(pki / "trust.jks"), None, TRUST)) == ["CN=test CA"]


def test_pem_truststore(pki: Path) -> None:
    assert _subjects(read_truststore(str(pki / "ca.pem"), None, TRUST)) == ["CN=test CA"]


@pytest.mark.parametrize("kind", ["jks", "pkcs12"])
def test_wrong_truststore_password_names_the_password_key(pki: Path, kind: str) -> None:
    with pytest.raises(ConfigError) as err:
        read_truststore(str(pki / f"trust.{kind}"), "nottheone", TRUST)
    assert err.value.name == "database.ssl.truststore.password"
    assert "wrong password" in str(err.value)
    assert "nottheone" not in str(err.value)


def test_missing_store_names_the_location_key(pki: Path) -> None:
    with pytest.raises(ConfigError) as err:
        read_truststore(str(pki / "absent.jks"), "trustpass", TRUST)
    assert err.value.name == "database.ssl.truststore"
    assert "No such file" in str(err.value)


def test_not_a_store(pki: Path) -> None:
    with pytest.raises(ConfigError) as err:
        read_truststore(str(pki / "server.ext"), "x", TRUST)
    assert err.value.name in ("database.ssl.truststore", "database.ssl.truststore.password")


@pytest.mark.parametrize("name", ["client.jks", "client.pkcs12", "client-combined.pem"])
def test_keystore_yields_key_and_chain(pki: Path, name: str) -> None:
    pair = read_keystore(str(pki / name), "keypass" if "pem" not in name else None, KEYS)
    assert _subjects(pair.certificate_chain)[0] == "CN=client"
    assert pair.private_key.startswith("-----BEGIN PRIVATE KEY-----")
    assert "PRIVATE KEY" not in repr(pair) and "hidden" in repr(pair)


def test_keystore_with_its_own_key_password(pki: Path) -> None:
    keys = StoreKeys("ssl.keystore.location", "ssl.keystore.password", "ssl.key.password")
    pair = read_keystore(str(pki / "client2.jks"), "storepass", keys, key_password="otherkeypass")
    assert _subjects(pair.certificate_chain)[0] == "CN=client"
    with pytest.raises(ConfigError) as err:
        read_keystore(str(pki / "client2.jks"), "storepass", keys)
    assert err.value.name == "ssl.key.password"


@pytest.mark.honours("database.ssl.keystore", "database.ssl.keystore.password")
@pytest.mark.parametrize("name", ["client.jks", "client.pkcs12"])
def test_wrong_keystore_password(pki: Path, name: str) -> None:
    with pytest.raises(ConfigError) as err:
        read_keystore(str(pki / name), "wrong", KEYS)
    assert err.value.name == "database.ssl.keystore.password"


def test_a_trust_store_is_no_key_store(pki: Path) -> None:
    with pytest.raises(ConfigError, match="no private key") as err:
        read_keystore(str(pki / "trust.jks"), "trustpass", KEYS)
    assert err.value.name == "database.ssl.keystore"


def test_pem_files_are_private_and_deleted_on_close() -> None:
    files = PemFiles()
    path = files.write("key.pem", "secret")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(files.directory).st_mode) == 0o700
    files.close()
    assert not os.path.exists(files.directory) and files.closed
    with PemFiles() as other:
        directory = other.directory
    assert not os.path.exists(directory)


def test_context_from_stores_completes_a_mutual_handshake(pki: Path) -> None:
    """The trust and key stores, read into a context, verify a real server and authenticate to it."""
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(str(pki / "server.pem"), str(pki / "server.key"))
    server.load_verify_locations(str(pki / "ca.pem"))
    server.verify_mode = ssl.CERT_REQUIRED
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    seen: list[object] = []

    def serve() -> None:
        conn, _ = listener.accept()
        with server.wrap_socket(conn, server_side=True) as tls:
            seen.append(tls.getpeercert())
            tls.sendall(b"ok")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    cadata = read_truststore(str(pki / "trust.jks"), "trustpass", TRUST)
    pair: KeyPair = read_keystore(str(pki / "client.jks"), "keypass", KEYS)
    context = ssl_context(cadata, pair, verify=True, check_hostname=True)
    with (
        socket.create_connection(("127.0.0.1", port)) as raw,
        context.wrap_socket(raw, server_hostname="localhost") as tls,
    ):
        assert tls.recv(2) == b"ok"
    thread.join(5)
    listener.close()
    assert seen and seen[0]["subject"] == ((("commonName", "client"),),)  # type: ignore[index]


def test_context_refuses_a_host_name_mismatch(pki: Path) -> None:
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(str(pki / "server.pem"), str(pki / "server.key"))
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve() -> None:
        conn, _ = listener.accept()
        try:
            server.wrap_socket(conn, server_side=True).close()
        except (ssl.SSLError, OSError):
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    context = ssl_context(read_truststore(str(pki / "ca.pem"), None, TRUST), None, verify=True,
                          check_hostname=True)  # fmt: skip
    with (
        socket.create_connection(("127.0.0.1", port)) as raw,
        pytest.raises(ssl.SSLCertVerificationError, match=r"mismatch|match"),
    ):
        context.wrap_socket(raw, server_hostname="db.example.com")
    thread.join(5)
    listener.close()
