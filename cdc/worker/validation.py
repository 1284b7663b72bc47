"""Connector config validation and plugin descriptions, in the REST API's shapes.

``validate`` merges the runtime's keys (name, class, tasks.max, converters, transforms, predicates,
error handling …, enriched per transform alias) with the connector's own declaration and
``Connector.validate``, as Connect's ``AbstractHerder.validateConnectorConfig`` does, and answers
ConfigInfos.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from cdc.api.connector import Connector, SinkConnector, SourceConnector
from cdc.api.errors import ConfigError, ConnectError, NotFoundError
from cdc.api.plugins import Converter, HeaderConverter, Predicate, Transformation
from cdc.config import ConfigDef, ConfigType, ConfigValue, mask_secrets
from cdc.plugins import registry
from cdc.worker.config import CONNECTOR_CLASS_CONFIG, connector_def
from cdc.worker.config_providers import is_from_provider
from cdc.worker.errors import BadRequestError
from cdc.worker.settings import WorkerSettings

__all__ = ["invalid_config_message", "plugin_config", "plugins", "validate"]

log = logging.getLogger(__name__)

_KINDS: list[tuple[type, str]] = [
    (SourceConnector, "source"),
    (SinkConnector, "sink"),
    (Converter, "converter"),
    (HeaderConverter, "header_converter"),
    (Transformation, "transformation"),
    (Predicate, "predicate"),
]


def _kind(cls: Any) -> str | None:
    if not isinstance(cls, type):
        return None
    for base, kind in _KINDS:
        if issubclass(cls, base):
            return kind
    return None


def _version(cls: Any) -> str:
    try:
        version = getattr(cls(), "version", None)
        return str(version()) if callable(version) else "unknown"
    except Exception:
        return "unknown"


def plugins(connectors_only: bool) -> list[dict[str, Any]]:
    out = []
    for name in registry.canonical():
        try:
            cls = registry.load(name)
        except ConnectError as exc:
            log.debug("Plugin %s not loadable: %s", name, exc)
            continue
        kind = _kind(cls)
        if kind is None or (connectors_only and kind not in ("source", "sink")):
            continue
        out.append({"class": name, "type": kind, "version": _version(cls)})
    order = {k: i for i, (_, k) in enumerate(_KINDS)}
    return sorted(out, key=lambda p: (order[p["type"]] if not connectors_only else 0, p["class"]))


def plugin_config(plugin: str) -> list[dict[str, Any]]:
    try:
        cls = registry.load(plugin)
    except ConnectError as exc:
        raise NotFoundError(f"Unknown plugin {plugin}.") from exc
    definition: ConfigDef = cls().config()
    return [k.to_info() for k in definition.keys() if not k.internal]  # noqa: SIM118 - not a dict


def _runtime_def(kind: str, props: Mapping[str, str]) -> ConfigDef:
    base = connector_def(kind)
    try:
        from cdc.transforms.chain import enrich_config_def
    except ImportError:
        return base
    try:
        return enrich_config_def(base, props)
    except ConfigError:
        return base


Resolver = Callable[[dict[str, str]], dict[str, str]]


def _resolve(props: Mapping[str, str], resolve: Resolver | None) -> tuple[dict[str, str], dict[str, str]]:
    """``(props with provider placeholders resolved, error by key)``, as Connect's herder transforms a config
    before validating it: ``database.password=${file:…}`` is checked with the provider's value. A key whose
    placeholder cannot be resolved (a path outside ``allowed.paths``, a missing file) keeps its raw value
    and gets the provider's message as its error."""
    if resolve is None:
        return dict(props), {}
    try:
        return resolve(dict(props)), {}
    except (ConfigError, ConnectError, OSError) as whole:
        resolved, errors = dict(props), {}
        for key, raw in props.items():
            if not is_from_provider(raw):
                continue
            try:
                resolved[key] = resolve({key: raw})[key]
            except (ConfigError, ConnectError, OSError) as exc:
                errors[key] = str(exc) or type(exc).__name__
        if not errors:  # not one key alone: report the whole failure on the first placeholder
            first = next((k for k, v in props.items() if is_from_provider(v)), "connector.class")
            errors[first] = str(whole) or type(whole).__name__
        return resolved, errors


def validate(
    props: Mapping[str, str],
    worker: WorkerSettings | None = None,
    resolve: Resolver | None = None,
    others: Mapping[str, Mapping[str, str]] | None = None,
) -> dict[str, Any]:
    """ConfigInfos for a connector config (raises BadRequestError without a usable class).

    ``worker`` (the worker's config) adds the exactly-once preflight checks that depend on it
    (:func:`cdc.worker.exactly_once.validate_exactly_once`). ``resolve`` (the worker's config provider
    transform) resolves placeholders first, as Connect does; the answer shows each placeholder as written.
    ``others`` (the group's other connector configs by name) adds :meth:`Connector.validate_in_group`
    (a ``database.server.id`` already in use).
    """
    raw = props
    props, provider_errors = _resolve(props, resolve)
    class_name = props.get(CONNECTOR_CLASS_CONFIG)
    if not class_name:
        # Connect prints the whole config here; its secrets stay out of the answer.
        raise BadRequestError(f"Connector config {mask_secrets(props)} contains no connector type")
    try:
        cls = registry.load(class_name)
    except ConnectError as exc:
        available = ", ".join(p["class"] for p in plugins(True))
        hint = ""
        if registry.is_hidden(class_name):
            from cdc.worker.plugin_path import FILESTREAM_HINT

            hint = f". {FILESTREAM_HINT}"
        raise BadRequestError(
            f"Failed to find any class that implements Connector and which name matches {class_name}, "
            f"available connectors are: {available}{hint}"
        ) from exc
    kind = _kind(cls)
    if kind not in ("source", "sink"):
        raise BadRequestError(f"{class_name} is not a connector")
    connector: Connector = cls()
    runtime = _runtime_def(kind, props)
    results: list[tuple[Any, ConfigValue]] = [(runtime[v.name], v) for v in runtime.validate(props)]
    _check_transforms(props, results)
    if isinstance(connector, SourceConnector):
        _check_exactly_once(connector, props, worker, results)
    own = connector.config()
    _log_unknown(props, runtime, own)
    from cdc.worker.file_paths import FilePolicy, file_violations

    violations = file_violations(connector, props, worker.file_policy() if worker else FilePolicy(None))
    try:
        # a file outside the allowed paths is never opened, not even by validate's connection test (a key
        # store read there could fail with what the file holds): the declared checks only
        own_values = own.validate(props) if violations else connector.validate(props)
    except Exception as exc:
        own_values = [ConfigValue(k.name, errors=[f"Validation failed: {exc}"]) for k in own.keys()[:1]]
    if others is not None and not any(v.errors for v in own_values):
        _check_in_group(connector, props, others, own_values)
    seen = {k.name for k, _ in results}
    own_values = list(own_values)
    for key_name, message in provider_errors.items():
        value = next((v for _, v in results if v.name == key_name), None) or next(
            (v for v in own_values if v.name == key_name), None
        )
        if value is None:
            value = ConfigValue(key_name, raw.get(key_name))
            own_values.append(value)
        value.add_error(message)
    for value in own_values:
        if value.name in seen:
            continue
        key = own[value.name] if value.name in own else None  # noqa: SIM401 - ConfigDef has no .get
        results.append((key, value))
    _check_files(violations, props, results)
    _check_internal_topics(props, worker, results)
    groups: list[str] = []
    for key, _ in results:
        group = getattr(key, "group", None)
        if group and group not in groups:
            groups.append(group)
    configs = []
    error_count = 0
    for key, value in results:
        error_count += len(value.errors)
        definition = (
            key.to_info()
            if key is not None
            else {
                "name": value.name,
                "type": "STRING",
                "required": False,
                "default_value": None,
                "importance": "LOW",
                "documentation": "",
                "group": None,
                "width": "NONE",
                "display_name": value.name,
                "dependents": [],
                "order": -1,
            }
        )
        # An undeclared key whose name looks secret (producer.override.sasl.jaas.config …) shows [hidden].
        shown = key.type if key is not None else ConfigType.PASSWORD if _secret_name(value.name) else None
        info = value.to_info(shown)
        if is_from_provider(raw.get(value.name)) and info.get("value") != "[hidden]":
            info["value"] = raw[value.name]  # the placeholder, never what it resolved to
        configs.append({"definition": definition, "value": info})
    return {
        "name": f"{cls.__module__}.{cls.__qualname__}" if "." not in class_name else class_name,
        "error_count": error_count,
        "groups": groups,
        "configs": configs,
    }


def _check_in_group(
    connector: Connector,
    props: Mapping[str, str],
    others: Mapping[str, Mapping[str, str]],
    values: list[ConfigValue],
) -> None:
    by_name = {v.name: v for v in values}
    try:
        errors = connector.validate_in_group(props, others)
    except Exception as exc:  # a check that cannot run must not hide the config's own answer
        log.warning("Checking the config against the group's other connectors failed: %s", exc)
        return
    for name, messages in errors.items():
        value = by_name.get(name)
        if value is None:
            value = ConfigValue(name, props.get(name))
            values.append(value)
            by_name[name] = value
        for message in messages:
            value.add_error(message)


def _log_unknown(props: Mapping[str, str], runtime: ConfigDef, own: ConfigDef) -> None:
    """Connect's line for a key neither the runtime nor the connector knows, with the likely intent."""
    for name in props:
        if runtime.knows(name) or own.knows(name):
            continue
        log.warning("The configuration '%s' was supplied but isn't a known config.", name)
        intended = own.closest(name) or runtime.closest(name)
        if intended is not None:
            log.warning("The configuration '%s' looks like a misspelling of '%s'.", name, intended)


def _check_exactly_once(
    connector: SourceConnector,
    props: Mapping[str, str],
    worker: WorkerSettings | None,
    results: list[tuple[Any, ConfigValue]],
) -> None:
    from cdc.worker.exactly_once import validate_exactly_once

    by_name = {v.name: v for _, v in results}
    for name, messages in validate_exactly_once(connector, props, worker).items():
        value = by_name.get(name)
        if value is None or value.errors:  # a type or choice error already says what is wrong
            continue
        for message in messages:
            value.add_error(message)


def _check_files(
    violations: list[tuple[str, str]], props: Mapping[str, str], results: list[tuple[Any, ConfigValue]]
) -> None:
    """An error on each key naming a file outside the worker's ``connector.file.allowed.paths``."""
    by_name = {v.name: v for _, v in results}
    for name, message in violations:
        value = by_name.get(name)
        if value is None:
            value = by_name[name] = ConfigValue(name, props.get(name))
            results.append((None, value))
        value.add_error(message)


def _check_internal_topics(
    props: Mapping[str, str], worker: WorkerSettings | None, results: list[tuple[Any, ConfigValue]]
) -> None:
    """An error on each key that names (or a pattern that matches) one of the worker's internal topics."""
    from cdc.worker.internal_topics import InternalTopics

    topics = worker.internal_topics() if worker is not None else InternalTopics()
    by_name = {v.name: v for _, v in results}
    for name, message in topics.errors(props).items():
        value = by_name.get(name)
        if value is None:
            value = by_name[name] = ConfigValue(name, props.get(name))
            results.append((None, value))
        value.add_error(message)


def _secret_name(name: str) -> bool:
    return mask_secrets({name: ""})[name] != ""


def _check_transforms(props: Mapping[str, str], results: list[tuple[Any, ConfigValue]]) -> None:
    """Errors for transform/predicate aliases whose type is missing or unknown."""
    by_name = {v.name: v for _, v in results}
    for section, kind in (("transforms", "transformation"), ("predicates", "predicate")):
        aliases = [a.strip() for a in props.get(section, "").split(",") if a.strip()]
        for alias in aliases:
            type_key = f"{section}.{alias}.type"
            type_name = props.get(type_key)
            value = by_name.get(type_key)
            if value is None:
                value = ConfigValue(type_key, type_name)
                results.append((None, value))
                by_name[type_key] = value
            if value.errors:
                continue
            if not type_name:
                value.add_error(f'Missing required configuration "{type_key}" which has no default value.')
                continue
            try:
                cls = registry.load(type_name)
            except ConnectError:
                value.add_error(f"Class {type_name} could not be found.")
                continue
            if _kind(cls) != kind:
                value.add_error(f"{type_name} is not a {kind}")


def invalid_config_message(infos: Mapping[str, Any]) -> str:
    """Connect's 400 message for an invalid connector config."""
    messages = []
    for entry in infos["configs"]:
        for error in entry["value"]["errors"]:
            messages.append(
                f"{entry['value']['name']}: {error}" if not error.startswith("Invalid value") else error
            )
    return (
        f"Connector configuration is invalid and contains the following {infos['error_count']} error(s):\n"
        + "\n".join(messages)
        + "\nYou can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}"
        "/config/validate`"
    )
