"""The plugin registry: resolves the class names users write to our implementations.

Each plugin package exposes ``PLUGINS``, a map from every name a user may write (the Java FQCN, the
simple name, and for connectors the simple name without ``Connector``) to ``"module:attribute"``. Third
parties add theirs through the ``cdc.plugins`` entry-point group (name = class name users write,
value = ``module:attribute``). Modules are imported only when a plugin is first used, which keeps the
worker's start-up fast.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterable
from enum import Enum
from importlib.metadata import entry_points
from typing import Any

from cdc.api.errors import ConfigError, NotFoundError

__all__ = ["PluginKind", "Registry", "registry"]

_PACKAGES = (
    "cdc.converters",
    "cdc.transforms",
    "cdc.file",
    "cdc.mysql",
    "cdc.jdbc",
    "cdc.jdbcsink",
    "cdc.mirror",
)


class PluginKind(str, Enum):
    SOURCE = "source"
    SINK = "sink"
    CONVERTER = "converter"
    HEADER_CONVERTER = "header_converter"
    TRANSFORMATION = "transformation"
    PREDICATE = "predicate"
    CONFIG_PROVIDER = "config_provider"


class Registry:
    def __init__(self) -> None:
        self._targets: dict[str, str] = {}
        self._loaded: dict[str, Any] = {}
        self._discovered = False
        self._lock = threading.Lock()
        self._hidden_modules: frozenset[str] = frozenset()

    def _discover(self) -> None:
        if self._discovered:
            return
        with self._lock:  # threads racing here must all see the finished table
            if self._discovered:
                return
            self._discover_locked()
            self._discovered = True

    def _discover_locked(self) -> None:
        for package in _PACKAGES:
            try:
                module = importlib.import_module(package)
            except ImportError:
                continue
            self._targets.update(getattr(module, "PLUGINS", {}))
        for ep in entry_points(group="cdc.plugins"):
            self._targets.setdefault(ep.name, ep.value)

    def register(self, name: str, target: str | type) -> None:
        """Register ``name`` for a ``module:attribute`` string or a class (tests, embedding)."""
        self._discover()
        if isinstance(target, str):
            self._targets[name] = target
        else:
            self._targets[name] = f"{target.__module__}:{target.__qualname__}"
            self._loaded[name] = target

    def hide_modules(self, modules: Iterable[str]) -> None:
        """Offer no plugin implemented in ``modules`` (replaces what was hidden before): the worker's
        configuration decides (:mod:`cdc.worker.plugin_path`)."""
        self._hidden_modules = frozenset(modules)

    def _hidden(self, target: str | None) -> bool:
        return target is not None and target.partition(":")[0] in self._hidden_modules

    def is_hidden(self, name: str) -> bool:
        """Whether ``name`` is a plugin this worker has but does not offer (see :meth:`hide_modules`)."""
        self._discover()
        return self._hidden(self._targets.get(name.strip()))

    def names(self) -> list[str]:
        self._discover()
        return sorted(n for n, t in self._targets.items() if not self._hidden(t))

    def load(self, name: str) -> Any:
        """The class registered under ``name`` (whitespace trimmed)."""
        self._discover()
        name = name.strip()
        target = self._targets.get(name)
        if self._hidden(target):
            target = None
        elif name in self._loaded:
            return self._loaded[name]
        if target is None:
            raise NotFoundError(f"Failed to find any class that implements {name}")
        module_name, _, attr = target.partition(":")
        try:
            obj = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise ConfigError(f"Plugin {name} could not be loaded: {exc}") from exc
        self._loaded[name] = obj
        return obj

    def canonical(self) -> dict[str, str]:
        """One entry per distinct plugin: its canonical (longest dotted) name → target."""
        self._discover()
        by_target: dict[str, str] = {}
        for name, target in self._targets.items():
            if self._hidden(target):
                continue
            best = by_target.get(target)
            if best is None or (name.count("."), len(name)) > (best.count("."), len(best)):
                by_target[target] = name
        return {name: target for target, name in by_target.items()}

    def instantiate(self, name: str) -> Any:
        return self.load(name)()


registry = Registry()
