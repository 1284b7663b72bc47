"""The worker's REST API, compatible with Kafka Connect's (see ``connect-and-debezium.md`` §1).

* :func:`create_app` builds the Starlette app over a :class:`~cdc.worker.herder.Herder`;
* :class:`RestServer` runs it with uvicorn in a background thread;
* :class:`RestSettings` reads the REST keys of the worker properties.

Modules: ``settings`` (listeners, advertised URL), ``app`` (assembly), ``root`` / ``connectors`` /
``admin`` (routes), ``body`` (JSON bodies), ``forwarding`` (herder calls, timeout, forwarding),
``errors`` (error bodies), ``loggers`` (log levels), ``signature`` (internal request signatures),
``auth`` (basic authentication), ``exposure`` (the open-listener refusal), ``tls`` and ``client`` (HTTPS for
listeners and for calls between workers), ``overrides`` (the client override policy), ``middleware``,
``openapi``, ``server``. ``docs/security.md`` tells users how the pieces fit.
"""

from cdc.worker.rest.app import create_app
from cdc.worker.rest.errors import RestError
from cdc.worker.rest.forwarding import Forwarded
from cdc.worker.rest.loggers import Loggers
from cdc.worker.rest.openapi import OPENAPI
from cdc.worker.rest.server import RestServer
from cdc.worker.rest.settings import HeaderAction, Listener, RestSettings, SslSettings
from cdc.worker.rest.signature import RequestSignature, sign

__all__ = [
    "OPENAPI",
    "Forwarded",
    "HeaderAction",
    "Listener",
    "Loggers",
    "RequestSignature",
    "RestError",
    "RestServer",
    "RestSettings",
    "SslSettings",
    "create_app",
    "sign",
]
