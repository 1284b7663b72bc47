"""``GET /ui``: the worker's status page, and ``GET /ui/status``, the JSON it refreshes itself from.

Read-only, behind the same authentication as the rest of the API (the middleware covers every route).
The page is one static file (``static/status.html``: HTML, CSS and plain JavaScript, no build step, no
library): it polls ``/ui/status`` every two seconds and redraws in place (connectors, tasks, traces of
failed tasks, lag, snapshot progress with ETA, and SVG plots of events/s and lag).
"""

from __future__ import annotations

from importlib.resources import files

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from cdc.worker.rest.context import endpoint, json
from cdc.worker.status_view import StatusView

__all__ = ["routes"]

_PAGE = files("cdc.worker.rest").joinpath("static/status.html")


async def page(request: Request) -> Response:
    return HTMLResponse(_PAGE.read_text(encoding="utf-8"), headers={"Cache-Control": "no-store"})


@endpoint
async def status(request: Request) -> Response:
    view: StatusView = request.app.state.status_view
    return json(view.status(), headers={"Cache-Control": "no-store"})


routes = [Route("/ui", page, methods=["GET"]), Route("/ui/status", status, methods=["GET"])]
