"""Config providers: ``${alias:path:key}`` placeholders resolved from files, directories and the environment.

A worker declares its providers the way Kafka's does (KIP-297, KIP-887, KIP-993)::

    config.providers=file,env,dir
    config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider
    config.providers.file.param.allowed.paths=/etc/kafka/secrets
    config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider
    config.providers.env.param.allowlist.pattern=^DB_.*
    config.providers.dir.class=org.apache.kafka.common.config.provider.DirectoryConfigProvider

and a connector config refers to values with placeholders:

* ``${file:/etc/kafka/secrets/db.properties:password}`` — key ``password`` of that properties file
  (read as Java's ``Properties.load(Reader)`` reads it, see :mod:`cdc.worker.properties`);
* ``${dir:/run/secrets:db_password}`` — the whole content of the file ``db_password`` in that
  directory, as UTF-8, not stripped (a trailing newline stays, as in Kafka);
* ``${env:DB_PASSWORD}`` or ``${env::DB_PASSWORD}`` — an environment variable. Kafka's pattern is
  ``\\$\\{([^}]*?):(([^}]*?):)?([^}]*?)\\}``, so both spellings give an empty path, which is the only path
  ``EnvVarConfigProvider`` accepts (any other is an error).

:class:`ConfigTransformer` follows Kafka's ``ConfigTransformer``: it gathers the keys per provider and
path, asks each provider once, and replaces each placeholder. A placeholder whose alias is not
configured, or whose key the provider does not have, is left as the original text. Errors a provider
raises (an unreadable properties file, a path given to the env provider, an allowlist path that does not
exist) are :class:`ConfigError`.

One deliberate difference: Kafka's file and directory providers *log* a path outside
``allowed.paths`` and return nothing, so the placeholder silently stays in the config. Here it raises
:class:`ConfigError` ("The path … is not allowed to be accessed"), so the task fails at start with the
reason rather than later with a literal ``${file:…}`` as its password.

Resolved values are secrets: the runtime resolves a connector's config when a task starts and never
writes the result back to the config store, the REST API or logs; :func:`is_from_provider` tells which
raw values to treat that way.
"""

from __future__ import annotations

import logging
import os
import re
from abc import ABC, abstractmethod
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import TypeVar, cast

from cdc.api.errors import ConfigError
from cdc.worker.properties import decode_properties_bytes, parse_properties

__all__ = [
    "CONFIG_PROVIDERS_CONFIG",
    "PROVIDER_CLASSES",
    "VARIABLE_PATTERN",
    "AllowedPaths",
    "ConfigData",
    "ConfigProvider",
    "ConfigTransformer",
    "DirectoryConfigProvider",
    "EnvVarConfigProvider",
    "FileConfigProvider",
    "instantiate_providers",
    "is_from_provider",
    "resolve_worker_config",
]

log = logging.getLogger(__name__)

CONFIG_PROVIDERS_CONFIG = "config.providers"
ALLOWED_PATHS_CONFIG = "allowed.paths"
ALLOWLIST_PATTERN_CONFIG = "allowlist.pattern"

V = TypeVar("V")

VARIABLE_PATTERN = re.compile(r"\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}")
"""Kafka's ``ConfigTransformer.DEFAULT_PATTERN``: ``${provider:[path:]key}``."""


@dataclass(frozen=True)
class ConfigData:
    """What a provider returns: values by key, and how long they stay valid (ms), if they expire."""

    data: dict[str, str] = field(default_factory=dict)
    ttl: int | None = None


class ConfigProvider(ABC):
    """Kafka's ``ConfigProvider``: values by key at a path."""

    def configure(self, configs: Mapping[str, str]) -> None:
        """Receive the ``config.providers.<alias>.param.*`` settings (prefix removed)."""
        return None

    @abstractmethod
    def get(self, path: str, keys: Collection[str] | None = None) -> ConfigData:
        """The values at ``path``: all of them, or only ``keys`` (missing keys are left out)."""

    def close(self) -> None:
        """Release what the provider holds (the built-in ones hold nothing)."""
        return None


class AllowedPaths:
    """Kafka's ``allowed.paths``: a comma-separated list of absolute, existing paths.

    Paths are compared after lexical normalisation (``..`` and ``.`` removed, symlinks not followed) and
    component by component, so ``/a/bc`` is not inside ``/a/b``. Without the setting everything is
    allowed.
    """

    def __init__(self, config_value: str | None) -> None:
        self._allowed: list[PurePath] | None = None
        if config_value:
            allowed = []
            for raw in config_value.split(","):
                path = PurePath(os.path.normpath(raw))  # Java does not trim: " /a" is not absolute
                if not path.is_absolute():
                    raise ConfigError(f"Path {path} is not absolute")
                if not os.path.exists(path):
                    raise ConfigError(f"Path {path} does not exist")
                allowed.append(path)
            self._allowed = allowed

    def check(self, path: str) -> str:
        """``path`` (normalised when a list is configured), or ConfigError if it lies outside the list."""
        if self._allowed is None:
            return path
        normalised = PurePath(os.path.normpath(path))
        if not any(normalised.is_relative_to(allowed) for allowed in self._allowed):
            log.warning("The path %s is not allowed to be accessed", path)
            raise ConfigError(f"The path {path} is not allowed to be accessed")
        return str(normalised)


class FileConfigProvider(ConfigProvider):
    """``org.apache.kafka.common.config.provider.FileConfigProvider``: keys of a properties file."""

    def __init__(self) -> None:
        self._allowed = AllowedPaths(None)

    def configure(self, configs: Mapping[str, str]) -> None:
        self._allowed = AllowedPaths(configs.get(ALLOWED_PATHS_CONFIG))

    def get(self, path: str, keys: Collection[str] | None = None) -> ConfigData:
        if not path:
            return ConfigData({})
        checked = self._allowed.check(path)
        try:
            with open(checked, "rb") as f:
                props = parse_properties(decode_properties_bytes(f.read()))
        except OSError as exc:
            log.error("Could not read properties from file %s: %s", path, exc)
            raise ConfigError(f"Could not read properties from file {path}") from exc
        if keys is None:
            return ConfigData(props)
        return ConfigData({k: props[k] for k in keys if k in props})


class DirectoryConfigProvider(ConfigProvider):
    """``org.apache.kafka.common.config.provider.DirectoryConfigProvider``: one file per key.

    Only regular files directly in the directory count; their content is read as UTF-8 and kept as it
    is. A path that is not a directory gives no values (logged), as in Kafka.
    """

    def __init__(self) -> None:
        self._allowed = AllowedPaths(None)

    def configure(self, configs: Mapping[str, str]) -> None:
        self._allowed = AllowedPaths(configs.get(ALLOWED_PATHS_CONFIG))

    def get(self, path: str, keys: Collection[str] | None = None) -> ConfigData:
        if not path:
            return ConfigData({})
        directory = self._allowed.check(path)
        if not os.path.isdir(directory):
            log.warning("The path %s is not a directory", path)
            return ConfigData({})
        try:
            names = os.listdir(directory)
        except OSError as exc:
            raise ConfigError(f"Could not list directory {directory}") from exc
        data: dict[str, str] = {}
        for name in names:
            if keys is not None and name not in keys:
                continue
            file_path = os.path.join(directory, name)
            if not os.path.isfile(file_path):
                continue
            try:
                with open(file_path, "rb") as f:
                    data[name] = f.read().decode("utf-8", errors="replace")
            except OSError as exc:
                raise ConfigError(f"Could not read file {file_path} for property {name}") from exc
        return ConfigData(data)


class EnvVarConfigProvider(ConfigProvider):
    """``org.apache.kafka.common.config.provider.EnvVarConfigProvider`` (Kafka 3.5+, KIP-887).

    ``allowlist.pattern`` is a regular expression that must match a variable's whole name (Java's
    ``matches``); the default ``.*`` allows every variable. Paths are not supported.
    """

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self._environ = dict(os.environ if environ is None else environ)
        self._visible = dict(self._environ)

    def configure(self, configs: Mapping[str, str]) -> None:
        pattern_text = configs.get(ALLOWLIST_PATTERN_CONFIG)
        if pattern_text is None:
            log.info("No pattern for environment variables provided. Using default pattern '(.*)'.")
            pattern_text = ".*"
        try:
            pattern = re.compile(pattern_text)
        except re.error as exc:
            raise ConfigError(f"Invalid {ALLOWLIST_PATTERN_CONFIG} {pattern_text!r}: {exc}") from exc
        self._visible = {k: v for k, v in self._environ.items() if pattern.fullmatch(k)}

    def get(self, path: str, keys: Collection[str] | None = None) -> ConfigData:
        if path:
            log.error("Path is not supported for EnvVarConfigProvider, invalid value '%s'", path)
            raise ConfigError(f"Path is not supported for EnvVarConfigProvider, invalid value '{path}'")
        if keys is None:
            return ConfigData(dict(self._visible))
        return ConfigData({k: self._visible[k] for k in keys if k in self._visible})


_KAFKA_PACKAGE = "org.apache.kafka.common.config.provider."
PROVIDER_CLASSES: dict[str, type[ConfigProvider]] = {}
"""Built-in providers by every name a user may write (the Java FQCN and the simple name)."""
for _cls in (FileConfigProvider, DirectoryConfigProvider, EnvVarConfigProvider):
    PROVIDER_CLASSES[_KAFKA_PACKAGE + _cls.__name__] = _cls
    PROVIDER_CLASSES[_cls.__name__] = _cls


def _load_provider_class(key: str, name: str) -> type[ConfigProvider]:
    cls = PROVIDER_CLASSES.get(name.strip())
    if cls is not None:
        return cls
    from cdc.plugins import registry  # third-party providers registered through the plugin registry

    try:
        loaded = registry.load(name)
    except Exception as exc:
        raise ConfigError(f"Class {name} could not be found.", key, name) from exc
    if not (isinstance(loaded, type) and issubclass(loaded, ConfigProvider)):
        raise ConfigError(f"Class {name} is not a ConfigProvider", key, name)
    return loaded


def instantiate_providers(worker_props: Mapping[str, str]) -> dict[str, ConfigProvider]:
    """The configured providers by alias, each configured with its ``.param.*`` settings.

    An alias listed in ``config.providers`` without a ``.class`` is skipped, as Kafka skips it.
    """
    aliases = [a.strip() for a in worker_props.get(CONFIG_PROVIDERS_CONFIG, "").split(",") if a.strip()]
    providers: dict[str, ConfigProvider] = {}
    for alias in aliases:
        prefix = f"{CONFIG_PROVIDERS_CONFIG}.{alias}"
        class_name = worker_props.get(prefix + ".class")
        if not class_name:
            continue
        param_prefix = prefix + ".param."
        params = {k[len(param_prefix) :]: v for k, v in worker_props.items() if k.startswith(param_prefix)}
        provider = _load_provider_class(prefix + ".class", class_name)()
        provider.configure(params)
        providers[alias] = provider
    return providers


def _variables(value: str) -> Iterable[tuple[str, str, str]]:
    for m in VARIABLE_PATTERN.finditer(value):
        yield m.group(1), m.group(3) or "", m.group(4)


class ConfigTransformer:
    """Resolves ``${alias:[path:]key}`` placeholders in a property map (Kafka's ``ConfigTransformer``)."""

    def __init__(self, providers: Mapping[str, ConfigProvider]) -> None:
        self._providers = dict(providers)

    @classmethod
    def from_worker_config(cls, worker_props: Mapping[str, str]) -> ConfigTransformer:
        return cls(instantiate_providers(worker_props))

    @property
    def aliases(self) -> list[str]:
        return list(self._providers)

    def transform(self, props: Mapping[str, V]) -> tuple[dict[str, V], dict[str, int]]:
        """``(resolved props, ttl in ms by path)``. Unknown aliases and missing keys stay as written.

        Only string values are looked at; others (None, numbers from a JSON body) pass through.
        """
        wanted: dict[str, dict[str, set[str]]] = {}
        for value in props.values():
            if not isinstance(value, str):
                continue
            for alias, path, key in _variables(value):
                wanted.setdefault(alias, {}).setdefault(path, set()).add(key)

        lookups: dict[str, dict[str, dict[str, str]]] = {}
        ttls: dict[str, int] = {}
        for alias, keys_by_path in wanted.items():
            provider = self._providers.get(alias)
            if provider is None:
                continue
            for path, keys in keys_by_path.items():
                data = provider.get(path, set(keys))
                if data.ttl is not None and data.ttl >= 0:
                    ttls[path] = data.ttl
                lookups.setdefault(alias, {})[path] = data.data

        def replace(match: re.Match[str]) -> str:
            by_path = lookups.get(match.group(1))
            if by_path is None:
                return match.group(0)
            replacement = by_path.get(match.group(3) or "", {}).get(match.group(4))
            return match.group(0) if replacement is None else replacement

        resolved: dict[str, V] = {}
        for k, v in props.items():
            resolved[k] = cast(V, VARIABLE_PATTERN.sub(replace, v)) if isinstance(v, str) else v
        return resolved, ttls

    def close(self) -> None:
        for provider in self._providers.values():
            try:
                provider.close()
            except Exception:  # a provider failing to close must not stop the others
                log.exception("Failed to close config provider")


def is_from_provider(raw_value: str | None, aliases: Collection[str] | None = None) -> bool:
    """Whether a raw (unresolved) config value holds a ``${alias:…}`` placeholder.

    With ``aliases``, only placeholders naming one of them count. The runtime hides such values'
    resolved form (REST, logs, status traces) because they are usually secrets.
    """
    if not raw_value:
        return False
    return any(aliases is None or alias in aliases for alias, _, _ in _variables(raw_value))


def resolve_worker_config(worker_props: Mapping[str, str]) -> dict[str, str]:
    """The worker config with its own placeholders resolved, as Kafka's ``AbstractConfig`` does.

    The providers come from the same properties; with none configured the config is returned as is.
    """
    transformer = ConfigTransformer.from_worker_config(worker_props)
    try:
        if not transformer.aliases:
            return dict(worker_props)
        resolved, _ = transformer.transform(worker_props)
        return resolved
    finally:
        transformer.close()
