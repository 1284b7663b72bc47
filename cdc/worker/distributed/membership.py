"""GroupMembership: the herder's :class:`~cdc.worker.membership.Membership` over Connect's group protocol.

A membership thread of its own drives the group (``ensure_active_group`` + ``poll_heartbeat``; the
heartbeats themselves run on kafka-python's I/O thread), so the herder's ``poll`` never blocks: it only
acknowledges what the herder has applied and reports changes. The handshake with the herder thread:

* A new assignment is published only after this worker has read the config topic up to the assignment's
  offset (``worker.sync.timeout.ms``; failing that, the worker leaves the group for
  ``worker.unsync.backoff.ms``, as Connect's does).
* Revoked work disappears from :meth:`GroupMembership.assignment` at once; the herder stops it in the
  reconciliation that called ``assignment``, so its *next* ``poll`` proves it is stopped. Only then does the
  member rejoin (cooperative: so that the revoked work can be given to another worker; eager: a member
  drops everything before it joins). Without a herder polling (never called), nothing is awaited.
* The herder is woken (``set_listener``) whenever the assignment or leadership changes.

A member rejoins when the assignment says so (``delay``, revocations, ``CONFIG_MISMATCH``) and when the
connectors or tasks configured changed after the config offset its last assignment was computed at (a
connector was created or deleted, or its task count changed), so the leader can assign the difference.
The membership notes the config offset at which it saw the configured work change (each turn, and at each
config record through :meth:`GroupMembership.config_updated`, which the herder calls); a change noted at an
offset past the assignment's is not in it, even if it landed while that assignment was being computed or
sent, and asks for another rebalance (Connect's ``needsReconfigRebalance``).

A departure is learnt sooner than a heartbeat. The group coordinator tells the others that a member left
(LeaveGroup) only in its answer to their next heartbeat (``REBALANCE_IN_PROGRESS``), up to
``heartbeat.interval.ms`` (3 s, Connect's default) later: in a rolling restart that wait was most of each
step. But a worker that stops writes UNASSIGNED for each of its tasks and connectors to the status topic
as it stops them, *before* it leaves the group (Connect's ``AbstractHerder.onShutdown`` /
``onConnectorShutdown`` do the same, so a Connect worker is noticed as well), and every worker reads
that topic. So when the herder reads such a record from another worker it calls
:meth:`GroupMembership.rebalance_expected`, and the member heartbeats every ``_HURRY_INTERVAL`` for one
``heartbeat.interval.ms`` after the last such record (:meth:`WorkerCoordinator.hurry_heartbeats`): the
first heartbeat after the coordinator has the LeaveGroup brings ``REBALANCE_IN_PROGRESS``. Should the
records come after the LeaveGroup instead, the first hurried heartbeat finds the rebalance. Nothing new
is written and nothing on the wire changes (a heartbeat may be sent at any time), and the defaults stay
Connect's. The same records come from a worker that gives up revoked work in a cooperative rebalance and
is about to rejoin, which the others then also learn sooner. Lowering ``heartbeat.interval.ms`` instead
would cost heartbeats all the time and depart from Connect's defaults; the broker pushes nothing to a
classic group member, so some request must ask.

The leader of a ``sessioned`` group keeps a session key in the config topic (created when missing, rotated
after ``inter.worker.key.ttl.ms``); :meth:`GroupMembership.session_key` is what requests are signed with.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from cdc.worker.distributed.group_settings import GroupSettings
from cdc.worker.distributed.protocol import Assignment, ConnectorsAndTasks, ConnectProtocol
from cdc.worker.metrics import RebalanceMetrics
from cdc.worker.stores.base import ClusterConfigState, ConfigBackingStore, SessionKey, TaskId

if TYPE_CHECKING:  # kafka-python loads on the membership thread (_connect), not on the way to REST
    from cdc.worker.distributed.coordinator import JoinResult, WorkerCoordinator

__all__ = ["GroupMembership", "GroupSettings", "configured_work"]

log = logging.getLogger(__name__)


def configured_work(snapshot: ClusterConfigState) -> ConnectorsAndTasks:
    """Every connector and task the config snapshot asks for (what the leader assigns)."""
    connectors = snapshot.connectors()
    return ConnectorsAndTasks.of(connectors, [t for c in connectors for t in snapshot.tasks(c)])


_KEY_BYTES = {"HmacSHA256": 32, "HmacSHA1": 20, "HmacSHA512": 64}
_TICK = 0.1  # seconds between two turns of the membership thread when nothing happens
# Seconds between heartbeats while a rebalance is expected: a heartbeat is a ~1 ms round trip to the group
# coordinator, so ten a second for one heartbeat.interval.ms (30 at Connect's 3 s) per departure is cheap.
_HURRY_INTERVAL = 0.1


class GroupMembership:
    """This worker's place in the Connect group, for the herder."""

    def __init__(
        self,
        url: str,
        config_store: ConfigBackingStore,
        settings: GroupSettings,
        client_settings: Mapping[str, Any],
        client_id: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = url
        self.config_store = config_store
        self.settings = settings
        self._client_settings = dict(client_settings)
        self._client_id = client_id or f"connect-{settings.group_id}"
        self._clock = clock
        self._lock = threading.RLock()
        self._wakeup = threading.Event()
        self._stopping = threading.Event()
        self._draining = threading.Event()
        self._thread: threading.Thread | None = None
        self._coordinator: WorkerCoordinator | None = None
        self._listener: Callable[[], None] = lambda: None
        # What the last join said, and what this worker should run now.
        self._joined: JoinResult | None = None
        self._assignment: Assignment | None = None
        self._owned = ConnectorsAndTasks()
        # The configured work last seen, and the config offset at which it was seen to change (an upper
        # bound of the offset just past the record that changed it).
        self._work_seen: ConnectorsAndTasks | None = None
        self._work_changed_at = -1
        self._changed = False
        # The revocation handshake with the herder thread.
        self._revision = 0
        self._seen_revision = 0
        self._acked_revision = 0
        self._herder_polls = False
        self._first_poll = threading.Event()  # joins the group once set
        self._rejoin_after_ack = False
        self._rejoin_at: float | None = None
        self._unsync_until: float | None = None
        self._next_key_check = 0.0
        self.rebalances = RebalanceMetrics(clock)

    # -- lifecycle ---------------------------------------------------------------------------------------
    def set_listener(self, listener: Callable[[], None]) -> None:
        """Called (from the membership thread) whenever the assignment or the leader changes."""
        self._listener = listener

    def connect(self) -> None:
        """Connect in the background while the herder reads its stores; join at the first :meth:`poll`."""
        self.start()

    def start(self) -> None:
        """Connect to the cluster and start taking part in the group (in the background)."""
        if self._thread is not None or self._stopping.is_set():
            return
        self._thread = threading.Thread(target=self._run, name=f"group-{self.settings.group_id}", daemon=True)
        self._thread.start()

    def prepare_to_stop(self) -> None:
        """The worker is stopping its work: join no more (heartbeats go on) until :meth:`stop` leaves.

        Connect's member is polled on the herder thread, so a halting herder takes part in no rebalance;
        ours has a thread of its own, which would otherwise take work (even as the leader, everything
        that is unassigned) that this worker will never run, and that the others would then wait
        ``scheduled.rebalance.max.delay.ms`` for once it left."""
        self._draining.set()

    def stop(self) -> None:
        """Leave the group at once (LeaveGroup) so that others take over without waiting for a timeout."""
        self._halt()
        coordinator = self._coordinator
        if coordinator is not None:
            coordinator.shutdown(timeout_ms=5000)
            self._coordinator = None

    def crash(self) -> None:
        """Vanish without LeaveGroup, as a killed worker does (for tests)."""
        self._halt()
        coordinator = self._coordinator
        if coordinator is not None:
            coordinator.crash()
            self._coordinator = None

    def _halt(self) -> None:
        self._stopping.set()
        self._wakeup.set()
        self._first_poll.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(30)

    # -- Membership ---------------------------------------------------------------------------------------
    def generation(self) -> int:
        joined = self._joined
        return joined.generation if joined is not None else 0

    def is_leader(self) -> bool:
        joined = self._joined
        return joined is not None and joined.is_leader and self._assignment is not None

    def leader_url(self) -> str | None:
        assignment = self._assignment
        if assignment is None or not assignment.leader_url:
            return None
        return assignment.leader_url

    def owner_url(self, connector: str, task: int | None = None) -> str | None:
        with self._lock:
            if task is None:
                mine = connector in self._owned.connectors
            else:
                mine = TaskId(connector, task) in self._owned.tasks
            if mine:
                return self.url
            joined = self._joined
            view = joined.leader_view if joined is not None and joined.is_leader else None
            if view is not None:
                for member, allocation in view.allocations.items():
                    held = (
                        connector in allocation.connectors
                        if task is None
                        else TaskId(connector, task) in allocation.tasks
                    )
                    if held:
                        return view.urls.get(member)
        return self.leader_url()

    def assignment(self, snapshot: ClusterConfigState) -> tuple[set[str], set[TaskId]]:
        with self._lock:
            self._seen_revision = self._revision
            owned = self._owned
        return set(owned.connectors), set(owned.tasks)

    def poll(self, timeout: float) -> bool:
        # The first poll comes from the herder thread once the config store has been read: join then.
        self.start()
        self._first_poll.set()
        with self._lock:
            self._herder_polls = True
            # The herder calls poll after the reconciliation that read `_seen_revision` has finished.
            if self._acked_revision != self._seen_revision:
                self._acked_revision = self._seen_revision
                self._wakeup.set()
            changed, self._changed = self._changed, False
        return changed

    def session_key(self) -> SessionKey | None:
        """The group's current session key (sessioned protocol), as read from the config topic."""
        return self.config_store.snapshot().session_key

    def protocol(self) -> ConnectProtocol | None:
        joined = self._joined
        return joined.protocol if joined is not None else None

    def signature_required(self) -> bool:
        return self.protocol() is ConnectProtocol.SESSIONED

    def member_id(self) -> str | None:
        joined = self._joined
        return joined.member_id if joined is not None else None

    def config_updated(self) -> None:
        """A config record changed a connector or its tasks (the herder's config listener calls this, on the
        thread that applied the record): note the offset at which the configured work changed, and wake the
        membership thread so that the rejoin it calls for starts now rather than at its next tick (a
        connector created over REST would otherwise wait up to ``_TICK`` twice: for itself, for its tasks)."""
        with self._lock:
            before = self._work_changed_at
            self._note_config()
            changed = self._work_changed_at > before
        if changed:
            self._wakeup.set()

    def rebalance_expected(self) -> None:
        """Another worker gave up work (UNASSIGNED in the status topic): heartbeat every
        ``_HURRY_INTERVAL`` for the next ``heartbeat.interval.ms``, so that its LeaveGroup (or rejoin) is
        learnt within that interval instead of at the next regular heartbeat. Any thread; never blocks."""
        coordinator = self._coordinator
        if coordinator is None or self._stopping.is_set() or self._draining.is_set():
            return  # not in the group yet, or leaving it
        interval_s = self.settings.heartbeat_interval_ms / 1000.0
        coordinator.hurry_heartbeats(min(_HURRY_INTERVAL, interval_s), interval_s)

    # -- for the coordinator (WorkerState) -----------------------------------------------------------------
    def config_offset(self) -> int:
        # What this member subscribes with: the leader reads at least this far, so the change noted here is
        # in the assignment this subscription gets.
        return self._note_config().offset

    def allocation(self) -> Assignment | None:
        with self._lock:
            last = self._assignment
            if last is None:
                return None
            return Assignment(last.version, 0, last.leader, last.leader_url, last.config_offset, self._owned)

    def read_config_to(self, offset: int) -> tuple[int, ConnectorsAndTasks]:
        snapshot = self.config_store.snapshot()
        if snapshot.offset < offset:
            try:
                self.config_store.refresh(self.settings.worker_sync_timeout_ms / 1000.0)
            except Exception as exc:  # the assignor answers CONFIG_MISMATCH instead
                log.warning("Leader could not read the config topic to offset %d: %s", offset, exc)
            snapshot = self.config_store.snapshot()
        return snapshot.offset, configured_work(snapshot)

    # -- the membership thread ---------------------------------------------------------------------------
    def _connect(self) -> WorkerCoordinator:
        from cdc.worker.distributed.coordinator import WorkerCoordinator, kafka_python_client

        s = self.settings
        client = kafka_python_client(self._client_settings, self._client_id, s.request_timeout_ms)
        return WorkerCoordinator(
            client,
            self,
            self.url,
            s.protocol,
            s.scheduled_rebalance_max_delay_ms,
            group_id=s.group_id,
            session_timeout_ms=s.session_timeout_ms,
            heartbeat_interval_ms=s.heartbeat_interval_ms,
            max_poll_interval_ms=s.rebalance_timeout_ms,
            request_timeout_ms=s.request_timeout_ms,
            retry_backoff_ms=s.retry_backoff_ms,
        )

    def _run(self) -> None:
        while not self._stopping.is_set() and self._coordinator is None:
            try:
                self._coordinator = self._connect()
            except Exception as exc:  # keep trying while the cluster is unreachable
                log.warning("Could not connect to Kafka for group %s: %s", self.settings.group_id, exc)
                self._stopping.wait(2.0)
        # connected early (connect): join once the herder, its config read, polls
        while not self._stopping.is_set() and not self._first_poll.wait(0.5):
            pass
        while not self._stopping.is_set():
            try:
                self._turn()
            except Exception:  # the membership thread must survive a bad turn
                log.exception("Error in the group membership of %s", self.url)
                self._stopping.wait(1.0)
            self._wakeup.wait(_TICK)
            self._wakeup.clear()

    def _turn(self) -> None:
        coordinator = self._coordinator
        if coordinator is None:
            return
        now = self._clock()
        if self._unsync_until is not None:
            if now < self._unsync_until:
                return
            self._unsync_until = None
        self._note_config()
        if self._awaiting_herder() or self._draining.is_set():
            coordinator.poll_heartbeat()
            return
        if self._rejoin_after_ack:
            self._rejoin_after_ack = False
            coordinator.request_rejoin()
        if self._rejoin_at is not None and now >= self._rejoin_at:
            self._rejoin_at = None
            coordinator.request_rejoin()
        self._check_config_changes(coordinator)
        if coordinator.need_rejoin():
            self.rebalances.began()
        if coordinator.need_rejoin() and self._revoke_all_before_eager_join():
            return
        coordinator.ensure_active_group(timeout_ms=1000)
        coordinator.poll_heartbeat()
        for result in coordinator.take_results():
            self._complete(result)
        self._maintain_session_key(now)

    def _awaiting_herder(self) -> bool:
        with self._lock:
            return self._herder_polls and self._acked_revision < self._revision

    def _revoke_all_before_eager_join(self) -> bool:
        """Eager protocol: drop everything before joining; True while waiting for the herder to stop it."""
        joined = self._joined
        if joined is None or joined.protocol.incremental:
            return False
        with self._lock:
            if self._owned.is_empty():
                return False
            log.info("Eager rebalance: stopping all connectors and tasks before rejoining")
            self._owned = ConnectorsAndTasks()
            self._revision += 1
            self._changed = True
        self._listener()
        return self._herder_polls

    def _note_config(self) -> ClusterConfigState:
        """Read the config snapshot; if its connectors or tasks differ from the ones last seen, note its
        offset as the one at which the configured work changed. Returns the snapshot."""
        with self._lock:
            snapshot = self.config_store.snapshot()
            work = configured_work(snapshot)
            if work != self._work_seen:
                self._work_seen = work
                self._work_changed_at = max(self._work_changed_at, snapshot.offset)
            return snapshot

    def _assignment_is_stale(self) -> int | None:
        """The offset at which the configured work changed if that is past the offset the current assignment
        was computed at (the assignment lacks the change), else None."""
        with self._lock:
            assignment = self._assignment
            if assignment is None or self._work_changed_at <= assignment.config_offset:
                return None
            return self._work_changed_at

    def _check_config_changes(self, coordinator: WorkerCoordinator) -> None:
        if coordinator.need_rejoin():
            return  # the join to come reads the config as of (at least) our subscription's offset
        changed_at = self._assignment_is_stale()
        if changed_at is not None:
            assignment = self._assignment
            log.info(
                "Connectors or tasks were added or removed (config offset %d, after the assignment's %d); "
                "rejoining so that the leader assigns them",
                changed_at,
                assignment.config_offset if assignment is not None else -1,
            )
            coordinator.request_rejoin()

    def _complete(self, result: JoinResult) -> None:
        assignment = result.assignment
        if assignment.failed:
            log.info(
                "Leader %s is ahead of us (config offset %d); reading the config topic and rejoining",
                assignment.leader_url,
                assignment.config_offset,
            )
            self._catch_up(assignment.config_offset)
            if self._coordinator is not None:
                self._coordinator.request_rejoin()
            return
        if not self._catch_up(assignment.config_offset):
            self._fall_out_of_sync(assignment)
            return
        with self._lock:
            if result.protocol.incremental:
                owned = (self._owned - assignment.revoked) | assignment.assigned
            else:
                owned = assignment.assigned
            shrank = not (self._owned - owned).is_empty()
            self._owned = owned
            self._joined = result
            self._assignment = assignment
            if shrank:
                self._revision += 1
            self._changed = True
            self._rejoin_after_ack = result.protocol.incremental and not assignment.revoked.is_empty()
            self._rejoin_at = self._clock() + assignment.delay / 1000.0 if assignment.delay > 0 else None
        self._note_config()
        self.rebalances.completed(result.generation, assignment.leader or "")
        log.info(
            "Joined group %s generation %d as %s (%s; leader %s): assigned %s, revoked %s, delay %d ms; "
            "now running %d connectors and %d tasks",
            self.settings.group_id,
            result.generation,
            "leader" if result.is_leader else "follower",
            result.protocol.protocol_name,
            assignment.leader_url,
            _names(assignment.assigned),
            _names(assignment.revoked),
            assignment.delay,
            len(owned.connectors),
            len(owned.tasks),
        )
        # A connector or task config read after the leader's snapshot (even while this join was completing)
        # is not in this assignment: ask for another rebalance now, not only on the next change.
        if self._coordinator is not None:
            self._check_config_changes(self._coordinator)
        self._listener()

    def _catch_up(self, offset: int) -> bool:
        if self.config_store.snapshot().offset >= offset:
            return True
        try:
            self.config_store.refresh(self.settings.worker_sync_timeout_ms / 1000.0)
        except Exception as exc:
            log.warning("Could not read the config topic to offset %d: %s", offset, exc)
        return self.config_store.snapshot().offset >= offset

    def _fall_out_of_sync(self, assignment: Assignment) -> None:
        backoff = self.settings.worker_unsync_backoff_ms
        log.warning(
            "Could not catch up with the config topic (offset %d) within worker.sync.timeout.ms; "
            "leaving the group for %d ms",
            assignment.config_offset,
            backoff,
        )
        with self._lock:
            if not self._owned.is_empty():
                self._revision += 1
            self._owned = ConnectorsAndTasks()
            self._assignment = None
            self._changed = True
        self._listener()
        if self._coordinator is not None:
            self._coordinator.maybe_leave_group()
        self._unsync_until = self._clock() + backoff / 1000.0

    def _maintain_session_key(self, now: float) -> None:
        if now < self._next_key_check:
            return
        self._next_key_check = now + 1.0
        joined = self._joined
        if joined is None or not joined.is_leader or joined.protocol is not ConnectProtocol.SESSIONED:
            return
        current = self.config_store.snapshot().session_key
        now_ms = int(time.time() * 1000)
        if current is not None and current.creation_timestamp + self.settings.key_ttl_ms > now_ms:
            return
        algorithm = self.settings.key_generation_algorithm
        key = SessionKey(secrets.token_bytes(_KEY_BYTES.get(algorithm, 32)), algorithm, now_ms)
        log.info("Leader is %s the session key", "rotating" if current else "creating")
        self.config_store.put_session_key(key)


def _names(items: ConnectorsAndTasks) -> str:
    return str(sorted(items.connectors) + sorted(str(t) for t in items.tasks))
