"""The control plane's interface: what the REST API asks of a herder.

The REST handlers only route to these methods; the standalone and distributed herders implement them.
Return values are already in the REST API's JSON shapes (plain dicts and lists), so a handler's job is
to parse the request, call one method and serialize the answer. Errors are those of
:mod:`cdc.worker.errors`; the REST layer maps them to status codes and forwards
:class:`~cdc.worker.errors.NotLeaderError` / :class:`~cdc.worker.errors.NotAssignedError`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

from cdc.worker.stores.base import TargetState, TaskId, TaskIdJson

__all__ = [
    "ConnectorInfo",
    "ConnectorOffsets",
    "ConnectorStateInfo",
    "Herder",
    "OffsetEntry",
    "PutResult",
    "ServerInfo",
    "StateInfo",
    "TaskConfig",
    "TaskIdJson",
]

JSON = dict[str, Any]
"""A JSON object whose keys are open (a task's status carries what its task reports beyond its state)."""


# The REST API's JSON shapes, as Connect's REST entities (org.apache.kafka.connect.runtime.rest.entities).
class ServerInfo(TypedDict):
    version: str
    commit: str
    kafka_cluster_id: str | None


class ConnectorInfo(TypedDict):
    name: str
    config: dict[str, str]
    tasks: list[TaskIdJson]
    type: str


class StateInfo(TypedDict):
    state: str
    worker_id: str | None
    trace: NotRequired[str]


class ConnectorStateInfo(TypedDict):
    """ConnectorStateInfo; each task's entry is ``{"id", "state", "worker_id"[, "trace"]}`` and what the
    task reports beyond (:meth:`cdc.api.connector.Task.progress`)."""

    name: str
    connector: StateInfo
    tasks: list[JSON]
    type: str


class TaskConfig(TypedDict):
    id: TaskIdJson
    config: dict[str, str]


class OffsetEntry(TypedDict):
    partition: dict[str, Any]
    offset: dict[str, Any] | None


class ConnectorOffsets(TypedDict):
    offsets: list[OffsetEntry]


class PutResult:
    __slots__ = ("created", "info")

    def __init__(self, created: bool, info: ConnectorInfo) -> None:
        self.created = created
        self.info = info


class Herder(ABC):
    # -- worker -------------------------------------------------------------------------------
    @abstractmethod
    def server_info(self) -> ServerInfo:
        """``GET /``: ``{"version","commit","kafka_cluster_id"}``."""

    @abstractmethod
    def health(self) -> tuple[str, str]:
        """(``healthy`` | ``starting`` | ``unhealthy``, message) for ``GET /health``."""

    # -- connectors -----------------------------------------------------------------------------
    @abstractmethod
    def connectors(self) -> list[str]: ...

    @abstractmethod
    def connector_info(self, name: str) -> ConnectorInfo:
        """ConnectorInfo: ``{"name","config","tasks":[{"connector","task"}],"type"}``."""

    @abstractmethod
    def connector_config(self, name: str) -> dict[str, str]: ...

    @abstractmethod
    def put_connector_config(
        self,
        name: str,
        config: Mapping[str, str],
        allow_replace: bool,
        initial_state: TargetState | None = None,
    ) -> PutResult:
        """Create (``allow_replace`` False → AlreadyExistsError if present) or update a connector.

        Validates first; an invalid config raises BadRequestError with Connect's message.
        """

    @abstractmethod
    def patch_connector_config(self, name: str, patch: Mapping[str, str | None]) -> ConnectorInfo: ...

    @abstractmethod
    def delete_connector(self, name: str) -> None: ...

    @abstractmethod
    def connector_status(self, name: str) -> ConnectorStateInfo:
        """ConnectorStateInfo: ``{"name","connector":{"state","worker_id"[,"trace"]},"tasks":[…],"type"}``."""

    @abstractmethod
    def task_status(self, task: TaskId) -> JSON: ...

    @abstractmethod
    def task_configs(self, name: str) -> list[TaskConfig]:
        """``[{"id":{"connector","task"},"config":{…}}]``."""

    @abstractmethod
    def tasks_config(self, name: str) -> dict[str, dict[str, str]]:
        """Deprecated ``GET /connectors/{n}/tasks-config``: ``{"n-0": {…}}``."""

    @abstractmethod
    def restart_connector(
        self, name: str, include_tasks: bool, only_failed: bool
    ) -> ConnectorStateInfo | None:
        """None for the legacy connector-only restart (204), else ConnectorStateInfo (202)."""

    @abstractmethod
    def restart_task(self, task: TaskId) -> None: ...

    @abstractmethod
    def pause_connector(self, name: str) -> None: ...

    @abstractmethod
    def resume_connector(self, name: str) -> None: ...

    @abstractmethod
    def stop_connector(self, name: str) -> None: ...

    @abstractmethod
    def connector_active_topics(self, name: str) -> list[str]: ...

    @abstractmethod
    def reset_connector_active_topics(self, name: str) -> None: ...

    # -- offsets (KIP-875) ------------------------------------------------------------------------
    @abstractmethod
    def connector_offsets(self, name: str) -> ConnectorOffsets:
        """``{"offsets":[{"partition":{…},"offset":{…}}]}``."""

    @abstractmethod
    def alter_connector_offsets(self, name: str, offsets: list[OffsetEntry]) -> str:
        """Apply ``[{"partition","offset"|None}]``; returns the success message."""

    @abstractmethod
    def reset_connector_offsets(self, name: str) -> str: ...

    # -- plugins -----------------------------------------------------------------------------------
    @abstractmethod
    def plugins(self, connectors_only: bool) -> list[JSON]:
        """``[{"class","type","version"}]``."""

    @abstractmethod
    def plugin_config(self, plugin: str) -> list[JSON]:
        """ConfigKeyInfo list of a plugin."""

    @abstractmethod
    def validate_connector_config(self, config: Mapping[str, str]) -> JSON:
        """ConfigInfos: ``{"name","error_count","groups","configs":[{"definition","value"}]}``."""

    # -- admin ------------------------------------------------------------------------------------------
    @abstractmethod
    def set_cluster_logger_level(self, namespace: str, level: str) -> None:
        """``PUT /admin/loggers/{ns}?scope=cluster``: the level for every worker of the cluster."""

    # -- internal (distributed) ----------------------------------------------------------------------
    def internal_requests_signed(self) -> bool:
        """Whether internal requests carry a KIP-507 signature that :meth:`verify_internal_request`
        checks (a group on the ``sessioned`` protocol); a herder without a group: never."""
        return False

    def verify_internal_request(self, signature: Any) -> None:
        """Refuse an internal request whose KIP-507 signature is missing, of an algorithm not in
        ``inter.worker.verification.algorithms``, or wrong; nothing to check where no session key is used."""

    def put_task_configs(self, name: str, configs: list[dict[str, str]], signature: Any = None) -> None:
        raise NotImplementedError

    def fence_zombies(self, name: str, signature: Any = None) -> None:
        raise NotImplementedError
