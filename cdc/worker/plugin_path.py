"""Which plugins a worker loads: ``plugin.path`` honoured, the FileStream connectors only where enabled.

As Connect: every entry of ``plugin.path`` is searched for plugins. Ours are Python distributions: an
entry that holds installed distributions (``pip install --target DIR``, so ``*.dist-info`` directories)
with ``cdc.plugins`` entry points adds them, and the entry joins the end of ``sys.path`` so that their
modules import (only such entries: a ``plugin.path=/tmp/`` of Java jars is not put on the import path).

The FileStream connectors read and write any file the worker's user may (the TLS key, the REST
credentials file, the config providers' secrets), so anyone with REST access could copy or change them.
Kafka took them off the default class path in 3.2 for that reason; here:

* a standalone worker keeps them (one user, the one who started it, writes its connector files, and the
  seed configs run them unchanged);
* a distributed worker loads them only when its configuration says so, in Kafka's way (a ``plugin.path``
  entry naming Kafka's ``connect-file`` jar or a directory holding it, e.g. ``plugin.path=libs/connect-
  file-3.7.0.jar`` or ``plugin.path=/opt/kafka/libs``) or with the plain switch
  ``filestream.connectors.enable=true``.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import distributions

from cdc.config.settings import setting, settings_from
from cdc.plugins import Registry

__all__ = ["FILESTREAM_HINT", "FILESTREAM_SWITCH", "PluginSettings", "apply_plugin_settings"]

log = logging.getLogger(__name__)

FILESTREAM_SWITCH = "filestream.connectors.enable"
FILESTREAM_MODULES = ("cdc.file.source", "cdc.file.sink")
FILESTREAM_HINT = (
    "The FileStream connectors read and write the worker's files, so this worker does not offer them (a "
    "distributed worker offers them only when its configuration says so): set "
    f"{FILESTREAM_SWITCH}=true (or add a plugin.path entry naming Kafka's connect-file jar, e.g. "
    "plugin.path=/opt/kafka/libs) in every worker's properties file and restart the workers "
    "(docs/security.md, 'Plugins')"
)
"""Said with the 400 of a connector class this worker hides (the only ones it hides are FileStream's)."""
_CONNECT_FILE = re.compile(r"^connect-file([-.].*)?$")


@dataclass(frozen=True)
class _PluginKeys:
    plugin_path: tuple[str, ...] | None = setting("plugin.path")
    filestream: bool | None = setting(FILESTREAM_SWITCH)


@dataclass(frozen=True)
class PluginSettings:
    plugin_path: tuple[str, ...] = ()
    filestream: bool = True

    @classmethod
    def from_properties(cls, props: Mapping[str, str], mode: str) -> PluginSettings:
        """``mode``: ``standalone`` (FileStream on) or ``distributed`` (FileStream only when enabled)."""
        from cdc.worker.config import PLUGIN_DEF

        keys = settings_from(_PluginKeys, PLUGIN_DEF.parse(props))
        paths = tuple(p.strip() for p in keys.plugin_path or () if p.strip())
        if keys.filestream is not None:
            return cls(paths, keys.filestream)
        return cls(paths, mode == "standalone" or any(_names_connect_file(p) for p in paths))


def _names_connect_file(entry: str) -> bool:
    base = os.path.basename(entry.rstrip("/"))
    if _CONNECT_FILE.match(base):
        return True
    try:
        return any(_CONNECT_FILE.match(name) for name in os.listdir(entry))
    except OSError:
        return False


def apply_plugin_settings(settings: PluginSettings, registry: Registry) -> None:
    """Load the plugins of ``plugin.path`` into ``registry`` and hide what the worker must not offer."""
    for entry in settings.plugin_path:
        _load_entry(entry, registry)
    hidden = () if settings.filestream else FILESTREAM_MODULES
    registry.hide_modules(hidden)
    if hidden:
        log.info(
            "The FileStream connectors are not loaded (they read and write the worker's files): enable "
            "them with %s=true or a plugin.path entry naming Kafka's connect-file jar",
            FILESTREAM_SWITCH,
        )


def _load_entry(entry: str, registry: Registry) -> None:
    if not os.path.isdir(entry):
        if not _names_connect_file(entry):
            log.debug("plugin.path entry %s is not a directory of Python plugins", entry)
        return
    found: Sequence[tuple[str, str]] = [
        (ep.name, ep.value)
        for dist in distributions(path=[entry])
        for ep in dist.entry_points
        if ep.group == "cdc.plugins"
    ]
    if not found:
        log.debug("plugin.path entry %s holds no cdc plugins", entry)
        return
    if entry not in sys.path:
        sys.path.append(entry)
    for name, target in found:
        registry.register(name, target)
    log.info("Loaded %d plugin names from %s", len(found), entry)
