"""The MySQL connector's configuration: Debezium's keys, defaults and the 1.x names users still have.

``MYSQL_DEF`` (:mod:`cdc.mysql.config_def`, one function per group) declares every key once (REST
validate, docs, masking). :class:`MySqlSettings` is the parsed, typed view the task's parts receive, so
no part reads raw strings. 1.x names map through ``aliases`` (``database.server.name`` →
``topic.prefix``, ``database.history.*`` → ``schema.history.internal.*``, ``*.whitelist``/``*.blacklist``
→ ``*.include.list``/``*.exclude.list``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from cdc.config import Password
from cdc.config.settings import setting, settings_from
from cdc.mysql.config_def import MYSQL_DEF
from cdc.mysql.metric_tags import parse_metric_tags
from cdc.mysql.naming import TopicNaming, field_adjuster, schema_adjuster
from cdc.mysql.tls import MySqlTls
from cdc.openlineage.config import LineageSettings, parse_pairs

__all__ = ["MYSQL_DEF", "MySqlSettings"]


@dataclass(frozen=True, eq=False)
class MySqlSettings:
    """The connector's config, parsed and typed: one field per key of :data:`MYSQL_DEF` (``a.b.c`` is
    ``a_b_c``; ``schema.history.internal.x`` is ``history_x``); ``raw`` keeps the original strings (for
    prefixed keys such as per-table ``snapshot.select.statement.overrides.<table>``)."""

    raw: Mapping[str, str]
    database_hostname: str = setting("database.hostname")
    database_port: int = setting("database.port")
    database_user: str = setting("database.user")
    database_password: Password | None = setting("database.password")
    database_server_id: int = setting("database.server.id")
    database_server_id_offset: int = setting("database.server.id.offset")  # read by nothing, as in Debezium
    database_ssl_mode: str = setting("database.ssl.mode")
    database_ssl_truststore: str | None = setting("database.ssl.truststore")
    database_ssl_truststore_password: Password | None = setting("database.ssl.truststore.password")
    database_ssl_keystore: str | None = setting("database.ssl.keystore")
    database_ssl_keystore_password: Password | None = setting("database.ssl.keystore.password")
    database_connection_timezone: str | None = setting("database.connectionTimezone")
    database_initial_statements: str = setting("database.initial.statements")
    connect_timeout_ms: int = setting("connect.timeout.ms")
    errors_max_retries: int = setting("errors.max.retries")
    connect_keep_alive: bool = setting("connect.keep.alive")
    connect_keep_alive_interval_ms: int = setting("connect.keep.alive.interval.ms")
    topic_prefix: str = setting("topic.prefix")
    database_include_list: tuple[str, ...] = setting("database.include.list")
    database_exclude_list: tuple[str, ...] = setting("database.exclude.list")
    table_include_list: tuple[str, ...] = setting("table.include.list")
    table_exclude_list: tuple[str, ...] = setting("table.exclude.list")
    column_include_list: tuple[str, ...] = setting("column.include.list")
    column_exclude_list: tuple[str, ...] = setting("column.exclude.list")
    table_ignore_builtin: bool = setting("table.ignore.builtin")
    include_list_unmatched_mode: str = setting("include.list.unmatched.mode")
    message_key_columns: str = setting("message.key.columns")
    skipped_operations: tuple[str, ...] = setting("skipped.operations")
    gtid_source_includes: tuple[str, ...] = setting("gtid.source.includes")
    gtid_source_excludes: tuple[str, ...] = setting("gtid.source.excludes")
    snapshot_mode: str = setting("snapshot.mode")
    snapshot_locking_mode: str = setting("snapshot.locking.mode")
    snapshot_lock_timeout_ms: int = setting("snapshot.lock.timeout.ms")
    snapshot_fetch_size: int | None = setting("snapshot.fetch.size")
    snapshot_delay_ms: int = setting("snapshot.delay.ms")
    streaming_delay_ms: int = setting("streaming.delay.ms")
    snapshot_tables_order_by_row_count: str = setting("snapshot.tables.order.by.row.count")
    snapshot_max_threads: int = setting("snapshot.max.threads")
    snapshot_mode_configuration_based_snapshot_data: bool = setting(
        "snapshot.mode.configuration.based.snapshot.data"
    )
    snapshot_mode_configuration_based_snapshot_schema: bool = setting(
        "snapshot.mode.configuration.based.snapshot.schema"
    )
    snapshot_mode_configuration_based_start_stream: bool = setting(
        "snapshot.mode.configuration.based.start.stream"
    )
    snapshot_mode_configuration_based_snapshot_on_schema_error: bool = setting(
        "snapshot.mode.configuration.based.snapshot.on.schema.error"
    )
    snapshot_mode_configuration_based_snapshot_on_data_error: bool = setting(
        "snapshot.mode.configuration.based.snapshot.on.data.error"
    )
    snapshot_max_threads_multiplier: int = setting("snapshot.max.threads.multiplier")
    snapshot_include_collection_list: tuple[str, ...] = setting("snapshot.include.collection.list")
    snapshot_select_statement_overrides: str = setting("snapshot.select.statement.overrides")
    snapshot_engine: str = setting("snapshot.engine")
    snapshot_spark_master: str = setting("snapshot.spark.master")
    snapshot_spark_partitions: int | None = setting("snapshot.spark.partitions")
    snapshot_spark_chunk_rows: int = setting("snapshot.spark.chunk.rows")
    snapshot_spark_encoder: str = setting("snapshot.spark.encoder")
    snapshot_spark_delivery: str = setting("snapshot.spark.delivery")
    snapshot_spark_stall_timeout_ms: int = setting("snapshot.spark.stall.timeout.ms")
    snapshot_spark_state_dir: str | None = setting("snapshot.spark.state.dir")
    time_precision_mode: str = setting("time.precision.mode")
    decimal_handling_mode: str = setting("decimal.handling.mode")
    bigint_unsigned_handling_mode: str = setting("bigint.unsigned.handling.mode")
    binary_handling_mode: str = setting("binary.handling.mode")
    enable_time_adjuster: bool = setting("enable.time.adjuster")
    include_unknown_datatypes: bool = setting("include.unknown.datatypes")
    column_propagate_source_type: tuple[str, ...] = setting("column.propagate.source.type")
    datatype_propagate_source_type: tuple[str, ...] = setting("datatype.propagate.source.type")
    converters: tuple[str, ...] = setting("converters")
    tombstones_on_delete: bool = setting("tombstones.on.delete")
    include_schema_changes: bool = setting("include.schema.changes")
    include_schema_comments: bool = setting("include.schema.comments")
    extended_headers_enabled: bool = setting("extended.headers.enabled")
    include_query: bool = setting("include.query")
    provide_transaction_metadata: bool = setting("provide.transaction.metadata")
    heartbeat_interval_ms: int = setting("heartbeat.interval.ms")
    heartbeat_action_query: str = setting("heartbeat.action.query")
    topic_heartbeat_prefix: str = setting("topic.heartbeat.prefix")
    topic_transaction: str = setting("topic.transaction")
    topic_delimiter: str = setting("topic.delimiter")
    max_batch_size: int = setting("max.batch.size")
    custom_metric_tags: str = setting("custom.metric.tags")
    guardrail_collections_max: int = setting("guardrail.collections.max")
    guardrail_collections_limit_action: str = setting("guardrail.collections.limit.action")
    max_queue_size: int = setting("max.queue.size")
    max_queue_size_in_bytes: int = setting("max.queue.size.in.bytes")
    poll_interval_ms: int = setting("poll.interval.ms")
    event_processing_failure_handling_mode: str = setting("event.processing.failure.handling.mode")
    unavailable_value_placeholder: str = setting("unavailable.value.placeholder")
    event_converting_failure_handling_mode: str = setting("event.converting.failure.handling.mode")
    post_processors: str = setting("post.processors")
    inconsistent_schema_handling_mode: str = setting("inconsistent.schema.handling.mode")
    schema_name_adjustment_mode: str = setting("schema.name.adjustment.mode")
    field_name_adjustment_mode: str = setting("field.name.adjustment.mode")
    topic_naming_strategy: str = setting("topic.naming.strategy")
    topic_cache_size: int = setting("topic.cache.size")
    schema_history_internal: str = setting("schema.history.internal")
    history_kafka_topic: str | None = setting("schema.history.internal.kafka.topic")
    history_kafka_bootstrap_servers: str | None = setting("schema.history.internal.kafka.bootstrap.servers")
    history_file_filename: str | None = setting("schema.history.internal.file.filename")
    history_skip_unparseable_ddl: bool = setting("schema.history.internal.skip.unparseable.ddl")
    history_store_only_captured_tables_ddl: bool = setting(
        "schema.history.internal.store.only.captured.tables.ddl"
    )
    history_store_only_captured_databases_ddl: bool = setting(
        "schema.history.internal.store.only.captured.databases.ddl"
    )
    history_ddl_filter: str = setting("schema.history.internal.ddl.filter")
    history_kafka_recovery_poll_interval_ms: int = setting(
        "schema.history.internal.kafka.recovery.poll.interval.ms"
    )
    history_kafka_recovery_attempts: int = setting("schema.history.internal.kafka.recovery.attempts")
    signal_enabled_channels: tuple[str, ...] = setting("signal.enabled.channels")
    notification_enabled_channels: tuple[str, ...] = setting("notification.enabled.channels")
    notification_sink_topic_name: str | None = setting("notification.sink.topic.name")
    signal_data_collection: str | None = setting("signal.data.collection")
    signal_file: str = setting("signal.file")
    signal_poll_interval_ms: int = setting("signal.poll.interval.ms")
    signal_kafka_topic: str | None = setting("signal.kafka.topic")
    signal_kafka_bootstrap_servers: str | None = setting("signal.kafka.bootstrap.servers")
    signal_kafka_group_id: str = setting("signal.kafka.groupId")
    signal_kafka_poll_timeout_ms: int = setting("signal.kafka.poll.timeout.ms")
    incremental_snapshot_chunk_size: int = setting("incremental.snapshot.chunk.size")
    incremental_snapshot_watermarking_strategy: str = setting("incremental.snapshot.watermarking.strategy")
    incremental_snapshot_allow_schema_changes: bool = setting("incremental.snapshot.allow.schema.changes")
    incremental_snapshot_parallelism: int = setting("incremental.snapshot.parallelism")
    incremental_snapshot_engine: str = setting("incremental.snapshot.engine")
    incremental_snapshot_spark_min_rows: int = setting("incremental.snapshot.spark.min.rows")
    read_only: bool = setting("read.only")
    openlineage_enabled: bool = setting("openlineage.integration.enabled")
    openlineage_config_file: str = setting("openlineage.integration.config.file.path")
    openlineage_job_namespace: str | None = setting("openlineage.integration.job.namespace")
    openlineage_job_description: str | None = setting("openlineage.integration.job.description")
    openlineage_job_tags: tuple[str, ...] | None = setting("openlineage.integration.job.tags")
    openlineage_job_owners: tuple[str, ...] | None = setting("openlineage.integration.job.owners")
    openlineage_kafka_bootstrap_servers: str | None = setting(
        "openlineage.integration.dataset.kafka.bootstrap.servers"
    )
    # Debezium's timings (config_groups.define_tuning)
    database_query_timeout_ms: int = setting("database.query.timeout.ms")
    binlog_net_write_timeout: int = setting("binlog.net.write.timeout")
    binlog_net_read_timeout: int = setting("binlog.net.read.timeout")
    use_nongraceful_disconnect: bool = setting("use.nongraceful.disconnect")
    connection_validation_timeout_ms: int = setting("connection.validation.timeout.ms")
    executor_shutdown_timeout_ms: int = setting("executor.shutdown.timeout.ms")
    gtid_source_filter_dml_events: bool = setting("gtid.source.filter.dml.events")
    retriable_restart_connector_wait_ms: int = setting("retriable.restart.connector.wait.ms")
    statistics_metrics_enabled: bool = setting("statistics.metrics.enabled")
    custom_sanitize_pattern: str = setting("custom.sanitize.pattern")
    min_row_count_to_stream_results: int = setting("min.row.count.to.stream.results")
    query_fetch_size: int = setting("query.fetch.size")
    gtid_ignore_on_recovery: bool = setting("gtid.ignore.on.recovery")
    legacy_snapshot_max_threads: bool = setting("legacy.snapshot.max.threads")
    snapshot_new_tables: str = setting("snapshot.new.tables")  # read by nothing, as in Debezium 3.6
    log_position_check: bool = setting("internal.log.position.check.enable")
    advanced_metrics: bool = setting("internal.advanced.metrics.enable")
    scan_all_columns_force: bool = setting("internal.snapshot.scan.all.columns.force")

    @classmethod
    def parse(cls, props: Mapping[str, str]) -> MySqlSettings:
        return settings_from(cls, MYSQL_DEF.parse(props), raw=dict(props))

    @property
    def prefix(self) -> str:
        return self.topic_prefix

    @property
    def password(self) -> str:
        pw = self.database_password
        return pw.value() if isinstance(pw, Password) else (pw or "")

    @functools.cached_property
    def tls(self) -> MySqlTls:
        """TLS for every connection (:mod:`cdc.mysql.tls`); the stores are read once, here (a
        :class:`~cdc.api.errors.ConfigError` naming the key when one cannot be)."""

        def clear(key: str) -> str | None:
            pw = {
                "database.ssl.truststore.password": self.database_ssl_truststore_password,
                "database.ssl.keystore.password": self.database_ssl_keystore_password,
            }[key]
            return pw.value() if isinstance(pw, Password) else pw

        return MySqlTls.from_props(self.raw, clear)

    @functools.cached_property
    def lineage(self) -> LineageSettings:
        """The ``openlineage.integration.*`` keys (:mod:`cdc.openlineage`)."""
        return LineageSettings(
            enabled=self.openlineage_enabled,
            config_file=self.openlineage_config_file,
            job_namespace=self.openlineage_job_namespace,
            job_description=self.openlineage_job_description,
            job_tags=parse_pairs(
                ",".join(self.openlineage_job_tags or ()), "openlineage.integration.job.tags"
            ),
            job_owners=parse_pairs(
                ",".join(self.openlineage_job_owners or ()), "openlineage.integration.job.owners"
            ),
            kafka_bootstrap_servers=self.openlineage_kafka_bootstrap_servers,
        )

    @functools.cached_property
    def metric_tags(self) -> dict[str, str]:
        """``custom.metric.tags`` as metric labels."""
        return parse_metric_tags(self.custom_metric_tags)

    @functools.cached_property
    def naming(self) -> TopicNaming:
        """``topic.naming.strategy`` with its keys: every topic name of the connector."""
        return TopicNaming.of(self)

    @functools.cached_property
    def schema_name(self) -> Callable[[str], str]:
        """``schema.name.adjustment.mode``, one adjuster per task (it remembers what it replaced)."""
        return schema_adjuster(self.schema_name_adjustment_mode)

    @functools.cached_property
    def field_name(self) -> Callable[[str], str]:
        """``field.name.adjustment.mode``, one adjuster per task."""
        return field_adjuster(self.field_name_adjustment_mode)

    @functools.cached_property
    def override_tables(self) -> frozenset[str]:
        """The tables ``snapshot.select.statement.overrides`` names (``db.table``)."""
        return frozenset(t.strip() for t in self.snapshot_select_statement_overrides.split(",") if t.strip())

    def select_override(self, table: str) -> str | None:
        """The snapshot SELECT given for ``table`` (``snapshot.select.statement.overrides.<table>``)."""
        if table not in self.override_tables:
            return None
        return self.raw.get(f"snapshot.select.statement.overrides.{table}")

    @property
    def incremental_spark(self) -> bool:
        """Whether incremental snapshots of large tables are read by the Spark engine."""
        engine = self.incremental_snapshot_engine.lower()
        if engine == "auto":
            return self.snapshot_engine.lower() == "spark"
        return engine == "spark"

    def skipped(self, op: str) -> bool:
        return op in self.skipped_op_codes

    @functools.cached_property
    def skipped_op_codes(self) -> frozenset[str]:
        """``skipped.operations`` as a set (empty for ``none``); asked once per change event."""
        ops = {o.strip().lower() for o in self.skipped_operations}
        return frozenset() if "none" in ops else frozenset(ops)
