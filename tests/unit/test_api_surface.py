"""The public surface of :mod:`cdc.api`, the plugin API connectors are written against.

A connector, converter, transform or predicate written for cdc subclasses these classes and imports these
names: renaming one, changing a method's parameters, defaults or return type, or making a method abstract
breaks plugins outside this repository. This test fails on any such change, so that it is made on purpose
(and named in the changelog), with the expected surface below updated in the same commit.
"""

from __future__ import annotations

import inspect

import cdc.api as api

PUBLIC_NAMES = [
    "AlreadyExistsError",
    "BOOLEAN_SCHEMA",
    "BYTES_SCHEMA",
    "ConfigError",
    "ConnectError",
    "ConnectRecord",
    "Connector",
    "ConnectorContext",
    "Converter",
    "DataError",
    "Date",
    "Decimal",
    "ExactlyOnceSupport",
    "FLOAT32_SCHEMA",
    "FLOAT64_SCHEMA",
    "FatalError",
    "Field",
    "Header",
    "HeaderConverter",
    "Headers",
    "INT16_SCHEMA",
    "INT32_SCHEMA",
    "INT64_SCHEMA",
    "INT8_SCHEMA",
    "NotFoundError",
    "OPTIONAL_BOOLEAN_SCHEMA",
    "OPTIONAL_BYTES_SCHEMA",
    "OPTIONAL_FLOAT32_SCHEMA",
    "OPTIONAL_FLOAT64_SCHEMA",
    "OPTIONAL_INT16_SCHEMA",
    "OPTIONAL_INT32_SCHEMA",
    "OPTIONAL_INT64_SCHEMA",
    "OPTIONAL_INT8_SCHEMA",
    "OPTIONAL_STRING_SCHEMA",
    "OffsetStorageReader",
    "Predicate",
    "RetriableError",
    "STRING_SCHEMA",
    "Schema",
    "SchemaAndValue",
    "SchemaBuilder",
    "SchemaProjectorError",
    "SinkConnector",
    "SinkRecord",
    "SinkTask",
    "SinkTaskContext",
    "SourceConnector",
    "SourceRecord",
    "SourceTask",
    "SourceTaskContext",
    "Struct",
    "Task",
    "Time",
    "Timestamp",
    "TopicPartition",
    "TransactionContext",
    "Transformation",
    "Type",
    "validate_value",
]

PLUGIN_SIGNATURES: dict[str, dict[str, str]] = {
    "Connector": {
        "config": "(self) -> 'ConfigDef' abstract",
        "files": "(self, props: 'Mapping[str, str]') -> 'list[FileUse]'",
        "initialize": "(self, context: 'ConnectorContext') -> 'None'",
        "start": "(self, props: 'dict[str, str]') -> 'None' abstract",
        "stop": "(self) -> 'None' abstract",
        "task_class": "(self) -> 'type[Task]' abstract",
        "task_configs": "(self, max_tasks: 'int') -> 'list[dict[str, str]]' abstract",
        "validate": "(self, props: 'Mapping[str, str]') -> 'list[ConfigValue]'",
        "validate_in_group": "(self, props: 'Mapping[str, str]', others: 'Mapping[str, "
        "Mapping[str, str]]') -> 'dict[str, list[str]]'",
        "version": "(self) -> 'str'",
    },
    "ConnectorContext": {
        "offset_storage_reader": "(self) -> 'OffsetStorageReader | None'",
        "raise_error": "(self, error: 'BaseException') -> 'None' abstract",
        "request_task_reconfiguration": "(self) -> 'None' abstract",
    },
    "Converter": {
        "close": "(self) -> 'None'",
        "config": "(self) -> 'ConfigDef'",
        "configure": "(self, configs: 'Mapping[str, Any]', is_key: 'bool') -> 'None' abstract",
        "from_connect_data": "(self, topic: 'str', schema: 'Schema | None', value: 'Any', "
        "headers: 'Headers | None' = None) -> 'bytes | None' abstract",
        "to_connect_data": "(self, topic: 'str', value: 'bytes | None', headers: 'Headers | "
        "None' = None) -> 'SchemaAndValue' abstract",
    },
    "HeaderConverter": {
        "close": "(self) -> 'None'",
        "config": "(self) -> 'ConfigDef'",
        "configure": "(self, configs: 'Mapping[str, Any]') -> 'None' abstract",
        "from_connect_header": "(self, topic: 'str', header_key: 'str', schema: "
        "'Schema | None', value: 'Any') -> 'bytes | None' "
        "abstract",
        "to_connect_header": "(self, topic: 'str', header_key: 'str', value: 'bytes | "
        "None') -> 'SchemaAndValue' abstract",
    },
    "OffsetStorageReader": {
        "offset": "(self, partition: 'Partition') -> 'dict[str, Any] | None'",
        "offsets": "(self, partitions: 'Sequence[Partition]') -> 'dict[str, dict[str, Any]]' abstract",
    },
    "Predicate": {
        "close": "(self) -> 'None'",
        "config": "(self) -> 'ConfigDef'",
        "configure": "(self, configs: 'Mapping[str, Any]') -> 'None' abstract",
        "test": "(self, record: 'R') -> 'bool' abstract",
    },
    "SinkConnector": {
        "alter_offsets": "(self, props: 'Mapping[str, str]', offsets: 'Mapping[str, Any]') -> 'bool'"
    },
    "SinkTask": {
        "close": "(self, partitions: 'list[TopicPartition]') -> 'None'",
        "flush": "(self, offsets: 'Mapping[TopicPartition, int]') -> 'None'",
        "initialize": "(self, context: 'SinkTaskContext') -> 'None'",
        "open": "(self, partitions: 'list[TopicPartition]') -> 'None'",
        "pre_commit": "(self, offsets: 'Mapping[TopicPartition, int]') -> 'Mapping[TopicPartition, int]'",
        "put": "(self, records: 'list[SinkRecord]') -> 'None' abstract",
    },
    "SinkTaskContext": {
        "assignment": "(self) -> 'set[TopicPartition]'",
        "configs": "(self) -> 'dict[str, str]' abstract",
        "errant_record_reporter": "(self) -> 'ErrantRecordReporter | None'",
        "offset": "(self, offsets: 'Mapping[TopicPartition, int]') -> 'None'",
        "pause": "(self, *partitions: 'TopicPartition') -> 'None'",
        "request_commit": "(self) -> 'None'",
        "resume": "(self, *partitions: 'TopicPartition') -> 'None'",
    },
    "SourceConnector": {
        "alter_offsets": "(self, props: 'Mapping[str, str]', offsets: 'Mapping[str, Any]') -> 'bool'",
        "can_define_transaction_boundaries": "(self, props: 'Mapping[str, str]') -> "
        "'ConnectorTransactionBoundaries'",
        "exactly_once_support": "(self, props: 'Mapping[str, str]') -> 'ExactlyOnceSupport | None'",
        "validate_offset": "(self, props: 'Mapping[str, str]', partition: "
        "'Mapping[str, Any]', offset: 'Mapping[str, Any]') -> "
        "'bool'",
    },
    "SourceTask": {
        "commit": "(self) -> 'None'",
        "commit_record": "(self, record: 'SourceRecord', metadata: 'Any | None') -> 'None'",
        "initialize": "(self, context: 'SourceTaskContext') -> 'None'",
        "poll": "(self) -> 'list[SourceRecord] | None' abstract",
    },
    "SourceTaskContext": {
        "configs": "(self) -> 'dict[str, str]' abstract",
        "file_refusal": "(self, path: 'str') -> 'str | None'",
        "offset_storage_reader": "(self) -> 'OffsetStorageReader' abstract",
        "task_index": "(self) -> 'int'",
        "transaction_context": "(self) -> 'TransactionContext | None'",
        "worker_client_config": "(self) -> 'dict[str, str]'",
    },
    "Task": {
        "progress": "(self) -> 'Mapping[str, Any]'",
        "start": "(self, props: 'dict[str, str]') -> 'None' abstract",
        "stop": "(self) -> 'None' abstract",
        "version": "(self) -> 'str'",
    },
    "TransactionContext": {
        "abort_transaction": "(self, record: 'SourceRecord | None' = None) -> 'None' abstract",
        "commit_transaction": "(self, record: 'SourceRecord | None' = None) -> 'None' abstract",
    },
    "Transformation": {
        "apply": "(self, record: 'R') -> 'R | None' abstract",
        "close": "(self) -> 'None'",
        "config": "(self) -> 'ConfigDef'",
        "configure": "(self, configs: 'Mapping[str, Any]') -> 'None' abstract",
    },
}


def _surface(cls: type) -> dict[str, str]:
    """Public methods of ``cls`` defined on it (not inherited), with their signatures; " abstract" marks
    the ones a plugin must implement."""
    out = {}
    for name, member in sorted(vars(cls).items()):
        if name.startswith("_"):
            continue
        function = member.__func__ if isinstance(member, (staticmethod, classmethod)) else member
        if callable(function):
            abstract = " abstract" if getattr(function, "__isabstractmethod__", False) else ""
            out[name] = str(inspect.signature(function)) + abstract
    return out


def test_the_public_names_are_the_expected_ones() -> None:
    assert sorted(api.__all__) == PUBLIC_NAMES
    for name in api.__all__:
        assert getattr(api, name) is not None, name


def test_the_plugin_base_classes_keep_their_signatures() -> None:
    assert {name: _surface(getattr(api, name)) for name in PLUGIN_SIGNATURES} == PLUGIN_SIGNATURES


def test_the_plugin_api_imports_no_runtime() -> None:
    """The API stands apart from the runtime and the clients (as Connect's connect-api)."""
    import subprocess
    import sys

    code = (
        "import sys, cdc.api; "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('confluent_kafka', 'kafka', 'pymysql') "
        "or m.startswith(('cdc.worker', 'cdc.mysql', 'cdc.jdbc', 'cdc.kafka'))); print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
