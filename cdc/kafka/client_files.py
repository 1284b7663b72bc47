"""The files a Kafka (Java or librdkafka names) or schema registry client configuration makes the client
read: key and trust stores, a keytab, the keytab a ``sasl.jaas.config`` names. The worker confines them
(:mod:`cdc.worker.file_paths`), as does anything else that builds a client from a user's settings (the
OpenLineage kafka transport)."""

from __future__ import annotations

from collections.abc import Mapping

from cdc.api.connector import FileUse

__all__ = ["client_files"]


# The Kafka (Java and librdkafka names) and schema registry client settings that name a file the client reads;
# matched at the end of a key so every prefix (producer.override., schema.history.internal.consumer.,
# key.converter.schema.registry., signal.consumer., …) is covered.
_CLIENT_FILE_SUFFIXES = (
    "ssl.truststore.location",
    "ssl.keystore.location",
    "ssl.ca.location",
    "ssl.certificate.location",
    "ssl.key.location",
    "ssl.crl.location",
    "sasl.kerberos.keytab",
)


def client_files(props: Mapping[str, str]) -> list[FileUse]:
    """The files the clients configured by ``props`` read (key and trust stores, a keytab, the keytab a
    ``sasl.jaas.config`` names): any connector's, whatever its class."""
    from cdc.kafka.jaas import parse_jaas

    out = []
    for key, value in props.items():
        text = str(value or "").strip()
        if not text:
            continue
        if key.endswith(_CLIENT_FILE_SUFFIXES):
            out.append(FileUse(key, text))
        elif key.endswith("sasl.jaas.config"):
            try:
                options = parse_jaas(text).options
            except Exception:  # a bad value is refused on its own key
                continue
            keytab = options.get("keyTab")
            if keytab:
                out.append(FileUse(key, keytab))
    return out
