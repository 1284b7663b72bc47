"""Java key and trust stores (JKS, PKCS12) as users write them for Kafka clients, the REST server's https
listener and the schema registry client: read with cdc.keystores and handed to librdkafka, Python's ssl
and requests. Real TLS handshakes against local servers in threads; the stores are made by openssl and
keytool (tests/integration/tls_pki.py)."""

from __future__ import annotations

import base64
import http.server
import json
import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from cdc.api.errors import ConfigError, RetriableError
from cdc.api.schema import SchemaBuilder
from cdc.api.struct import Struct
from cdc.converters.avro_converter import AvroConverter
from cdc.kafka.clients import python_ssl_context, to_librdkafka
from cdc.worker.rest.server import RestServer
from cdc.worker.rest.settings import RestSettings
from cdc.worker.rest.tls import client_context, server_context
from tests.integration.tls_pki import make_pki
from tests.unit.test_rest_api import FakeHerder


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_pki(tmp_path_factory.mktemp("pki"))


def java_client(pki: Path, kind: str = "jks") -> dict[str, str]:
    """A worker's client settings as a Java user writes them."""
    return {
        "security.protocol": "SSL",
        "ssl.truststore.location": str(pki / f"trust.{'jks' if kind == 'jks' else 'p12'}"),
        "ssl.truststore.password": "trustpass",
        "ssl.truststore.type": kind.upper(),
        "ssl.keystore.location": str(pki / f"client.{'jks' if kind == 'jks' else 'p12'}"),
        "ssl.keystore.password": "keypass",
        "ssl.key.password": "keypass",
        "ssl.keystore.type": kind.upper(),
    }


@pytest.mark.parametrize("kind", ["jks", "pkcs12"])
def test_librdkafka_gets_pem_from_java_stores(pki: Path, kind: str) -> None:
    from confluent_kafka import Producer

    out = to_librdkafka({"bootstrap.servers": "127.0.0.1:1", **java_client(pki, kind)})
    assert "CERTIFICATE" in out["ssl.ca.pem"] and "PRIVATE KEY" in out["ssl.key.pem"]
    assert "CERTIFICATE" in out["ssl.certificate.pem"]
    # the stores' own keys never reach librdkafka; the key is already decrypted
    assert (
        not {k for k in out if k.startswith(("ssl.truststore", "ssl.keystore"))}
        and "ssl.key.password" not in out
    )
    Producer(out).flush(0)  # librdkafka parses the PEM when the client is made


def test_pem_stores_still_pass_as_files(pki: Path) -> None:
    out = to_librdkafka({"ssl.truststore.location": str(pki / "ca.pem"), "ssl.truststore.type": "PEM"})
    assert out == {"ssl.ca.location": str(pki / "ca.pem")}


def test_wrong_store_password_names_the_key(pki: Path) -> None:
    settings = {**java_client(pki), "ssl.truststore.password": "wrong-secret"}
    with pytest.raises(ConfigError, match=r"ssl\.truststore\.password") as info:
        to_librdkafka(settings)
    assert "wrong-secret" not in str(info.value)
    settings = {
        **java_client(pki),
        "ssl.keystore.password": "wrong-secret",
        "ssl.key.password": "wrong-secret",
    }
    with pytest.raises(ConfigError, match=r"ssl\.keystore\.password|ssl\.key\.password") as info:
        to_librdkafka(settings)
    assert "wrong-secret" not in str(info.value)
    with pytest.raises(ConfigError, match=r"ssl\.truststore\.location"):
        to_librdkafka({**java_client(pki), "ssl.truststore.location": str(pki / "missing.jks")})


@pytest.fixture
def tls_server(pki: Path) -> Iterator[tuple[int, list[str]]]:
    """A TLS server (server.pem, localhost) that requires a client certificate signed by the CA; it
    records each client's certificate subject."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki / "server.pem", pki / "server.key")
    context.load_verify_locations(pki / "ca.pem")
    context.verify_mode = ssl.CERT_REQUIRED
    listener = socket.create_server(("127.0.0.1", 0))
    peers: list[str] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            try:
                with context.wrap_socket(conn, server_side=True) as tls:
                    peers.append(dict(x[0] for x in tls.getpeercert()["subject"])["commonName"])
                    tls.sendall(b"ok")
            except (OSError, ssl.SSLError):
                pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1], peers
    finally:
        listener.close()


def _handshake(context: ssl.SSLContext, port: int, host: str = "localhost") -> bytes:
    with (
        socket.create_connection(("127.0.0.1", port), timeout=5) as raw,
        context.wrap_socket(raw, server_hostname=host) as tls,
    ):
        return tls.recv(2)


def test_group_client_context_from_java_stores(pki: Path, tls_server: tuple[int, list[str]]) -> None:
    port, peers = tls_server
    assert _handshake(python_ssl_context(java_client(pki)), port) == b"ok"
    assert peers == ["client"]
    with pytest.raises(ssl.SSLCertVerificationError):  # host names are checked, as Java's https default
        _handshake(python_ssl_context(java_client(pki)), port, host="other.example")
    no_check = {**java_client(pki), "ssl.endpoint.identification.algorithm": ""}
    assert _handshake(python_ssl_context(no_check), port, host="other.example") == b"ok"


def test_kafka_python_client_gets_the_context(pki: Path) -> None:
    from cdc.worker.distributed import coordinator

    captured: dict[str, Any] = {}

    class Stop(Exception):
        pass

    def fake(**configs: Any) -> Any:
        captured.update(configs)
        raise Stop

    original = coordinator.KafkaNetClient
    coordinator.KafkaNetClient = fake  # type: ignore[assignment,misc]
    try:
        with pytest.raises(Stop):
            coordinator.kafka_python_client({"bootstrap.servers": "b:9093", **java_client(pki)}, "c", 1000)
    finally:
        coordinator.KafkaNetClient = original  # type: ignore[misc]
    assert isinstance(captured["ssl_context"], ssl.SSLContext) and captured["security_protocol"] == "SSL"
    assert "ssl_cafile" not in captured


def test_rest_https_listener_with_jks_stores(pki: Path) -> None:
    props = {
        "listeners": "https://127.0.0.1:0",
        "listeners.https.ssl.keystore.location": str(pki / "server.jks"),
        "listeners.https.ssl.keystore.password": "keypass",
        "listeners.https.ssl.keystore.type": "JKS",
        "listeners.https.ssl.truststore.location": str(pki / "trust.jks"),
        "listeners.https.ssl.truststore.password": "trustpass",
        "listeners.https.ssl.client.auth": "required",
    }
    settings = RestSettings.from_properties(props, environ={})
    server = RestServer(FakeHerder(), settings)
    server.start()
    try:
        base = server.urls[0].replace("127.0.0.1", "localhost")
        cert = (str(pki / "client.pem"), str(pki / "client.key"))
        answer = requests.get(base + "connectors", verify=str(pki / "ca.pem"), cert=cert, timeout=10)
        assert answer.json() == []
        # no client certificate: refused (under TLS 1.3 the server hangs up after the handshake)
        with pytest.raises(requests.exceptions.ConnectionError):
            requests.get(base + "connectors", verify=str(pki / "ca.pem"), timeout=10)
        # the peer client (forwarding between workers) from the same Java stores
        assert isinstance(client_context(settings.ssl), ssl.SSLContext)
    finally:
        server.stop()
    wrong = RestSettings.from_properties(
        {**props, "listeners.https.ssl.keystore.password": "nope"}, environ={}
    )
    with pytest.raises(ConfigError, match=r"listeners\.https\.ssl\.keystore\.password") as info:
        server_context(wrong.ssl)
    assert "nope" not in str(info.value)


# -- schema registry over HTTPS --------------------------------------------------------------------------


class _Registry(http.server.BaseHTTPRequestHandler):
    """Just enough of Confluent's API, behind basic auth (user:secret)."""

    ids: dict[str, int] = {}

    def do_POST(self) -> None:
        if self.headers.get("Authorization") != "Basic " + base64.b64encode(b"user:secret").decode():
            self._answer(401, {"error_code": 401, "message": "Unauthorized"})
            return
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        schema_id = _Registry.ids.setdefault(body["schema"], len(_Registry.ids) + 1)
        self._answer(200, {"id": schema_id})

    def _answer(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def https_registry(pki: Path) -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Registry)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki / "server.pem", pki / "server.key")
    context.load_verify_locations(pki / "ca.pem")
    context.verify_mode = ssl.CERT_OPTIONAL
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://localhost:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _record() -> tuple[Any, Struct]:
    schema = SchemaBuilder.struct().name("t.Value").field("id", SchemaBuilder.int32().build()).build()
    return schema, Struct(schema).put("id", 7)


def test_registry_over_https_with_a_jks_trust_store_and_basic_auth(pki: Path, https_registry: str) -> None:
    props = {
        "schema.registry.url": https_registry,
        "schema.registry.ssl.truststore.location": str(pki / "trust.jks"),
        "schema.registry.ssl.truststore.password": "trustpass",
        "schema.registry.ssl.truststore.type": "JKS",
        "schema.registry.ssl.keystore.location": str(pki / "client.p12"),
        "schema.registry.ssl.keystore.password": "keypass",
        "schema.registry.ssl.keystore.type": "PKCS12",
        "basic.auth.credentials.source": "USER_INFO",
        "basic.auth.user.info": "user:secret",
    }
    conv = AvroConverter()
    conv.configure(props, False)
    data = conv.from_connect_data("t", *_record())
    assert data is not None and data[0] == 0 and int.from_bytes(data[1:5], "big") >= 1

    # without the trust store the system's CAs do not know the test CA: no registry reachable
    plain = AvroConverter()
    plain.configure({"schema.registry.url": https_registry}, False)
    with pytest.raises(RetriableError, match="CERTIFICATE_VERIFY_FAILED"):
        plain.from_connect_data("t", *_record())

    with pytest.raises(ConfigError, match=r"schema\.registry\.ssl\.truststore\.password") as info:
        AvroConverter().configure({**props, "schema.registry.ssl.truststore.password": "nope-nope"}, False)
    assert "nope-nope" not in str(info.value)


def test_registry_store_passwords_are_password_keys() -> None:
    from cdc.config import ConfigType

    definition = AvroConverter().config()
    for key in ("truststore.password", "keystore.password", "key.password"):
        assert definition[f"schema.registry.ssl.{key}"].type is ConfigType.PASSWORD
