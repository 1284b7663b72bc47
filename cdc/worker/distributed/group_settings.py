"""The worker keys a distributed worker's group membership uses, parsed (:class:`GroupSettings`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cdc.config.settings import setting, settings_from
from cdc.worker.distributed.protocol import ConnectProtocol

__all__ = ["GroupSettings"]


@dataclass(frozen=True)
class GroupSettings:
    """The worker keys the group uses (parsed ``DISTRIBUTED_DEF`` values); defaults are the keys' own."""

    group_id: str = setting("group.id")
    connect_protocol: str = setting("connect.protocol", "sessioned")
    session_timeout_ms: int = setting("session.timeout.ms", 10000)
    heartbeat_interval_ms: int = setting("heartbeat.interval.ms", 3000)
    rebalance_timeout_ms: int = setting("rebalance.timeout.ms", 60000)
    scheduled_rebalance_max_delay_ms: int = setting("scheduled.rebalance.max.delay.ms", 300000)
    worker_sync_timeout_ms: int = setting("worker.sync.timeout.ms", 3000)
    worker_unsync_backoff_ms: int = setting("worker.unsync.backoff.ms", 300000)
    key_generation_algorithm: str = setting("inter.worker.key.generation.algorithm", "HmacSHA256")
    key_ttl_ms: int = setting("inter.worker.key.ttl.ms", 3600000)
    # Not declared by DISTRIBUTED_DEF, so a worker file does not set them: the group client's own timings.
    request_timeout_ms: int = 40000
    retry_backoff_ms: int = 100

    @property
    def protocol(self) -> ConnectProtocol:
        return ConnectProtocol.from_config(self.connect_protocol)

    @classmethod
    def from_worker(cls, parsed: Mapping[str, Any]) -> GroupSettings:
        return settings_from(cls, parsed)
