"""Composition roots: a standalone or distributed worker assembled from its properties.

``build_standalone`` and ``build_distributed`` differ only in the stores and the membership they hand
the one :class:`~cdc.worker.connect_herder.ConnectHerder`; the REST server, the worker and the logging
are the same.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from cdc.api.errors import ConfigError
from cdc.config import ConfigDef, mask_secrets
from cdc.kafka.clients import client_config, to_librdkafka
from cdc.logs import LogSettings, configure_logging
from cdc.worker.config import DISTRIBUTED_DEF, STANDALONE_DEF
from cdc.worker.connect_herder import ConnectHerder
from cdc.worker.membership import Membership, SoloMembership
from cdc.worker.settings import WorkerSettings
from cdc.worker.stores.base import ConfigBackingStore, OffsetBackingStore, StatusBackingStore
from cdc.worker.worker import Worker

__all__ = ["ConnectRuntime", "build_distributed", "build_standalone", "stop_on_signals"]

log = logging.getLogger(__name__)


def stop_on_signals(logger: logging.Logger = log) -> threading.Event:
    """An event that SIGTERM or SIGINT sets (logged on ``logger``): what a worker process waits on."""
    done = threading.Event()

    def handle(signum: int, frame: Any) -> None:
        logger.info("Received signal %s, shutting down", signum)
        done.set()

    signal.signal(signal.SIGTERM, handle)
    signal.signal(signal.SIGINT, handle)
    return done


@dataclass
class ConnectRuntime:
    herder: ConnectHerder
    rest: Any
    mode: str

    @property
    def url(self) -> str:
        return str(self.rest.advertised_url)

    def start(self) -> None:
        self.herder.start()
        self.rest.start()
        log.info("cdc %s worker %s started; REST API at %s", self.mode, self.herder.worker_id, self.url)

    def stop(self) -> None:
        log.info("Stopping the %s worker", self.mode)
        try:
            self.rest.stop()
        finally:
            self.herder.stop()
            # The plugin registry is the process's: a worker embedded in another process leaves it as found.
            from cdc.plugins import registry

            registry.hide_modules(())
        log.info("Worker stopped")

    def run_until_signalled(self) -> None:
        stop_on_signals().wait()
        self.stop()


def _parse(definition: ConfigDef, props: Mapping[str, str]) -> dict[str, Any]:
    try:
        return definition.parse(props)
    except ConfigError as exc:
        raise ConfigError(f"Invalid worker configuration: {exc}") from exc


def _resolved(props: Mapping[str, str]) -> dict[str, str]:
    from cdc.worker.config_providers import resolve_worker_config
    from cdc.worker.security import install_log_redaction, register_config_secrets

    install_log_redaction()  # before anything logs a resolved secret
    resolved = resolve_worker_config(props)
    register_config_secrets(props, resolved)
    return resolved


def _transformer(props: Mapping[str, str]) -> Any:
    from cdc.worker.config_providers import ConfigTransformer, instantiate_providers
    from cdc.worker.security import tracking_resolver

    providers = instantiate_providers(props)
    if not providers:
        return tracking_resolver(lambda config: dict(config))
    transformer = ConfigTransformer(providers)

    def resolve(config: dict[str, str]) -> dict[str, str]:
        resolved, _ttls = transformer.transform(config)
        return dict(resolved)

    return tracking_resolver(resolve)  # what it resolves is masked in logs and traces


def _rest_settings(props: Mapping[str, str]) -> Any:
    from cdc.worker.rest import RestSettings

    return RestSettings.from_properties(props)


def _cluster_id(props: Mapping[str, str]) -> Any:
    def fetch() -> str | None:
        from confluent_kafka.admin import AdminClient

        admin = AdminClient(to_librdkafka(client_config(props, "admin.")))
        return str(admin.describe_cluster(request_timeout=10).result(15).cluster_id)

    return fetch


def _assemble(
    props: dict[str, str],
    parsed: dict[str, Any],
    settings: WorkerSettings,
    stores: tuple[ConfigBackingStore, StatusBackingStore, OffsetBackingStore],
    membership_for: Any,
    mode: str,
) -> ConnectRuntime:
    from cdc.plugins import registry
    from cdc.worker.connect_metrics import ConnectMetrics
    from cdc.worker.file_paths import FilePolicy
    from cdc.worker.plugin_path import PluginSettings, apply_plugin_settings
    from cdc.worker.rest import RestServer

    # Discover the plugins before any thread may look one up: Registry._discover marks itself done before
    # it has read the packages, so a herder thread starting an assigned connector while a REST thread
    # validates a config could find no plugin at all ("Failed to find any class that implements ...").
    registry.names()
    # log.format, log.pattern, log.file, for the logging the cdc command set up (not an embedding program's)
    configure_logging(None, LogSettings.from_worker(parsed), install=False)
    apply_plugin_settings(PluginSettings.from_properties(props, mode), registry)
    # a relative or missing connector.file.allowed.paths entry stops the start, as allowed.paths does
    FilePolicy.of(settings.connector_file_allowed_paths, strict=True)
    rest_settings = _rest_settings(props)
    url, worker_id = rest_settings.advertised_url(), rest_settings.worker_id()
    config_store, status_store, offset_store = stores
    membership: Membership = membership_for(url)
    settings = replace(settings, worker_id=worker_id, resolve=_transformer(props))

    def make_worker(herder: ConnectHerder) -> Worker:
        return Worker(settings, offset_store, herder, herder, herder.on_topic_seen)

    herder = ConnectHerder(
        make_worker,
        config_store,
        status_store,
        offset_store,
        membership,
        _cluster_id(props),
    )
    rest = RestServer(herder, rest_settings, loggers=herder.loggers, worker_metrics=ConnectMetrics(herder))
    log.info("Worker configuration: %s", mask_secrets(props))
    return ConnectRuntime(herder, rest, mode)


def build_standalone(worker_props: Mapping[str, str]) -> ConnectRuntime:
    from cdc.worker.exactly_once import refuse_standalone
    from cdc.worker.stores.file import FileOffsetBackingStore
    from cdc.worker.stores.memory import MemoryConfigBackingStore, MemoryStatusBackingStore

    props = _resolved(worker_props)
    parsed = _parse(STANDALONE_DEF, props)
    settings = WorkerSettings.from_parsed(props, parsed)
    refuse_standalone(settings)
    stores = (
        MemoryConfigBackingStore(),
        MemoryStatusBackingStore(),
        FileOffsetBackingStore(str(settings.offset_storage_file_filename)),
    )
    return _assemble(props, parsed, settings, stores, lambda url: SoloMembership(url), "standalone")


def build_distributed(worker_props: Mapping[str, str]) -> ConnectRuntime:
    from cdc.kafka.failures import lookup_cluster_id
    from cdc.worker.distributed.membership import GroupMembership, GroupSettings
    from cdc.worker.stores.kafka import _SECURITY_PREFIXES, create_kafka_stores

    props = _resolved(worker_props)
    parsed = _parse(DISTRIBUTED_DEF, props)
    # As Connect's worker does first: a cluster that refuses our credentials fails the start at once,
    # saying so, instead of after the internal topics' creation timed out.
    lookup_cluster_id(
        {k: v for k, v in props.items() if k == "bootstrap.servers" or k.startswith(_SECURITY_PREFIXES)}
    )
    stores = create_kafka_stores(props)
    settings = WorkerSettings.from_parsed(props, parsed)
    group = GroupSettings.from_worker(parsed)
    memberships: list[GroupMembership] = []

    def membership_for(url: str) -> GroupMembership:
        member = GroupMembership(url, stores.configs, group, props, client_id=settings.client_id or None)
        memberships.append(member)
        return member

    runtime = _assemble(
        props,
        parsed,
        settings,
        (stores.configs, stores.statuses, stores.offsets),
        membership_for,
        "distributed",
    )
    for member in memberships:
        member.set_listener(runtime.herder.wake)  # a new assignment is reconciled at once
    return runtime
