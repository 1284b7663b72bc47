"""``cdc mirror-maker mm2.properties [--clusters ALIAS ...]``: MirrorMaker 2 in dedicated mode, as Kafka's
``connect-mirror-maker.sh`` runs it.

One distributed worker per herder pair ``source->target`` (``MirrorMakerSettings.pairs``; with
``--clusters``, only the pairs into those target clusters), each in the group ``<source>-mm2`` on the target
cluster with MM2's internal topics, all in this process. Whichever node leads a pair's group writes the
three connectors' configs (``MirrorSourceConnector``, ``MirrorHeartbeatConnector``,
``MirrorCheckpointConnector``) when it becomes leader and they differ from the file's, as MirrorHerder does;
the group then runs them like any connector. Since the groups, topics and connector names are MM2's own, a
flow moves between Java's MirrorMaker and this command in either direction: the offsets topic is shared.

REST: with ``dedicated.mode.enable.internal.rest=true``, pair *i* (in the order of every pair of the file,
so that all nodes agree) serves its worker's REST API on ``listeners``' port + *i* (default 8083), so that
a follower can hand its task configs to the leader of a multi-node group; without it, each worker listens
on a free loopback port only (one node is enough: its leader writes its task configs itself; several nodes
need the internal REST, as in Java).
"""

from __future__ import annotations

import argparse
import logging
import threading
from typing import Any

from cdc.cli.mirror_maker_config import CONNECTOR_CLASSES, Flow, MirrorMakerSettings
from cdc.errors import ConfigError

__all__ = ["add_parser", "rest_properties"]

log = logging.getLogger("cdc.mirror_maker")


def rest_properties(settings: MirrorMakerSettings, index: int) -> dict[str, str]:
    """The REST listener of the ``index``-th herder pair's worker (see the module's doc)."""
    if not settings.internal_rest:
        return {"listeners": "http://127.0.0.1:0", "rest.advertised.host.name": "127.0.0.1"}
    from cdc.worker.rest.settings import parse_listeners

    listeners = parse_listeners(settings.raw.get("listeners", "http://:8083"))
    if len(listeners) != 1:
        raise ConfigError(
            "cdc mirror-maker serves one listener per pair", "listeners", settings.raw["listeners"]
        )
    first = listeners[0]
    if first.port == 0:
        raise ConfigError(
            "a fixed port is needed: pair i listens on port + i", "listeners", settings.raw["listeners"]
        )
    port = first.port + index
    props = {"listeners": f"{first.scheme}://{first.host}:{port}"}
    for key in ("rest.advertised.host.name", "rest.advertised.listener"):
        if key in settings.raw:
            props[key] = settings.raw[key]
    if "rest.advertised.port" in settings.raw:
        props["rest.advertised.port"] = str(int(settings.raw["rest.advertised.port"]) + index)
    return props


class ConnectorConfigurer:
    """MirrorHerder.rebalanceSuccess: on becoming the leader of a pair's group, write each connector's config
    where it differs from the file's (retried each second while this node leads and one did not take)."""

    def __init__(self, settings: MirrorMakerSettings, flow: Flow, herder: Any) -> None:
        self.settings, self.flow, self.herder = settings, flow, herder
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"mm2-configure-{flow}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)

    def configure_once(self) -> bool:
        """Write what differs; True when every connector's config is the file's."""
        done = True
        for connector_class in CONNECTOR_CLASSES:
            desired = self.settings.connector_config(self.flow, connector_class)
            name = desired["name"]
            actual = self.herder.config_store.snapshot().connector_configs.get(name)
            if actual is not None and dict(actual) == desired:
                continue
            try:
                self.herder.put_connector_config(name, desired, allow_replace=True)
                log.info("%s connector configured for %s.", name, self.flow)
            except Exception as exc:
                log.error("Failed to configure %s connector for %s: %s", name, self.flow, exc)
                done = False
        return done

    def _run(self) -> None:
        was_leader = configured = False
        while not self._stop.wait(1.0):
            leader = self.herder.membership.is_leader()
            if leader and (not was_leader or not configured):
                if not was_leader:
                    log.info("This node is now a leader for %s. Configuring connectors...", self.flow)
                configured = self.configure_once()
            was_leader = leader
            if not leader:
                configured = False


def _run(args: argparse.Namespace) -> int:
    from cdc import gc_settings
    from cdc.worker.properties import load_properties
    from cdc.worker.runtime import build_distributed, stop_on_signals

    settings = MirrorMakerSettings.parse(load_properties(args.config))
    targets = tuple(args.clusters or ())
    for alias in targets:
        if alias not in settings.clusters:
            raise ConfigError(f"not one of clusters ({', '.join(settings.clusters)})", "--clusters", alias)
    every = settings.pairs()
    mine = settings.pairs(targets)
    if not mine:
        raise ConfigError("No source->target replication flows.")
    log.info("Targeting clusters %s with %d herders: %s", targets or settings.clusters, len(mine), mine)
    started: list[tuple[Any, ConnectorConfigurer]] = []
    done = stop_on_signals(log)
    try:
        for flow in mine:
            props = {**settings.worker_config(flow), **rest_properties(settings, every.index(flow))}
            runtime = build_distributed(props)
            runtime.start()
            configurer = ConnectorConfigurer(settings, flow, runtime.herder)
            configurer.start()
            started.append((runtime, configurer))
            log.info("Herder for %s started (group %s)", flow, props["group.id"])
        gc_settings.tune()
        log.info("cdc MirrorMaker started")
        done.wait()
    finally:
        for runtime, configurer in reversed(started):
            configurer.stop()
            try:
                runtime.stop()
            except Exception:
                log.exception("Error stopping a herder")
    log.info("cdc MirrorMaker stopped.")
    return 0


def add_parser(sub: Any) -> None:
    mm = sub.add_parser(
        "mirror-maker",
        help="run MirrorMaker 2 in dedicated mode from an mm2.properties",
        description="Replicate topics and consumer offsets between clusters, as connect-mirror-maker.sh.",
    )
    mm.add_argument("config", metavar="mm2.properties", help="MM2 configuration file")
    mm.add_argument(
        "--clusters", nargs="+", metavar="CLUSTER", help="target clusters for this node (default all)"
    )
    mm.set_defaults(func=_run)
