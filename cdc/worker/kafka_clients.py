"""Kafka client settings: from the Java client keys users write to librdkafka's.

Worker and connector files carry Java client settings (``producer.acks``, ``sasl.jaas.config`` …).
librdkafka (under confluent-kafka) shares most names but rejects unknown ones, so every client the
worker builds goes through :func:`to_librdkafka`: names librdkafka knows pass, a few are translated, and
Java-only ones (e.g. ``key.serializer``) are dropped with a debug log naming them (never their values).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["to_librdkafka"]

log = logging.getLogger(__name__)

_PASS = {
    "bootstrap.servers", "client.id", "security.protocol", "sasl.mechanism", "sasl.mechanisms",
    "sasl.username", "sasl.password", "sasl.kerberos.service.name", "sasl.oauthbearer.config",
    "ssl.ca.location", "ssl.certificate.location", "ssl.key.location", "ssl.key.password",
    "ssl.endpoint.identification.algorithm", "ssl.cipher.suites", "ssl.keystore.location",
    "ssl.keystore.password", "acks", "linger.ms", "batch.size", "batch.num.messages", "compression.type",
    "enable.idempotence", "retries", "retry.backoff.ms", "request.timeout.ms", "delivery.timeout.ms",
    "message.timeout.ms", "transactional.id", "transaction.timeout.ms", "isolation.level",
    "auto.offset.reset", "enable.auto.commit", "group.id", "session.timeout.ms", "heartbeat.interval.ms",
    "max.poll.interval.ms", "fetch.max.bytes", "fetch.min.bytes", "max.partition.fetch.bytes",
    "fetch.wait.max.ms", "socket.timeout.ms", "socket.keepalive.enable", "reconnect.backoff.ms",
    "reconnect.backoff.max.ms", "metadata.max.age.ms", "queue.buffering.max.messages",
    "queue.buffering.max.kbytes", "queue.buffering.max.ms", "message.max.bytes", "partitioner",
    "statistics.interval.ms", "client.dns.lookup", "group.instance.id", "partition.assignment.strategy",
    "receive.message.max.bytes", "topic.metadata.refresh.interval.ms", "enable.partition.eof",
    "allow.auto.create.topics", "debug", "max.in.flight.requests.per.connection", "max.in.flight",
    "sticky.partitioning.linger.ms", "enable.gapless.guarantee", "connections.max.idle.ms",
    "enable.ssl.certificate.verification", "api.version.request", "log_level", "auto.commit.interval.ms",
}

_RENAME = {
    "max.request.size": "message.max.bytes",
    "buffer.memory": None,  # librdkafka counts in kbytes; see below
    "fetch.max.wait.ms": "fetch.wait.max.ms",
    "ssl.truststore.location": None,
}

_JAAS = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')


def _jaas(value: str) -> dict[str, str]:
    fields = dict(_JAAS.findall(value))
    out: dict[str, str] = {}
    if "username" in fields:
        out["sasl.username"] = fields["username"]
    if "password" in fields:
        out["sasl.password"] = fields["password"]
    return out


def to_librdkafka(settings: Mapping[str, Any]) -> dict[str, Any]:
    """librdkafka settings for Java-style client ``settings``."""
    out: dict[str, Any] = {}
    dropped: list[str] = []
    for key, value in settings.items():
        if isinstance(value, list):
            value = ",".join(str(v) for v in value)
        if key == "sasl.jaas.config":
            out.update(_jaas(str(value)))
        elif key == "buffer.memory":
            out["queue.buffering.max.kbytes"] = max(1, int(value) // 1024)
        elif key in _RENAME:
            target = _RENAME[key]
            if target is None:
                dropped.append(key)
            else:
                out[target] = value
        elif key in _PASS:
            out[key] = value
        else:
            dropped.append(key)
    if dropped:
        log.debug("Client settings not used by librdkafka: %s", ", ".join(sorted(dropped)))
    if "acks" in out and str(out["acks"]) == "all":
        out["acks"] = "all"
    return out
