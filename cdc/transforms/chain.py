"""The transformation chain of a connector, built from its flat config as Connect builds it.

::

    transforms=route,unwrap
    transforms.route.type=org.apache.kafka.connect.transforms.RegexRouter
    transforms.route.regex=(.*)\\.(.*)\\.(.*)
    transforms.route.replacement=$1-$2-$3
    transforms.route.predicate=isData          # optional; transforms.route.negate=true inverts it
    predicates=isData
    predicates.isData.type=org.apache.kafka.connect.transforms.predicates.TopicNameMatches
    predicates.isData.pattern=mysqlavro\\..*

:func:`build_chain` gives a :class:`TransformationChain` (each transform configured with its
``transforms.<alias>.`` sub-config, ``predicate``/``negate`` removed, ``type`` left in, as Connect does);
:func:`enrich_config_def` adds the per-alias keys to a connector's :class:`ConfigDef` so that REST
validate reports errors against ``transforms.<alias>.<key>``. Error texts are Connect's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from cdc.api.errors import ConfigError, NotFoundError
from cdc.api.plugins import Predicate, Transformation
from cdc.api.records import ConnectRecord
from cdc.config.definition import NO_DEFAULT, ConfigDef, ConfigKey, ConfigType, Importance, Width, parse_type

__all__ = ["TransformationChain", "TransformationStage", "build_chain", "enrich_config_def"]

R = TypeVar("R", bound=ConnectRecord)

TRANSFORMS = "transforms"
PREDICATES = "predicates"


@dataclass(frozen=True, slots=True)
class TransformationStage(Generic[R]):
    """One transform, applied when its predicate (if any) tests ``not negate``."""

    transformation: Transformation[R]
    predicate: Predicate[R] | None = None
    negate: bool = False
    alias: str | None = None

    def apply(self, record: R) -> R | None:
        if self.predicate is not None and self.predicate.test(record) == self.negate:
            return record
        return self.transformation.apply(record)

    def close(self) -> None:
        self.transformation.close()
        if self.predicate is not None:
            self.predicate.close()


StageLike = TransformationStage[R] | tuple[Transformation[R], Predicate[R] | None, bool]


class TransformationChain(Generic[R]):
    """Stages applied in order; a stage returning None drops the record and ends the chain."""

    __slots__ = ("_stages",)

    def __init__(self, stages: Iterable[StageLike[R]] = ()) -> None:
        self._stages: tuple[TransformationStage[R], ...] = tuple(
            s if isinstance(s, TransformationStage) else TransformationStage(s[0], s[1], bool(s[2]))
            for s in stages
        )

    def apply(self, record: R) -> R | None:
        current: R | None = record
        for stage in self._stages:
            current = stage.apply(current)  # type: ignore[arg-type]
            if current is None:
                return None
        return current

    def close(self) -> None:
        for stage in self._stages:
            stage.close()

    def __iter__(self) -> Iterator[TransformationStage[R]]:
        return iter(self._stages)

    def __len__(self) -> int:
        return len(self._stages)

    def __bool__(self) -> bool:
        return bool(self._stages)

    def __repr__(self) -> str:
        return (
            "TransformationChain["
            + ", ".join(f"{s.alias or type(s.transformation).__name__}" for s in self._stages)
            + "]"
        )


# -- loading plugins -----------------------------------------------------------------------------------


def _registry() -> Any:
    from cdc.plugins import registry

    return registry


def _aliases(props: Mapping[str, Any], key: str) -> list[str]:
    return list(parse_type(key, props.get(key, ""), ConfigType.LIST) or [])


def _load_class(key: str, props: Mapping[str, Any], base: type, kind: str) -> type:
    """The plugin class named by ``props[key]``, with Connect's messages when it cannot be had."""
    if props.get(key) is None:
        raise ConfigError(f'Missing required configuration "{key}" which has no default value.')
    name = str(props[key]).strip()
    registry = _registry()
    try:
        cls = registry.load(name)
    except NotFoundError:
        variants = [n for n in (f"{name}$Key", f"{name}$Value") if n in registry.names()]
        if variants:
            raise ConfigError(
                f"{kind} is abstract and cannot be created. Did you mean {', '.join(variants)}?",
                key,
                f"class {name}",
            ) from None
        raise ConfigError(f"Class {name} could not be found.", key, name) from None
    if not (isinstance(cls, type) and issubclass(cls, base)):
        raise ConfigError(f"Not a {base.__name__}", key, f"class {name}")
    return cls


def _check_negate(props: Mapping[str, Any], prefix: str) -> None:
    if prefix + "negate" in props and prefix + "predicate" not in props:
        raise ConfigError(
            f"Config '{prefix}negate' was provided but there is no config '{prefix}predicate' "
            "defining a predicate to be negated."
        )


def _sub_config(props: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    return {k[len(prefix) :]: v for k, v in props.items() if k.startswith(prefix)}


def _check_unique(aliases: list[str], key: str) -> None:
    if len(set(aliases)) != len(aliases):
        raise ConfigError("Duplicate alias provided.", key, "[" + ", ".join(aliases) + "]")


def build_chain(props: Mapping[str, Any]) -> TransformationChain[Any]:
    """Build and configure the chain a connector's config declares (``transforms``, ``predicates``).

    Raises :class:`ConfigError` for unknown or missing types, a predicate alias that ``predicates`` does
    not declare, ``negate`` without ``predicate``, and any transform's own configuration errors.
    """
    aliases = _aliases(props, TRANSFORMS)
    _check_unique(aliases, TRANSFORMS)
    predicate_aliases = set(_aliases(props, PREDICATES))
    stages: list[TransformationStage[Any]] = []
    try:
        for alias in aliases:
            prefix = f"{TRANSFORMS}.{alias}."
            _check_negate(props, prefix)
            cls = _load_class(prefix + "type", props, Transformation, "Transformation")
            configs = _sub_config(props, prefix)
            predicate_alias = configs.pop("predicate", None)
            negate = configs.pop("negate", None)
            transformation: Transformation[Any] = cls()
            transformation.configure(configs)
            predicate: Predicate[Any] | None = None
            if predicate_alias is not None:
                predicate_prefix = f"{PREDICATES}.{predicate_alias}."
                if predicate_alias not in predicate_aliases:
                    transformation.close()
                    raise ConfigError(f"Unknown configuration '{predicate_prefix}type'")
                pcls = _load_class(predicate_prefix + "type", props, Predicate, "Predicate")
                predicate = pcls()
                predicate.configure(_sub_config(props, predicate_prefix))
            stages.append(
                TransformationStage(
                    transformation,
                    predicate,
                    negate is not None and str(negate).strip().lower() == "true",
                    alias,
                )
            )
    except BaseException:
        for stage in stages:
            stage.close()
        raise
    return TransformationChain(stages)


# -- REST validate ---------------------------------------------------------------------------------------

_IMPLICIT = (
    ConfigKey(
        "predicate",
        ConfigType.STRING,
        None,
        None,
        Importance.MEDIUM,
        "The alias of a predicate used to determine whether to apply this transformation.",
    ),
    ConfigKey(
        "negate",
        ConfigType.BOOLEAN,
        False,
        None,
        Importance.MEDIUM,
        "Whether the configured predicate should be negated.",
    ),
)


def _type_validator(
    props: Mapping[str, Any], prefix: str, base: type, kind: str, check_negate: bool
) -> Callable[[str, Any], None]:
    def check(name: str, value: Any) -> None:
        if check_negate:
            _check_negate(props, prefix)
        if value is not None:
            _load_class(name, {name: value}, base, kind)

    return check


def enrich_config_def(config_def: ConfigDef, props: Mapping[str, Any]) -> ConfigDef:
    """``config_def`` plus, per alias, ``<transforms|predicates>.<alias>.type`` and the plugin's own keys.

    The plugin's keys are prefixed (``transforms.unwrap.drop.tombstones``) and grouped
    (``Transforms: unwrap``); transforms also get the implicit ``predicate`` and ``negate``. An alias whose
    type cannot be loaded contributes only its ``type`` key, whose validator then reports why.
    """
    enriched = config_def.merge(ConfigDef())  # a copy, with the prefixes and patterns it accepts
    for list_key, group_name, base, kind in (
        (TRANSFORMS, "Transforms", Transformation, "Transformation"),
        (PREDICATES, "Predicates", Predicate, "Predicate"),
    ):
        try:
            aliases = list(dict.fromkeys(_aliases(props, list_key)))
        except ConfigError:
            continue
        for alias in aliases:
            prefix = f"{list_key}.{alias}."
            group = f"{group_name}: {alias}"
            type_key = prefix + "type"
            if type_key not in enriched:
                enriched.add(
                    ConfigKey(
                        type_key,
                        ConfigType.CLASS,
                        NO_DEFAULT,
                        _type_validator(props, prefix, base, kind, base is Transformation),
                        Importance.HIGH,
                        f"Class for the '{alias}' {kind.lower()}.",
                        group,
                        0,
                        Width.LONG,
                        f"{kind} type for {alias}",
                    )
                )
            try:
                cls = _load_class(type_key, props, base, kind)
                plugin_keys = cls().config().keys()
            except ConfigError:
                continue
            keys = list(_IMPLICIT) if base is Transformation else []
            keys += [
                k for k in plugin_keys if base is not Transformation or k.name not in ("predicate", "negate")
            ]
            for order, key in enumerate(keys, start=1):
                name = prefix + key.name
                if name in enriched:
                    continue
                enriched.add(
                    dataclasses.replace(
                        key,
                        name=name,
                        aliases=tuple(prefix + a for a in key.aliases),
                        group=group,
                        order_in_group=order,
                    )
                )
    return enriched
