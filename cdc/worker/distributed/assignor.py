"""The leader's assignors: incremental cooperative (KIP-415; ``compatible``, ``sessioned``) and eager.

Pure logic over the members' subscriptions and the set of configured connectors and tasks; the leader's
memory between rounds lives in the :class:`IncrementalCooperativeAssignor` instance. One round:

1. **Config check.** If the leader's config offset is behind the highest one a member reported, every
   member gets ``CONFIG_MISMATCH`` (and that offset) and nothing else changes.
2. **Keep.** Members keep what their subscription says they run (their *allocation*). Work that was
   deleted from the config, or that two members claim, is revoked explicitly.
3. **Lost work.** Work the previous round gave to a member that is gone is *held* for
   ``scheduled.rebalance.max.delay.ms``: every assignment carries the remaining ``delay`` and members
   rejoin when it ends. A new worker with nothing (perhaps the one that left, restarted) gets the held work
   at once; when the delay ends it is spread over everyone.
4. **Balance.** Connectors and tasks are counted separately, as Connect does: after a round no worker has
   more than one connector (or task) above another. New work goes to the least loaded; when that is not
   enough (a new worker joined) the most loaded give up the excess in this round (``revoked``) and it is
   assigned in the next, once they have stopped it. Rounds that revoke back to back are spaced out
   exponentially (1 ms, 40 ms, … up to the max delay) so that a flapping group cannot revoke in a loop.

Each member's assignment names only what is new for it and what it must revoke. :func:`eager_assign`
is protocol ``default``: a total round-robin assignment; members have dropped everything before joining.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from cdc.worker.distributed.protocol import (
    CONFIG_MISMATCH,
    NO_ERROR,
    Assignment,
    ConnectorsAndTasks,
    WorkerSubscription,
)
from cdc.worker.stores.base import TaskId

__all__ = ["AssignmentRound", "IncrementalCooperativeAssignor", "eager_assign"]

T = TypeVar("T", str, TaskId)

_BACKOFF_MULTIPLIER = 40


@dataclass
class AssignmentRound:
    """The outcome of one round: the bytes-to-be per member, and the leader's view of who runs what."""

    assignments: dict[str, Assignment]
    allocations: dict[str, ConnectorsAndTasks] = field(default_factory=dict)
    urls: dict[str, str] = field(default_factory=dict)
    delay: int = 0


def _union(items: Iterable[ConnectorsAndTasks]) -> ConnectorsAndTasks:
    out = ConnectorsAndTasks()
    for item in items:
        out = out | item
    return out


def _duplicates(allocations: Mapping[str, ConnectorsAndTasks]) -> ConnectorsAndTasks:
    seen_c: set[str] = set()
    seen_t: set[TaskId] = set()
    dup_c: set[str] = set()
    dup_t: set[TaskId] = set()
    for allocation in allocations.values():
        dup_c |= seen_c & allocation.connectors
        dup_t |= seen_t & allocation.tasks
        seen_c |= allocation.connectors
        seen_t |= allocation.tasks
    return ConnectorsAndTasks.of(dup_c, dup_t)


def _spread(items: Iterable[T], loads: dict[str, set[T]]) -> None:
    """Give each item (in order) to the member holding the fewest; ties go to the smallest member id."""
    for item in sorted(items):
        member = min(loads, key=lambda m: (len(loads[m]), m))
        loads[member].add(item)


def _excess(total: int, loads: Mapping[str, set[T]]) -> dict[str, int]:
    """How many items the most loaded must give up so that counts differ by at most one afterwards.

    With ``n`` members, ``total // n`` each and ``total % n`` of them one more; a balanced allocation
    (every count within that range) gives up nothing.
    """
    n = len(loads)
    if n == 0:
        return {}
    floor, extra = divmod(total, n)
    if all(floor <= len(held) <= floor + (1 if extra else 0) for held in loads.values()):
        return {}
    out: dict[str, int] = {}
    for member in sorted(loads, key=lambda m: (-len(loads[m]), m)):
        held = loads[member]
        keep = floor
        if extra and len(held) > floor:
            keep = floor + 1
            extra -= 1
        if len(held) > keep:
            out[member] = len(held) - keep
    return out


def _pick(count: int, items: Iterable[T]) -> set[T]:
    """The ``count`` highest-sorted ``items``: a stable choice of what to give up across rounds."""
    ordered = sorted(items)
    return set(ordered[len(ordered) - count :]) if count > 0 else set()


class IncrementalCooperativeAssignor:
    """KIP-415's leader logic with its memory between rounds (lost work, back-off of revoking rounds)."""

    def __init__(self, max_delay_ms: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_delay_ms = max(0, int(max_delay_ms))
        self._clock = clock
        self._previous: dict[str, ConnectorsAndTasks] | None = None
        self._previous_generation = -1
        self._held = ConnectorsAndTasks()
        self._deadline: float | None = None  # when held work is spread over everyone
        self._revoked_last_round = False
        self._successive_revoking = 0
        self._backoff_until: float | None = None

    # -- the round ---------------------------------------------------------------------------------------
    def assign(
        self,
        leader: str,
        members: Mapping[str, WorkerSubscription],
        configured: ConnectorsAndTasks,
        leader_offset: int,
        generation: int,
        last_completed_generation: int,
        version: int,
    ) -> AssignmentRound:
        """Assign ``configured`` (as of the leader's ``leader_offset``) to ``members`` for ``generation``.

        ``last_completed_generation`` is the last generation this leader completed as a member: if it is not
        the one the leader's memory is of, someone else led in between and the members' allocations are
        taken as the previous assignment.
        """
        urls = {m: s.url for m, s in members.items()}
        leader_url = urls.get(leader, "")
        max_offset = max([s.config_offset for s in members.values()] + [leader_offset])
        if leader_offset < max_offset:
            mismatch = Assignment(version, CONFIG_MISMATCH, leader, leader_url, max_offset)
            return AssignmentRound({m: mismatch for m in members}, {}, urls)

        now = self._clock()
        empty = ConnectorsAndTasks()
        current = {m: s.allocation.assigned if s.allocation else empty for m, s in members.items()}
        if self._previous is None or self._previous_generation != last_completed_generation:
            previous = dict(current)
            self._held = ConnectorsAndTasks()
            self._deadline = None
        else:
            previous = self._previous

        allocated = _union(current.values())
        deleted = allocated - configured
        duplicated = _duplicates(current)
        revoke = {m: (held & deleted) | (held & duplicated) for m, held in current.items()}
        nxt = {m: current[m] - revoke[m] for m in members}

        # Lost work: held by a member of the previous round that is gone, and by no one now.
        gone = _union(held for m, held in previous.items() if m not in members)
        held = ((self._held | gone) & configured) - allocated
        delay = 0
        if held.is_empty():
            self._deadline = None
        elif self.max_delay_ms == 0:
            held = ConnectorsAndTasks()
        else:
            candidates = [m for m in members if m not in previous and current[m].is_empty()]
            if self._deadline is None:
                self._deadline = now + self.max_delay_ms / 1000.0
            if now >= self._deadline:
                held = ConnectorsAndTasks()  # released: from now on it is unassigned work
                self._deadline = None
            elif candidates:
                self._give(held, {m: nxt[m] for m in candidates}, nxt)
                held = ConnectorsAndTasks()
                self._deadline = None
            else:
                delay = max(1, math.ceil((self._deadline - now) * 1000))
        self._held = held

        # Revoked work (duplicates) is reassigned in the next round, once its holders have stopped it.
        unassigned = configured - _union(nxt.values()) - _union(revoke.values()) - held

        # Balance: revoke the excess of the most loaded (never while lost work is held for its owner).
        balance: dict[str, ConnectorsAndTasks] = {}
        if held.is_empty() and len(members) > 1:
            balance = self._balance_revocations(configured - deleted, nxt, unassigned)
        revoked_now = False
        if not balance:
            self._successive_revoking = 0
            self._backoff_until = None
        elif self._revoked_last_round and not self._backoff_elapsed(now):
            delay = max(delay, self._backoff_remaining(now))
        else:
            self._backoff_until = None
            revoked_now = True
            for m, r in balance.items():
                revoke[m] = revoke[m] | r
                nxt[m] = nxt[m] - r

        self._give(unassigned, nxt, nxt)

        assignments = {
            m: Assignment(
                version, NO_ERROR, leader, leader_url, leader_offset, nxt[m] - current[m], revoke[m], delay
            )
            for m in members
        }
        self._previous = nxt
        self._previous_generation = generation
        self._revoked_last_round = revoked_now
        return AssignmentRound(assignments, dict(nxt), urls, delay)

    # -- helpers -----------------------------------------------------------------------------------------
    @staticmethod
    def _give(
        items: ConnectorsAndTasks,
        targets: Mapping[str, ConnectorsAndTasks],
        nxt: dict[str, ConnectorsAndTasks],
    ) -> None:
        """Spread ``items`` over ``targets`` (connectors and tasks each by their own count) into ``nxt``."""
        if items.is_empty() or not targets:
            return
        connectors = {m: set(a.connectors) for m, a in targets.items()}
        tasks = {m: set(a.tasks) for m, a in targets.items()}
        _spread(items.connectors, connectors)
        _spread(items.tasks, tasks)
        for m in targets:
            nxt[m] = ConnectorsAndTasks.of(connectors[m], tasks[m])

    @staticmethod
    def _balance_revocations(
        configured: ConnectorsAndTasks,
        nxt: Mapping[str, ConnectorsAndTasks],
        unassigned: ConnectorsAndTasks,
    ) -> dict[str, ConnectorsAndTasks]:
        # Would handing out the unassigned work to the least loaded be enough? Then revoke nothing.
        trial = dict(nxt)
        IncrementalCooperativeAssignor._give(unassigned, trial, trial)
        connectors = {m: set(a.connectors) for m, a in trial.items()}
        tasks = {m: set(a.tasks) for m, a in trial.items()}
        c_excess = _excess(len(configured.connectors), connectors)
        t_excess = _excess(len(configured.tasks), tasks)
        out: dict[str, ConnectorsAndTasks] = {}
        for m in nxt:
            # Only what the member already runs is revoked (work handed out in this round never started).
            revoke = ConnectorsAndTasks.of(
                _pick(c_excess.get(m, 0), nxt[m].connectors), _pick(t_excess.get(m, 0), nxt[m].tasks)
            )
            if not revoke.is_empty():
                out[m] = revoke
        return out

    def _backoff_elapsed(self, now: float) -> bool:
        return self._backoff_until is not None and now >= self._backoff_until

    def _backoff_remaining(self, now: float) -> int:
        if self._backoff_until is None:
            self._successive_revoking += 1
            backoff_ms = min(self.max_delay_ms, _BACKOFF_MULTIPLIER ** (self._successive_revoking - 1))
            self._backoff_until = now + backoff_ms / 1000.0
        return max(1, math.ceil((self._backoff_until - now) * 1000))

    # -- the leader's view, for owner lookups ------------------------------------------------------------
    def allocations(self) -> dict[str, ConnectorsAndTasks]:
        return dict(self._previous or {})


def eager_assign(
    leader: str,
    members: Mapping[str, WorkerSubscription],
    configured: ConnectorsAndTasks,
    leader_offset: int,
    version: int = 0,
) -> AssignmentRound:
    """Protocol ``default`` (v0): everything, round robin over the members sorted by id."""
    urls = {m: s.url for m, s in members.items()}
    leader_url = urls.get(leader, "")
    max_offset = max([s.config_offset for s in members.values()] + [leader_offset])
    if leader_offset < max_offset:
        mismatch = Assignment(version, CONFIG_MISMATCH, leader, leader_url, max_offset)
        return AssignmentRound({m: mismatch for m in members}, {}, urls)
    connectors: dict[str, set[str]] = {m: set() for m in members}
    tasks: dict[str, set[TaskId]] = {m: set() for m in members}
    _spread(configured.connectors, connectors)
    _spread(configured.tasks, tasks)
    allocations = {m: ConnectorsAndTasks.of(connectors[m], tasks[m]) for m in members}
    assignments = {
        m: Assignment(version, NO_ERROR, leader, leader_url, leader_offset, allocations[m]) for m in members
    }
    return AssignmentRound(assignments, allocations, urls)
