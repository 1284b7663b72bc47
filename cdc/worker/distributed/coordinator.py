"""A Connect group member on kafka-python 3.0.x's ``BaseCoordinator`` (Connect's ``WorkerCoordinator``).

kafka-python gives the generic member: FindCoordinator, JoinGroup, SyncGroup, Heartbeat (a coroutine on
the client's I/O thread) and LeaveGroup. We add the ``connect`` protocol type, the protocols offered
(``sessioned`` → ``compatible`` → ``default``, capped by ``connect.protocol``), the subscription bytes and
the leader's assignment. What we had to know about kafka-python 3.0.12 (read from its source):

* The join hooks are coroutines, ``_on_join_prepare_async`` / ``_on_join_complete_async``, awaited on the
  I/O thread; 2.x's synchronous names are never called. Ours only record state: the membership thread
  acts on it (catching up with the config topic, telling the herder).
* ``_perform_assignment`` is called synchronously on the I/O thread. The leader reads the config topic
  there (the config store has its own client, so this cannot deadlock); heartbeats are disabled during a
  join anyway. The selector's slow-task warning threshold is raised accordingly.
* The client's I/O thread must be started by us (``client._net.start()``) before bootstrap, or no
  heartbeat is ever sent.
* ``close()`` leaves the group (LeaveGroup); :meth:`WorkerCoordinator.crash` closes the sockets without it,
  for tests that simulate a dead worker.
* The heartbeat coroutine asks ``self.heartbeat`` (a ``kafka.coordinator.heartbeat.Heartbeat``) how long to
  sleep (``time_to_next_heartbeat``) and sleeps on ``self._heartbeat_wakeup``, which any thread may
  ``notify()``. :meth:`WorkerCoordinator.hurry_heartbeats` relies on both: our ``Heartbeat`` subclass
  (:class:`_HurriableHeartbeat`, installed in ``__init__``) shortens the sleep while a
  :class:`HeartbeatHurry` window is open, and the notify wakes a loop already asleep for up to
  ``heartbeat.interval.ms``. These are the only kafka-python internals the hurry touches.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from kafka.coordinator.base import BaseCoordinator
from kafka.coordinator.heartbeat import Heartbeat
from kafka.net.compat import KafkaNetClient
from kafka.net.sasl.oauth import AbstractTokenProvider

from cdc.kafka.clients import python_ssl_context
from cdc.worker.distributed.assignor import AssignmentRound, IncrementalCooperativeAssignor, eager_assign
from cdc.worker.distributed.protocol import (
    Assignment,
    ConnectorsAndTasks,
    ConnectProtocol,
    WorkerSubscription,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
    protocols_up_to,
)

__all__ = [
    "HeartbeatHurry",
    "JoinResult",
    "UnsecuredTokenProvider",
    "WorkerCoordinator",
    "WorkerState",
    "kafka_python_client",
    "kafka_python_sasl",
]

log = logging.getLogger(__name__)

PROTOCOL_TYPE = "connect"


class WorkerState(Protocol):
    """What the coordinator asks of the worker it represents (implemented by GroupMembership)."""

    def config_offset(self) -> int:
        """The offset of the last config record this worker has read."""
        ...

    def allocation(self) -> Assignment | None:
        """What this worker runs now, as a full assignment (for the v1/v2 subscription), or None."""
        ...

    def read_config_to(self, offset: int) -> tuple[int, ConnectorsAndTasks]:
        """Leader only: read the config topic to at least ``offset`` (bounded wait); the offset reached and
        the connectors and tasks configured as of it."""
        ...


@dataclass(frozen=True)
class JoinResult:
    """One completed join: the generation and what the leader sent this member."""

    generation: int
    member_id: str
    protocol: ConnectProtocol
    assignment: Assignment
    is_leader: bool
    leader_view: AssignmentRound | None  # the leader's round (all members' allocations and URLs)


def kafka_python_client(
    settings: Mapping[str, Any], client_id: str, bootstrap_timeout_ms: int
) -> KafkaNetClient:
    """A started kafka-python network client for Java-style ``settings`` (``client_config`` output)."""
    servers = str(settings.get("bootstrap.servers", "localhost:9092"))
    configs: dict[str, Any] = {
        "bootstrap_servers": [s.strip() for s in servers.split(",") if s.strip()],
        "client_id": client_id,
        "slow_task_threshold_secs": 30.0,
    }
    simple = {
        "security.protocol": "security_protocol",
        "request.timeout.ms": "request_timeout_ms",
        "reconnect.backoff.ms": "reconnect_backoff_ms",
        "reconnect.backoff.max.ms": "reconnect_backoff_max_ms",
    }
    for key, name in simple.items():
        if key in settings:
            value = settings[key]
            configs[name] = int(value) if name.endswith("_ms") else str(value)
    configs.update(kafka_python_sasl(settings))  # sasl.mechanism and sasl.jaas.config
    protocol = str(settings.get("security.protocol") or "PLAINTEXT").strip().upper()
    if protocol in ("SSL", "SASL_SSL"):
        # the worker's trust and key stores (PEM or Java: JKS, PKCS12) as the librdkafka clients get them
        configs["ssl_context"] = python_ssl_context(settings)
    client = KafkaNetClient(**configs)
    client._net.start()  # heartbeats run on this thread: without it the member is dropped
    client._manager.bootstrap(bootstrap_timeout_ms)
    return client


_PASSWORD_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")


def kafka_python_sasl(settings: Mapping[str, Any]) -> dict[str, Any]:
    """kafka-python's SASL settings for Java-style client ``settings``, ``sasl.jaas.config`` read with
    :func:`cdc.kafka.jaas.parse_jaas` (Kafka's grammar: escapes, either quote, the control flag),
    so the group member reads it as the worker's librdkafka clients do.

    * ``PLAIN``, ``SCRAM-SHA-256``, ``SCRAM-SHA-512``: ``username``/``password`` of the login module →
      ``sasl_plain_username``/``sasl_plain_password`` (kafka-python's names for both mechanisms).
    * ``OAUTHBEARER`` with ``OAuthBearerLoginModule``'s unsecured-token options (``unsecuredLogin*``):
      an unsecured JWS as Java's ``OAuthBearerUnsecuredLoginCallbackHandler`` makes it
      (:class:`UnsecuredTokenProvider`). OIDC (``sasl.oauthbearer.token.endpoint.url``, KIP-768) is
      refused with a :class:`~cdc.api.errors.ConfigError`: this client has no token endpoint support.
    * ``GSSAPI`` (Java's default mechanism): ``serviceName`` or ``sasl.kerberos.service.name`` →
      ``sasl_kerberos_service_name``; the ticket comes from the process's Kerberos environment
      (``KRB5CCNAME`` / ``KRB5_CLIENT_KTNAME``): a ``keyTab`` in the JAAS line is not read by kafka-python.

    A mechanism kafka-python does not have, or a login module without what its mechanism needs, is refused
    naming the key, never the value.
    """
    from cdc.api.errors import ConfigError
    from cdc.kafka.jaas import parse_jaas

    protocol = str(settings.get("security.protocol") or "PLAINTEXT").strip().upper()
    if not protocol.startswith("SASL"):
        return {}
    mechanism = str(settings.get("sasl.mechanism") or "GSSAPI").strip().upper()
    jaas = str(settings.get("sasl.jaas.config") or "")
    entry = parse_jaas(jaas) if jaas.strip() else None
    options = entry.options if entry is not None else {}
    out: dict[str, Any] = {"sasl_mechanism": mechanism}
    if mechanism in _PASSWORD_MECHANISMS:
        if "username" not in options or "password" not in options:
            raise ConfigError(
                f"{mechanism} needs a login module with username and password "
                "(PlainLoginModule or ScramLoginModule)",
                "sasl.jaas.config",
                "[hidden]",
            )
        out["sasl_plain_username"] = options["username"]
        out["sasl_plain_password"] = options["password"]
    elif mechanism == "OAUTHBEARER":
        if settings.get("sasl.oauthbearer.token.endpoint.url") or not any(
            k.startswith("unsecuredLogin") for k in options
        ):
            raise ConfigError(
                "OAUTHBEARER with a token endpoint (OIDC) is not supported by the distributed worker's group "
                "client (kafka-python): only OAuthBearerLoginModule's unsecuredLogin* options are",
                "sasl.jaas.config",
                "[hidden]",
            )
        out["sasl_oauth_token_provider"] = UnsecuredTokenProvider(options)
    elif mechanism == "GSSAPI":
        service = settings.get("sasl.kerberos.service.name") or options.get("serviceName")
        if service:
            out["sasl_kerberos_service_name"] = str(service)
        if "keyTab" in options:
            log.warning(
                "The group client (kafka-python) does not read keyTab from sasl.jaas.config: it uses the "
                "process's Kerberos credentials (KRB5CCNAME, KRB5_CLIENT_KTNAME)"
            )
    else:
        raise ConfigError(
            "not supported by the distributed worker's group client (kafka-python): use PLAIN, "
            "SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER (unsecured tokens) or GSSAPI",
            "sasl.mechanism",
            mechanism,
        )
    return out


class UnsecuredTokenProvider(AbstractTokenProvider):
    """Unsecured OAUTHBEARER tokens (``{"alg":"none"}``) from ``OAuthBearerLoginModule``'s options, as
    Java's ``OAuthBearerUnsecuredLoginCallbackHandler`` builds them: the principal claim
    (``unsecuredLoginPrincipalClaimName``, ``sub``) from ``unsecuredLoginStringClaim_<name>``, the scope
    claim from ``unsecuredLoginListClaim_<name>`` (its first character the delimiter), ``iat``/``exp``
    (``unsecuredLoginLifetimeSeconds``, 3600), extensions from ``unsecuredLoginExtension_<name>``. A new
    token is made when the last one is past half its life."""

    def __init__(self, options: Mapping[str, str]) -> None:
        super().__init__()
        self.options = dict(options)
        self.lifetime = float(self.options.get("unsecuredLoginLifetimeSeconds") or 3600)
        self._token = ""
        self._refresh_at = 0.0

    def token(self) -> str:
        import time

        now = time.time()
        if not self._token or now >= self._refresh_at:
            self._token = self._make(now)
            self._refresh_at = now + self.lifetime / 2
        return self._token

    def _make(self, now: float) -> str:
        import base64
        import json

        def part(obj: Any) -> str:
            raw = json.dumps(obj, separators=(",", ":")).encode()
            return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

        prefix = "unsecuredLogin"
        principal_claim = self.options.get(prefix + "PrincipalClaimName", "sub")
        claims: dict[str, Any] = {"iat": now, "exp": now + self.lifetime}
        for key, value in self.options.items():
            if key.startswith(prefix + "StringClaim_"):
                claims[key[len(prefix + "StringClaim_") :]] = value
            elif key.startswith(prefix + "NumberClaim_"):
                claims[key[len(prefix + "NumberClaim_") :]] = float(value)
            elif key.startswith(prefix + "ListClaim_") and value:
                claims[key[len(prefix + "ListClaim_") :]] = [v for v in value[1:].split(value[0]) if v]
        if principal_claim not in claims:
            from cdc.api.errors import ConfigError

            raise ConfigError(
                f"OAuthBearerLoginModule needs {prefix}StringClaim_{principal_claim} (the principal)",
                "sasl.jaas.config",
                "[hidden]",
            )
        return f"{part({'alg': 'none'})}.{part(claims)}."

    def extensions(self) -> dict[str, str]:
        prefix = "unsecuredLoginExtension_"
        return {k[len(prefix) :]: v for k, v in self.options.items() if k.startswith(prefix)}


class HeartbeatHurry:
    """A window during which heartbeats go out every ``interval`` seconds rather than every
    ``heartbeat.interval.ms``: a heartbeat sent at any time is legal in the group protocol, and its answer
    (``REBALANCE_IN_PROGRESS``) is how a member learns that a rebalance began. Outside a window nothing
    changes. Thread-safe: opened from one thread, read by kafka-python's I/O thread."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._until = float("-inf")
        self._interval = float("inf")

    def hurry(self, interval: float, duration: float) -> None:
        """Heartbeat every ``interval`` seconds for the next ``duration`` seconds (a window already open is
        extended, and keeps the shorter interval)."""
        now = self._clock()
        with self._lock:
            if now >= self._until:
                self._interval = interval
            else:
                self._interval = min(self._interval, interval)
            self._until = max(self._until, now + duration)

    def active(self) -> bool:
        with self._lock:
            return self._clock() < self._until

    def wait(self, since_last: float, regular: float) -> float:
        """Seconds until the next heartbeat is due, given the seconds since the last one was sent and the
        ``regular`` wait (kafka-python's, from ``heartbeat.interval.ms``)."""
        with self._lock:
            if self._clock() >= self._until:
                return regular
            return min(regular, max(0.0, self._interval - since_last))


class _HurriableHeartbeat(Heartbeat):
    """kafka-python's heartbeat timer, shortened while ``hurry`` has a window open (not after a failed
    heartbeat: then kafka-python's own ``retry.backoff.ms`` applies)."""

    def __init__(self, hurry: HeartbeatHurry, **configs: Any) -> None:
        super().__init__(**configs)
        self.hurry = hurry

    def time_to_next_heartbeat(self) -> float:
        regular = float(super().time_to_next_heartbeat())
        if self.heartbeat_failed:
            return regular
        since_last = time.monotonic() - max(self.last_send, self.last_reset)
        return self.hurry.wait(since_last, regular)


class WorkerCoordinator(BaseCoordinator):
    """One worker's membership in the Connect group."""

    def __init__(
        self,
        client: KafkaNetClient,
        worker: WorkerState,
        url: str,
        protocol: ConnectProtocol,
        scheduled_rebalance_max_delay_ms: int,
        **configs: Any,
    ) -> None:
        configs.setdefault("api_version", client._manager.broker_version)
        super().__init__(client, **configs)
        self.worker = worker
        self.url = url
        self.configured_protocol = protocol
        self.assignor = IncrementalCooperativeAssignor(scheduled_rebalance_max_delay_ms)
        self._results: list[JoinResult] = []
        self._results_lock = threading.Lock()
        self._last_round: AssignmentRound | None = None
        self._last_completed_generation = -1
        # Replaces the Heartbeat BaseCoordinator made, before the heartbeat loop first runs (it starts with
        # the first ensure_active_group).
        self._hurry = HeartbeatHurry()
        self.heartbeat = _HurriableHeartbeat(self._hurry, **self.config)
        if self._sensors is not None:
            self._sensors.heartbeat = self.heartbeat

    # -- BaseCoordinator's abstract methods -----------------------------------------------------------------
    def protocol_type(self) -> str:
        return PROTOCOL_TYPE

    def group_protocols(self) -> list[tuple[str, bytes]]:
        offset = self.worker.config_offset()
        allocation = self.worker.allocation()
        out = []
        for protocol in protocols_up_to(self.configured_protocol):
            current = None
            if protocol.incremental and allocation is not None:
                current = Assignment(
                    protocol.version,
                    allocation.error,
                    allocation.leader,
                    allocation.leader_url,
                    allocation.config_offset,
                    allocation.assigned,
                )
            sub = WorkerSubscription(protocol.version, self.url, offset, current)
            out.append((protocol.protocol_name, encode_subscription(sub)))
        return out

    def _perform_assignment(self, leader_id: str, protocol: str, members: list[Any]) -> dict[str, bytes]:
        chosen = ConnectProtocol.from_name(protocol)
        subs: dict[str, WorkerSubscription] = {}
        for member in members:
            subs[member.member_id] = decode_subscription(bytes(member.metadata))
        max_offset = max(s.config_offset for s in subs.values())
        leader_offset, configured = self.worker.read_config_to(max_offset)
        generation = self._generation.generation_id
        if chosen.incremental:
            result = self.assignor.assign(
                leader_id,
                subs,
                configured,
                leader_offset,
                generation,
                self._last_completed_generation,
                chosen.version,
            )
        else:
            result = eager_assign(leader_id, subs, configured, leader_offset, chosen.version)
        log.info(
            "Leader assignment for generation %d (%s, config offset %d, delay %d ms): %s",
            generation,
            protocol,
            leader_offset,
            result.delay,
            _describe(result),
        )
        self._last_round = result
        return {m: encode_assignment(a) for m, a in result.assignments.items()}

    async def _on_join_prepare_async(
        self, generation: int, member_id: str, timeout_ms: int | None = None
    ) -> None:
        log.debug("Rejoining the group (previous generation %d, member %s)", generation, member_id)

    async def _on_join_complete_async(
        self, generation: int, member_id: str, protocol: str, member_assignment_bytes: bytes
    ) -> None:
        assignment = decode_assignment(bytes(member_assignment_bytes))
        is_leader = assignment.leader == member_id
        view = self._last_round if is_leader else None
        self._last_round = None
        self._last_completed_generation = generation
        chosen = ConnectProtocol.from_name(protocol)
        result = JoinResult(generation, member_id, chosen, assignment, is_leader, view)
        with self._results_lock:
            self._results.append(result)

    # -- used by the membership thread ----------------------------------------------------------------------
    def take_results(self) -> list[JoinResult]:
        with self._results_lock:
            out, self._results = self._results, []
        return out

    def generation_id(self) -> int:
        return int(self._generation.generation_id)

    def member_id(self) -> str:
        return str(self._generation.member_id)

    def hurry_heartbeats(self, interval: float, duration: float) -> None:
        """Heartbeat every ``interval`` seconds for the next ``duration`` seconds, so that a rebalance that
        begins meanwhile is learnt within ``interval`` (see :class:`HeartbeatHurry`). Any thread."""
        self._hurry.hurry(interval, duration)
        self._heartbeat_wakeup.notify()  # the loop may be asleep for up to heartbeat.interval.ms

    def crash(self) -> None:
        """Drop off the network without LeaveGroup, as a killed worker does (tests)."""
        self._close_heartbeat()
        try:
            self._client.close()
        except Exception:  # nothing to save
            log.debug("Error closing the group client", exc_info=True)

    def shutdown(self, timeout_ms: int) -> None:
        """Leave the group at once (others rebalance without waiting for the session timeout), then close."""
        try:
            self.close(timeout_ms=timeout_ms)
        except Exception:  # best effort, as Connect's
            log.warning("Could not leave the group cleanly", exc_info=True)
        try:
            self._client.close()
        except Exception:
            log.debug("Error closing the group client", exc_info=True)


def _describe(result: AssignmentRound) -> str:
    parts = []
    for member, a in sorted(result.assignments.items()):
        parts.append(
            f"{member}: +{sorted(a.assigned.connectors)}{sorted(map(str, a.assigned.tasks))}"
            f" -{sorted(a.revoked.connectors)}{sorted(map(str, a.revoked.tasks))}"
        )
    return "; ".join(parts)
