"""The Starlette application: routes, error handling and middleware around one :class:`Herder`."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from cdc.metrics import MetricSource
from cdc.worker.herder import Herder
from cdc.worker.rest import admin, connectors, metrics, root, ui
from cdc.worker.rest.auth import BasicAuthMiddleware
from cdc.worker.rest.client import PeerClient
from cdc.worker.rest.context import RestContext
from cdc.worker.rest.errors import ConnectJSONResponse, install_error_handlers
from cdc.worker.rest.forwarding import HerderCaller
from cdc.worker.rest.loggers import Loggers
from cdc.worker.rest.middleware import (
    AdminListenerMiddleware,
    BodyLimitMiddleware,
    ResponseHeadersMiddleware,
    TrailingSlashMiddleware,
)
from cdc.worker.rest.openapi import OPENAPI
from cdc.worker.rest.settings import RestSettings
from cdc.worker.status_view import StatusView

__all__ = ["create_app"]

# Jetty's CrossOriginFilter defaults.
_CORS_DEFAULT_METHODS = ["GET", "POST", "HEAD"]
_CORS_HEADERS = ["X-Requested-With", "Content-Type", "Accept", "Origin"]


async def openapi(request: Request) -> Response:
    return ConnectJSONResponse(OPENAPI)


def create_app(
    herder: Herder,
    settings: RestSettings,
    *,
    loggers: Loggers | None = None,
    worker_metrics: MetricSource | None = None,
) -> Starlette:
    """The REST API of a worker. ``loggers`` is shared with whoever applies cluster-scoped log levels;
    ``worker_metrics`` is what ``/metrics`` shows besides the connectors' own metrics."""
    middleware = [
        # First, so that no path and no missing credential lets an unbounded body in.
        Middleware(BodyLimitMiddleware, max_bytes=settings.request_body_max_bytes),
        Middleware(ResponseHeadersMiddleware, actions=settings.response_headers),
    ]
    if settings.cors_allowed_origins:
        middleware.append(
            Middleware(
                CORSMiddleware,
                allow_origins=settings.cors_allowed_origins,
                allow_methods=settings.cors_allowed_methods or _CORS_DEFAULT_METHODS,
                allow_headers=_CORS_HEADERS,
            )
        )
    if settings.authenticator is not None:
        # After CORS (a browser's preflight carries no credentials), before any route.
        middleware.append(Middleware(BasicAuthMiddleware, authenticator=settings.authenticator))
    middleware.append(Middleware(TrailingSlashMiddleware))
    middleware.append(Middleware(AdminListenerMiddleware, enabled=settings.admin_separate))
    handlers: dict[object, object] = {}
    install_error_handlers(handlers)
    app = Starlette(
        routes=[
            *root.routes,
            *connectors.routes,
            *admin.routes,
            Route("/openapi.json", openapi),
            *metrics.routes,
            *ui.routes,
        ],
        middleware=middleware,
        exception_handlers=handlers,  # type: ignore[arg-type]
    )
    app.router.redirect_slashes = False
    app.state.rest = RestContext(
        herder,
        settings,
        HerderCaller(settings.request_timeout_s, PeerClient.from_settings(settings)),
        loggers or Loggers(),
    )
    app.state.admin_ports = set()
    app.state.metrics = metrics.Exposition(worker_metrics)
    app.state.status_view = StatusView(herder, lambda: metrics.readings(worker_metrics))
    return app
