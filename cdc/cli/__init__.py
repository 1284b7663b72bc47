"""The ``cdc`` command.

``cdc standalone WORKER.properties [CONNECTOR.properties|.json ...]`` and ``cdc distributed
WORKER.properties`` start a worker exactly as Kafka's ``connect-standalone`` / ``connect-distributed``
scripts do, reading the same files; ``cdc mirror-maker mm2.properties`` runs MirrorMaker 2 as
``connect-mirror-maker.sh`` does.
"""

from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Sequence

from cdc import __version__, gc_settings

__all__ = ["main"]

log = logging.getLogger("cdc")


def _standalone(args: argparse.Namespace) -> int:
    gc_settings.pause()  # until tune(): start-up's imports, collected once there
    from cdc.worker.properties import load_connector_config, load_properties
    from cdc.worker.runtime import build_standalone

    runtime = build_standalone(load_properties(args.worker_config))
    gc_settings.tune()
    runtime.start()
    try:
        for path in args.connector_configs:
            config = load_connector_config(path)
            name = config.get("name")
            if not name:
                raise SystemExit(f"{path}: connector config has no 'name'")
            runtime.herder.put_connector_config(name, config, allow_replace=True)
            log.info("Created connector %s", name)
    except Exception as exc:
        log.error("Failed to create connector: %s", exc)
        runtime.stop()
        return 1
    runtime.run_until_signalled()
    return 0


def _distributed(args: argparse.Namespace) -> int:
    gc_settings.pause()  # until tune(): start-up's imports, collected once there
    from cdc.worker.properties import load_properties
    from cdc.worker.runtime import build_distributed

    runtime = build_distributed(load_properties(args.worker_config))
    gc_settings.tune()
    runtime.start()
    runtime.run_until_signalled()
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cdc",
        description="Change-data-capture connectors and a Kafka-Connect-compatible worker.",
    )
    parser.add_argument("--version", action="version", version=f"cdc {__version__}")
    parser.add_argument(
        "--log-level",
        default=os.environ.get("CDC_LOG_LEVEL", "INFO"),
        help="root log level (default INFO; env CDC_LOG_LEVEL)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sa = sub.add_parser(
        "standalone",
        help="run a standalone worker with connectors from files",
        description="Run a standalone worker (offsets in a local file), like connect-standalone.",
    )
    sa.add_argument("worker_config", help="worker .properties file")
    sa.add_argument("connector_configs", nargs="*", help="connector .properties or .json files")
    sa.set_defaults(func=_standalone)
    di = sub.add_parser(
        "distributed",
        help="run a distributed worker (state in Kafka's internal topics)",
        description="Run a distributed worker, like connect-distributed.",
    )
    di.add_argument("worker_config", help="worker .properties file")
    di.set_defaults(func=_distributed)
    from cdc.cli.snapshot import add_parser as add_snapshot_parser

    add_snapshot_parser(sub)  # cdc snapshot: the parallel snapshot on Spark
    from cdc.cli.consume import add_parser as add_consume_parser

    add_consume_parser(sub)  # cdc consume: print a topic, as kafka-console-consumer
    from cdc.cli.mirror_maker import add_parser as add_mirror_maker_parser

    add_mirror_maker_parser(sub)  # cdc mirror-maker: MirrorMaker 2 in dedicated mode
    ve = sub.add_parser("version", help="print the version")
    ve.set_defaults(func=lambda _args: print(f"cdc {__version__}") or 0)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    from cdc.logs import configure_logging

    configure_logging(args.log_level.upper())
    try:
        return int(args.func(args) or 0)
    except Exception as exc:
        from cdc.api.errors import ConfigError, FatalError

        if isinstance(exc, (ConfigError, FatalError, FileNotFoundError)):  # e.g. an unreadable offsets file
            log.error("%s", exc)
            return 1
        raise
