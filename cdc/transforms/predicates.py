"""Connect's predicates: TopicNameMatches, HasHeaderKey, RecordIsTombstone."""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from cdc.api.plugins import Predicate
from cdc.api.records import ConnectRecord
from cdc.config.definition import NO_DEFAULT, ConfigDef, ConfigType, Importance
from cdc.config.validators import composite, non_empty_string
from cdc.transforms._java import compile_java_regex
from cdc.transforms.routing import java_regex

__all__ = ["HasHeaderKey", "RecordIsTombstone", "TopicNameMatches"]

R = TypeVar("R", bound=ConnectRecord)


class _Configured(Predicate[R]):
    CONFIG_DEF: ClassVar[ConfigDef] = ConfigDef()

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, configs: Any) -> None:
        self._setup(self.CONFIG_DEF.parse(configs))

    def _setup(self, cfg: dict[str, Any]) -> None:
        return None


class TopicNameMatches(_Configured[R]):
    """True when the whole topic name matches ``pattern``."""

    CONFIG_DEF = ConfigDef().define(
        "pattern",
        ConfigType.STRING,
        NO_DEFAULT,
        composite(non_empty_string, java_regex),
        Importance.MEDIUM,
        "A Java regular expression for matching against the name of a record's topic.",
    )

    def _setup(self, cfg: dict[str, Any]) -> None:
        self.pattern = compile_java_regex(cfg["pattern"])

    def test(self, record: R) -> bool:
        return record.topic is not None and self.pattern.fullmatch(record.topic) is not None

    def __repr__(self) -> str:
        return f"TopicNameMatches{{pattern={self.pattern.pattern}}}"


class HasHeaderKey(_Configured[R]):
    """True when the record has at least one header called ``name``."""

    CONFIG_DEF = ConfigDef().define(
        "name", ConfigType.STRING, NO_DEFAULT, non_empty_string, Importance.MEDIUM, "The header name."
    )

    def _setup(self, cfg: dict[str, Any]) -> None:
        self.name: str = cfg["name"]

    def test(self, record: R) -> bool:
        return any(h.key == self.name for h in record.headers)

    def __repr__(self) -> str:
        return f"HasHeaderKey{{name='{self.name}'}}"


class RecordIsTombstone(_Configured[R]):
    """True when the record's value is null."""

    def test(self, record: R) -> bool:
        return record.value is None

    def __repr__(self) -> str:
        return "RecordIsTombstone{}"
