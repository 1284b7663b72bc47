"""Errors of the runtime that the REST layer turns into Connect's status codes and messages.

::

    ConnectError (cdc.api.errors)
    ├── NotFoundError           404  unknown connector, task, plugin or logger
    ├── AlreadyExistsError      409  POST of an existing name
    ├── BadRequestError         400  invalid config, name mismatch, offsets change while not STOPPED …
    ├── ConflictError           409  rebalance in progress, no known leader, stale configuration
    ├── ForbiddenError          403  topic tracking disabled, bad request signature
    ├── RequestTimeoutError     500  "Request timed out"
    └── NotLeaderError / NotAssignedError   forwarded to ``url`` by the REST layer (distributed mode)
"""

from __future__ import annotations

from cdc.api.errors import AlreadyExistsError, ConnectError, NotFoundError

__all__ = [
    "AlreadyExistsError",
    "BadRequestError",
    "ConflictError",
    "ForbiddenError",
    "NotAssignedError",
    "NotFoundError",
    "NotLeaderError",
    "RebalanceNeededError",
    "RequestTimeoutError",
    "status_of",
]


class BadRequestError(ConnectError):
    pass


class ConflictError(ConnectError):
    pass


class ForbiddenError(ConnectError):
    pass


class RequestTimeoutError(ConnectError):
    def __init__(self, message: str = "Request timed out") -> None:
        super().__init__(message)


class RebalanceNeededError(ConnectError):
    """The herder expects a rebalance; writes answer 409, plain reads 500 (as Connect does)."""

    def __init__(self, message: str = "Request cannot be completed because a rebalance is expected") -> None:
        super().__init__(message)


class _Redirect(ConnectError):
    def __init__(self, message: str, url: str | None) -> None:
        super().__init__(message)
        self.url = url


class NotLeaderError(_Redirect):
    """Only the leader may do this; ``url`` is the leader's REST URL (None if unknown)."""


class NotAssignedError(_Redirect):
    """Another worker owns this connector or task; ``url`` is its REST URL."""


def status_of(error: BaseException) -> int:
    """The HTTP status Connect answers for ``error``."""
    if isinstance(error, NotFoundError):
        return 404
    if isinstance(error, (AlreadyExistsError, ConflictError)):
        return 409
    if isinstance(error, BadRequestError):
        return 400
    if isinstance(error, ForbiddenError):
        return 403
    return 500
