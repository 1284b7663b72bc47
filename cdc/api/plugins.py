"""Converters, header converters, transformations and predicates: the record-shaping plugins."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from cdc.api.records import ConnectRecord, Headers, SchemaAndValue
from cdc.api.schema import Schema

if TYPE_CHECKING:
    from cdc.config.definition import ConfigDef

__all__ = ["Converter", "HeaderConverter", "Predicate", "Transformation"]

R = TypeVar("R", bound=ConnectRecord)


class Converter(ABC):
    """Turns Connect data into bytes for Kafka and back."""

    passes_bytes_through: ClassVar[bool] = False
    """True when ``from_connect_data`` gives a ``bytes`` value (or None) back as it is under no schema or
    a BYTES one (ByteArrayConverter): the source send loop then skips the call for such records."""

    def config(self) -> ConfigDef:
        from cdc.config.definition import ConfigDef

        return ConfigDef()

    @abstractmethod
    def configure(self, configs: Mapping[str, Any], is_key: bool) -> None: ...

    @abstractmethod
    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None: ...

    @abstractmethod
    def to_connect_data(
        self, topic: str, value: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue: ...

    def close(self) -> None: ...


class HeaderConverter(ABC):
    def config(self) -> ConfigDef:
        from cdc.config.definition import ConfigDef

        return ConfigDef()

    @abstractmethod
    def configure(self, configs: Mapping[str, Any]) -> None: ...

    @abstractmethod
    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None: ...

    @abstractmethod
    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue: ...

    def close(self) -> None: ...


class Transformation(ABC, Generic[R]):
    """A single message transform: returns a new record, or None to drop it. Never mutates its input."""

    def config(self) -> ConfigDef:
        from cdc.config.definition import ConfigDef

        return ConfigDef()

    @abstractmethod
    def configure(self, configs: Mapping[str, Any]) -> None: ...

    @abstractmethod
    def apply(self, record: R) -> R | None: ...

    def close(self) -> None: ...


class Predicate(ABC, Generic[R]):
    """Decides whether a transform applies to a record."""

    def config(self) -> ConfigDef:
        from cdc.config.definition import ConfigDef

        return ConfigDef()

    @abstractmethod
    def configure(self, configs: Mapping[str, Any]) -> None: ...

    @abstractmethod
    def test(self, record: R) -> bool: ...

    def close(self) -> None: ...
