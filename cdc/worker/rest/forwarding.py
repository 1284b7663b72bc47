"""Calls into the herder, with Connect's timeout and request forwarding (``HerderRequestHandler``).

Herder methods block (they may wait for a rebalance or a write to the config topic), so they run in a
worker thread, abandoned after the request timeout (90 s → 500 "Request timed out"). A herder that
raises :class:`~cdc.worker.errors.NotLeaderError` / :class:`~cdc.worker.errors.NotAssignedError` names
the worker that can serve the request; it is re-sent there with ``forward=true`` when the request came
from a user (no ``forward`` parameter), with ``forward=false`` when it had ``forward=true``, and refused
with 409 when it already had ``forward=false``: two hops at most. The target's status and body are relayed.
The user's ``Authorization`` header goes along (the target checks it again), and ``https`` targets are
reached with the worker's trust store (:class:`~cdc.worker.rest.client.PeerClient`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio
import anyio.to_thread
import requests
from starlette.requests import Request

from cdc.worker.errors import NotAssignedError, NotLeaderError, RebalanceNeededError
from cdc.worker.rest.client import PeerClient
from cdc.worker.rest.errors import (
    CONFLICTING_OPERATION,
    NO_LEADER_URL,
    STALE_CONFIGURATION,
    RestError,
)
from cdc.worker.rest.signature import ALGORITHM_HEADER, SIGNATURE_HEADER

__all__ = ["Forwarded", "HerderCaller", "forward_request"]

log = logging.getLogger(__name__)

T = TypeVar("T")

_COPIED_HEADERS = ("Authorization", SIGNATURE_HEADER, ALGORITHM_HEADER)
_RAW = object()


@dataclass(frozen=True)
class Forwarded:
    """The answer of the worker a request was forwarded to (a 2xx; errors are raised as RestError)."""

    status: int
    body: Any  # parsed JSON, None when the answer had no body


def forward_request(
    base_url: str,
    method: str,
    path: str,
    query: Sequence[tuple[str, str]],
    body: bytes | None,
    headers: dict[str, str],
    timeout: float,
    client: PeerClient | None = None,
) -> Forwarded:
    url = base_url.rstrip("/") + path
    log.debug("Forwarding request %s %s %s", method, url, query)
    try:
        response = (client or PeerClient()).request(
            method, url, params=list(query), data=body, headers=headers, timeout=timeout
        )
    except (requests.ConnectionError, requests.Timeout) as e:
        # The leader (or owner) is unreachable: typically it just died and the group has not yet
        # noticed. That is a rebalance in the making, so answer what Connect answers during a
        # rebalance (409, retry later) rather than its 500 for an I/O error.
        raise RestError(
            409,
            "Cannot complete request because of a conflicting operation (e.g. worker rebalance): "
            f"the worker at {base_url} did not answer ({type(e).__name__})",
        ) from None
    except requests.RequestException as e:
        raise RestError(500, f"IO Error trying to forward REST request: {e}") from None
    parsed: Any = None
    if response.content:
        try:
            parsed = response.json()
        except ValueError:
            parsed = None
    if response.status_code >= 400:
        message = parsed.get("message") if isinstance(parsed, dict) else None
        raise RestError(response.status_code, str(message) if message is not None else response.text)
    return Forwarded(response.status_code, parsed)


class HerderCaller:
    """Runs one herder call for one request: timeout, error translation, forwarding."""

    def __init__(self, timeout_s: float, client: PeerClient | None = None) -> None:
        self.timeout_s = timeout_s
        self.client = client or PeerClient()

    async def __call__(
        self,
        request: Request,
        fn: Callable[[], T],
        *,
        write: bool = False,
        body: Any = _RAW,
        timeout_s: float | None = None,
    ) -> T | Forwarded:
        """``fn()``'s result, or the forwarded answer. ``body`` is what to forward (default: the raw body)."""
        try:
            with anyio.fail_after(self.timeout_s if timeout_s is None else timeout_s):
                return await anyio.to_thread.run_sync(fn, abandon_on_cancel=True)
        except TimeoutError:
            raise RestError(500, "Request timed out") from None
        except (NotLeaderError, NotAssignedError) as e:
            return await self._forward(request, e.url, body)
        except RebalanceNeededError:
            if write:
                raise RestError(409, STALE_CONFIGURATION) from None
            raise

    async def _forward(self, request: Request, url: str | None, body: Any) -> Forwarded:
        incoming = request.query_params.get("forward")
        # Jersey reads a Boolean query parameter as "true" (any case) or false.
        if incoming is not None and incoming.lower() != "true":
            raise RestError(409, CONFLICTING_OPERATION)
        if url is None:
            raise RestError(409, NO_LEADER_URL)
        query = [(k, v) for k, v in request.query_params.multi_items() if k != "forward"]
        query.insert(0, ("forward", "true" if incoming is None else "false"))
        raw_path = request.scope.get("raw_path")
        path = raw_path.decode("latin-1") if isinstance(raw_path, bytes) else request.url.path
        data = await request.body() if body is _RAW else json.dumps(body).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        for name in _COPIED_HEADERS:
            value = request.headers.get(name)
            if value is not None:
                headers[name] = value
        return await anyio.to_thread.run_sync(
            forward_request,
            url,
            request.method,
            path,
            query,
            data or None,
            headers,
            self.timeout_s,
            self.client,
        )
