"""Calls into the herder, with Connect's timeout and request forwarding (``HerderRequestHandler``).

Herder methods block (they may wait for a rebalance or a write to the config topic), so they run in a
worker thread, abandoned after the request timeout (90 s → 500 "Request timed out"). A herder that
raises :class:`~cdc.worker.errors.NotLeaderError` / :class:`~cdc.worker.errors.NotAssignedError` names
the worker that can serve the request; it is re-sent there with ``forward=true`` when the request came
from a user (no ``forward`` parameter), with ``forward=false`` when it had ``forward=true``, and refused
with 409 when it already had ``forward=false``: two hops at most. The target's status and body are relayed.
The user's ``Authorization`` header goes along (the target checks it again), and ``https`` targets are
reached with the worker's trust store (:class:`~cdc.worker.rest.client.PeerClient`).

A target that does not answer (connection refused or reset, no answer in time) is most often a leader
that just died, before the group has noticed: a rebalance in the making. The request then waits for it
to settle: the herder is asked again (with a backoff) who serves the request now, and the request is
re-sent there, or served here if this worker took over; that bounded by the request timeout, after which
the answer is Connect's 409 for a rebalance, never a 500. Errors that a target answers (4xx, 5xx) are
relayed as they are, never retried. A request re-sent after a connection reset may have taken effect the
first time: a create then answers 409 "Connector X already exists", a delete 404.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio
import anyio.to_thread
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

__all__ = ["Forwarded", "HerderCaller", "TargetUnreachable", "forward_request"]

log = logging.getLogger(__name__)

T = TypeVar("T")

_COPIED_HEADERS = ("Authorization", SIGNATURE_HEADER, ALGORITHM_HEADER)
_RAW = object()
_CONNECT_TIMEOUT_S = 5.0  # a peer that does not even accept the connection within this is unreachable
_FIRST_BACKOFF_S = 0.1
_MAX_BACKOFF_S = 1.0


class TargetUnreachable(RestError):
    """The worker a request was forwarded to did not answer: 409, as Connect answers during a rebalance."""

    def __init__(self, base_url: str, cause: BaseException) -> None:
        super().__init__(
            409, f"{CONFLICTING_OPERATION}: the worker at {base_url} did not answer ({type(cause).__name__})"
        )
        self.base_url = base_url


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
    timeout: float | tuple[float, float],
    client: PeerClient | None = None,
) -> Forwarded:
    """``method path`` on ``base_url``: its 2xx as :class:`Forwarded`, its error as :class:`RestError` with
    its status and message; :class:`TargetUnreachable` when it did not answer."""
    import requests  # here, not at the top: a worker that never forwards does not load it

    # Errors of the connection itself: the target did not answer (a dead worker), as opposed to its answer.
    unreachable = (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError)
    url = base_url.rstrip("/") + path
    log.debug("Forwarding request %s %s %s", method, url, query)
    try:
        response = (client or PeerClient()).request(
            method, url, params=list(query), data=body, headers=headers, timeout=timeout
        )
    except requests.exceptions.SSLError as e:  # reached, but refused by TLS: no rebalance will cure that
        raise RestError(500, f"IO Error trying to forward REST request: {e}") from None
    except unreachable as e:
        # The leader (or owner) is unreachable: typically it just died and the group has not yet
        # noticed. That is a rebalance in the making: HerderCaller waits for it, then answers what
        # Connect answers during a rebalance (409, retry later) rather than a 500 for an I/O error.
        raise TargetUnreachable(base_url, e) from None
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
        budget = self.timeout_s if timeout_s is None else timeout_s
        deadline = anyio.current_time() + budget
        try:
            with anyio.fail_after(budget):
                return await anyio.to_thread.run_sync(fn, abandon_on_cancel=True)
        except TimeoutError:
            raise RestError(500, "Request timed out") from None
        except (NotLeaderError, NotAssignedError) as e:
            return await self._forward_until_answered(request, fn, e.url, body, write, deadline)
        except RebalanceNeededError:
            if write:
                raise RestError(409, STALE_CONFIGURATION) from None
            raise

    async def _forward_until_answered(
        self, request: Request, fn: Callable[[], T], url: str | None, body: Any, write: bool, deadline: float
    ) -> T | Forwarded:
        """Forward to ``url``; while the target does not answer, wait for the rebalance that its death
        brings, ask the herder again where the request goes, and go there (or serve it here), until
        ``deadline``: then 409."""
        try:
            return await self._forward(request, url, body, deadline)
        except TargetUnreachable as e:
            unreachable = e
        log.warning(
            "The worker at %s did not answer %s %s; waiting for the group to settle",
            unreachable.base_url,
            request.method,
            request.url.path,
        )
        backoff = _FIRST_BACKOFF_S
        while deadline - anyio.current_time() > backoff:
            await anyio.sleep(backoff)
            backoff = min(2 * backoff, _MAX_BACKOFF_S)
            try:
                with anyio.fail_after(max(deadline - anyio.current_time(), 0.001)):
                    return await anyio.to_thread.run_sync(fn, abandon_on_cancel=True)
            except TimeoutError:
                break
            except (NotLeaderError, NotAssignedError) as e:
                url = e.url
            except RebalanceNeededError:
                if write:
                    raise RestError(409, STALE_CONFIGURATION) from None
                raise
            if url is None:  # the group is rebalancing: no leader known yet
                continue
            try:
                return await self._forward(request, url, body, deadline)
            except TargetUnreachable as e:
                unreachable = e
        raise unreachable

    async def _forward(self, request: Request, url: str | None, body: Any, deadline: float) -> Forwarded:
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
        read_s = max(deadline - anyio.current_time(), 1.0)
        return await anyio.to_thread.run_sync(
            forward_request,
            url,
            request.method,
            path,
            query,
            data or None,
            headers,
            (min(_CONNECT_TIMEOUT_S, read_s), read_s),
            self.client,
        )
