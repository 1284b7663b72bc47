"""The JVM path of a chunk: Spark's JDBC reader, the envelope built with Spark SQL expressions.

The Python path (:mod:`cdc.mysql.spark.executor`) reads a chunk with PyMySQL inside a Python task and
builds every record in Python; on a small machine that costs as much as the single reader. Here the chunk
is read by Spark's JDBC reader (the MariaDB Connector/J driver, ``spark.jars.packages``) and the key and
value bytes are computed in the JVM by Spark SQL expressions; Python only hands the finished bytes to
the producer.

**Byte-identical by construction where it can be, by test where it cannot.**

* Everything constant per table or per chunk comes from our own Python code: the field names, the JSON
  written for a NULL (Connect's ``replace.null.with.default`` and the column's fallback), the ``schema``
  part of ``schemas.enable=true``, the whole envelope around ``after`` (``before``, ``source`` with the
  run's position and each snapshot marker, ``op``, ``ts_*``). The envelope is rendered once per chunk by
  :class:`~cdc.converters.json_converter.JsonConverter` with ``after`` null and cut at ``"after":null``.
* Only each row's ``after`` (and key) payload is computed in SQL, column by column
  (:func:`~cdc.mysql.spark.jvm_columns.column_sql`). The server's SELECT computes what it computes exactly:
  integers, booleans, epoch days and micro/milliseconds of dates and datetimes (its own date functions,
  integer arithmetic; no Spark calendar or session zone involved), TIMESTAMP text in the UTC session, base64
  of binary data, the two's-complement hex of an exact decimal's unscaled value (its DECIMAL arithmetic, any
  precision). Spark SQL then escapes strings as Jackson does, writes doubles and floats with Jackson's own
  shortest-digit writer (``schubfach``: what the JDK 19+ ``Double.toString`` our Python writer follows
  prints; Java 17's, which Spark's ``to_json`` uses, differs in ~0.3 % of doubles), base64-encodes the
  decimals and puts in the NULL texts. Expressions stay small: Catalyst and the code generator take seconds
  over large trees, and nothing in them depends on the chunk, so they compile once per table.
* Values the database sends as text and Python parses (FLOAT, DOUBLE, DECIMAL as a double) are read as
  the same text (``CAST(… AS CHAR)``) and parsed the same way (``Double.parseDouble`` rounds as
  ``float()`` does).
* Markers: rows are read ``ORDER BY`` the primary key (as the Python path reads them); the producing
  task puts each ``after`` into the chunk's envelope, with the ``first…`` and ``last…`` tails on the
  chunk's first and last row, exactly where :func:`cdc.mysql.spark.executor._marker` puts them.

A table is taken by this path only when every column has a mapping here and the record's conversion is
ours to reproduce: the key and value converters are our JsonConverter, and the transforms (if any) only
rename topics (RegexRouter, optionally under a TopicNameMatches predicate). Otherwise
:func:`table_encoding` raises :class:`Unsupported` and the chunk runs on the Python path.

Timestamps: a chunk's records carry one ``source.ts_ms`` and one envelope ``ts_ms/ts_us/ts_ns``, the
driver's clock when it submitted the chunk (the Python path takes them per fetch and per record).

Watermarks: the low one (``SHOW MASTER STATUS`` on the driver) before the chunk's Spark job is
submitted, the high one after the job finished, that is after Kafka acknowledged every record: the read
lies inside the window, as DBLog needs (see :mod:`cdc.mysql.spark.reconcile`).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cdc.api.records import Header
from cdc.history.model import Table
from cdc.mysql.spark.executor import ChunkResult, ChunkTask, RunContext, _marker, _master_position
from cdc.mysql.spark.jvm_columns import Unsupported, column_sql, quote_name

if TYPE_CHECKING:
    from cdc.mysql.config import MySqlSettings

__all__ = [
    "DOUBLE_TO_TEXT",
    "FLOAT_TO_TEXT",
    "JDBC_DRIVER",
    "JDBC_PACKAGE",
    "TableEncoding",
    "TableLines",
    "Unsupported",
    "run_chunk_jvm",
    "table_encoding",
    "table_lines",
]

log = logging.getLogger(__name__)

JDBC_PACKAGE = "org.mariadb.jdbc:mariadb-java-client:3.5.3"
"""The JDBC driver, from Maven Central through ``spark.jars.packages`` (Ivy caches it in ~/.ivy2*)."""
JDBC_DRIVER = "org.mariadb.jdbc.Driver"
DOUBLE_TO_TEXT = "com.fasterxml.jackson.core.io.schubfach.DoubleToDecimal"
FLOAT_TO_TEXT = "com.fasterxml.jackson.core.io.schubfach.FloatToDecimal"

MARKERS = ("true", "first", "first_in_data_collection", "last_in_data_collection", "last", "incremental")
_AFTER_NULL = b'"after":null'
_JSON_CONVERTER = "cdc.converters.json_converter.JsonConverter"
_ROUTER = "cdc.transforms.routing.RegexRouter"
_TOPIC_PREDICATE = "TopicNameMatches"


# ----------------------------------------------------------------------------------- the table


@dataclass
class TableEncoding:
    """A table's chunk query and the Spark SQL of its key and value, made on the driver."""

    table: Table
    topic: str
    select_list: list[str]
    custom_schema: str
    order_by: str
    key_sql: Any  # pyspark Column: the key's JSON text
    after_sql: Any  # pyspark Column: the JSON text of the ``after`` payload
    events: Any
    schema: Any  # the TableSchema
    value_converter: Any

    def value_pieces(self, ctx: RunContext, now_ns: int) -> tuple[bytes, dict[str, bytes]]:
        return value_pieces(self.events, self.schema, self.value_converter, self.topic, ctx, now_ns)


def value_pieces(
    events: Any, ts: Any, conv: Any, topic: str, ctx: RunContext, now_ns: int
) -> tuple[bytes, dict[str, bytes]]:
    """The value bytes around ``after``, rendered by our JsonConverter from the record the Python path
    builds (``after`` left null): ``(prefix, {marker: suffix})``; ``now_ns`` is the clock reading of
    both ``source.ts_ms`` (``int(time.time() * 1000)`` there) and the envelope's ``ts_*``."""
    from cdc.api.struct import Struct

    ts_ms = now_ns // 1_000_000
    prefix: bytes | None = None
    suffixes: dict[str, bytes] = {}
    for marker in MARKERS:
        by_name = {
            "before": None,
            "after": None,
            "source": events.source(_position(ctx), ts.table.id, ts_ms, marker),
            "transaction": None,
            "op": "r",
            "ts_ms": ts_ms,
            "ts_us": now_ns // 1000,
            "ts_ns": now_ns,
        }
        try:
            values = [by_name[f.name] for f in ts.envelope.fields]
        except KeyError as exc:
            raise Unsupported(f"an envelope field this path does not know: {exc}") from exc
        data = conv.from_connect_data(topic, ts.envelope, Struct(ts.envelope, values))
        if data is None or data.count(_AFTER_NULL) != 1:
            raise Unsupported("the envelope's JSON does not have exactly one '\"after\":null'")
        head, tail = data.split(_AFTER_NULL)
        head += b'"after":'
        if prefix is not None and head != prefix:
            raise Unsupported("the envelope's JSON before 'after' depends on the marker")
        prefix = head
        suffixes[marker] = tail
    assert prefix is not None
    return prefix, suffixes


def _position(ctx: RunContext) -> Any:
    from cdc.mysql.events import SourcePosition

    return SourcePosition(file=ctx.start_file, pos=ctx.start_pos, server_id=0)


def _kind(obj: Any) -> str:
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


def _converters(ctx: RunContext) -> tuple[Any, Any]:
    """The key and value converters, which must be our JsonConverter (not a subclass)."""
    key_conv, value_conv = ctx.writer.key.build(), ctx.writer.value.build()
    for conv in (key_conv, value_conv):
        if _kind(conv) != _JSON_CONVERTER:
            raise Unsupported(f"converter {_kind(conv)}: only the JsonConverter is encoded in SQL")
    return key_conv, value_conv


def _routed_topic(ctx: RunContext, record: Any) -> str:
    """The topic after the transforms, which may only rename topics (RegexRouter, optionally under a
    TopicNameMatches predicate): the same for every ``op=r`` record of a table."""
    if not ctx.writer.connector_config.get("transforms", "").strip():
        return str(record.topic)
    from cdc.transforms.chain import build_chain

    chain = build_chain(ctx.writer.connector_config)
    for stage in chain._stages:
        if _kind(stage.transformation) != _ROUTER:
            raise Unsupported(f"transform {stage.alias}: only RegexRouter is applied in SQL")
        if stage.predicate is not None and type(stage.predicate).__name__ != _TOPIC_PREDICATE:
            raise Unsupported(f"predicate {type(stage.predicate).__name__} of transform {stage.alias}")
    out = chain.apply(record)
    if out is None or out.headers or out.kafka_partition is not None or out.timestamp is not None:
        raise Unsupported("the transforms change more than the topic")
    return str(out.topic)


def _string_json(c: str) -> Any:
    """A string as Jackson writes it: quoted, with ``"``, ``\\`` and control characters escaped. Spark's
    ``to_json`` is Jackson; it is called only for the rare value that needs an escape."""
    from pyspark.sql import functions as F

    wrapped = f"to_json(named_struct('v', {c}))"
    return F.when(
        F.col(c).rlike('[\\x00-\\x1f"\\\\]'), F.expr(f"substring({wrapped}, 6, length({wrapped}) - 6)")
    ).otherwise(F.concat(F.lit('"'), F.col(c), F.lit('"')))


def table_encoding(table: Table, ctx: RunContext) -> TableEncoding:
    """The JVM encoding of ``table`` for this run; :class:`Unsupported` (with the reason) if there is
    none that is byte-identical to the Python path's records. Needs an active SparkContext."""
    import orjson
    from pyspark.sql import functions as F

    from cdc.api.errors import DataError
    from cdc.converters._java import fix_escapes
    from cdc.converters.json_values import compile_encoder
    from cdc.mysql.config import MySqlSettings
    from cdc.mysql.events import EventFactory

    if not table.primary_key:
        raise Unsupported("no primary key")
    key_conv, value_conv = _converters(ctx)
    settings = MySqlSettings.parse(ctx.connector_config)
    if str(table.id) in settings.override_tables:
        raise Unsupported("a snapshot.select.statement.overrides SELECT")
    events = EventFactory(settings, ctx.connector)
    ts = events.schema_for(table)
    if ts.key_schema is None:
        raise Unsupported("no key")
    if any(m.custom for m in ts.mappings):
        raise Unsupported("custom converters or column rules (masking, hashing, truncation …)")
    sample = events.read(
        ts, [None] * len(ts.column_names), events.source(_position(ctx), table.id, 0, "true"), {}
    )
    topic = _routed_topic(ctx, sample)

    select: list[str] = []
    types: list[str] = []
    aliases: dict[str, str] = {}
    for i, m in enumerate(ts.mappings):
        spec = column_sql(m, events.mapper, value_conv.numeric_decimals)
        alias = f"__cdc_{i}"
        select.append(f"{spec.select} AS {quote_name(alias)}")
        types.append(f"{alias} STRING")
        aliases[events.settings.field_name(m.column.name)] = alias
    # by field name: field.name.adjustment.mode may have renamed a column's field
    by_name = {events.settings.field_name(m.column.name): m for m in ts.mappings}

    def field_json(name: str, schema: Any, conv: Any) -> Any:
        m = by_name[name]
        spec = column_sql(m, events.mapper, conv.numeric_decimals)
        encode = compile_encoder(schema, conv.numeric_decimals, conv.replace_null_with_default)

        def text(v: Any) -> str:
            try:
                return fix_escapes(orjson.dumps(encode(v))).decode()
            except (DataError, orjson.JSONEncodeError) as exc:
                raise Unsupported(f"column {name}: {exc}") from exc

        c = quote_name(aliases[name])
        value: Any
        if spec.kind == "string":
            value = _string_json(c)
        elif spec.kind == "double":
            value = F.expr(f"java_method('{DOUBLE_TO_TEXT}', 'toString', CAST({c} AS DOUBLE))")
        elif spec.kind == "float_as_double":
            widened = f"CAST(CAST(CAST({c} AS DOUBLE) AS FLOAT) AS DOUBLE)"
            value = F.expr(f"java_method('{DOUBLE_TO_TEXT}', 'toString', {widened})")
        elif spec.kind == "float":
            value = F.expr(f"java_method('{FLOAT_TO_TEXT}', 'toString', CAST(CAST({c} AS DOUBLE) AS FLOAT))")
        elif spec.kind == "twos":
            complement = f"translate(substr({c}, 2), '0123456789ABCDEF', 'FEDCBA9876543210')"
            digits = f"CASE WHEN {c} LIKE '-%' THEN {complement} ELSE {c} END"
            value = F.expr(f"concat('\"', base64(unhex({digits})), '\"')")
        else:
            value = F.col(c)
            if spec.zero_sample is not None:
                if m.convert is None:
                    raise Unsupported(f"column {name}: no converter for its zero value")
                value = F.when(F.col(c) == "", F.lit(text(m.convert(spec.zero_sample)))).otherwise(value)
        return F.when(F.col(c).isNull(), F.lit(text(m.null))).otherwise(value)

    def struct_json(schema: Any, conv: Any) -> Any:
        if not schema.fields:
            return F.lit("{}")
        parts: list[Any] = []
        for i, f in enumerate(schema.fields):
            name_text = fix_escapes(orjson.dumps(f.name)).decode()
            parts.append(F.lit(("{" if i == 0 else ",") + name_text + ":"))
            parts.append(field_json(f.name, f.schema, conv))
        parts.append(F.lit("}"))
        return F.concat(*parts)

    after = struct_json(ts.value_schema, value_conv)
    key = struct_json(ts.key_schema, key_conv)
    if key_conv.schemas_enabled:
        head = b'{"schema":' + key_conv.as_json_schema(ts.key_schema) + b',"payload":'
        key = F.concat(F.lit(head.decode()), key, F.lit("}"))
    # The key columns, under their own names too: the chunk's range predicate and ORDER BY use them.
    taken = set(aliases.values())
    for n in table.primary_key:
        if n in taken:
            raise Unsupported(f"a key column named like our aliases: {n}")
        select.append(quote_name(n))
    value_pieces(events, ts, value_conv, topic, ctx, 0)  # an envelope this path cannot cut: Unsupported now
    return TableEncoding(
        table,
        topic,
        select,
        ", ".join(types),
        ", ".join(quote_name(n) for n in table.primary_key),
        key,
        after,
        events,
        ts,
        value_conv,
    )


# ----------------------------------------------------------------------------------- one chunk


def _jdbc_url(settings: MySqlSettings) -> str:
    # MySQLDialect (back-quoted identifiers, MySQL's types) is chosen for jdbc:mysql URLs; the MariaDB
    # driver accepts that scheme with permitMysqlScheme, and speaks to MySQL and MariaDB alike.
    host, port = settings.database_hostname, settings.database_port
    return f"jdbc:mysql://{host}:{port}/?permitMysqlScheme&useServerPrepStmts=false"


def _server_offers_tls(settings: MySqlSettings) -> bool:
    """Whether the server encrypts a connection under ``preferred`` (PyMySQL's fallback is Debezium's), for
    Connector/J, which has no such mode."""
    from cdc.mysql.connection import connect

    conn = connect(settings)
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW SESSION STATUS LIKE 'Ssl_cipher'")
            row = cur.fetchone()
        return bool(row and row[1])
    finally:
        conn.close()


def _session_init(settings: MySqlSettings) -> tuple[str, bool]:
    """The statements every chunk connection runs first (PyMySQL's session: UTC, the initial statements)."""
    statements = ["SET time_zone = '+00:00'"]
    statements += [s.strip() for s in settings.database_initial_statements.split(";") if s.strip()]
    return "; ".join(statements), len(statements) > 1


def _literal_predicate(task: ChunkTask) -> str:
    """The chunk's WHERE clause with its bounds as SQL literals (escaped as PyMySQL escapes them)."""
    from pymysql.converters import escape_item

    clause, params = task.chunk.where()
    if not clause:
        return "1 = 1"
    return clause % tuple(escape_item(p, "utf8mb4") for p in params)


@dataclass
class TableLines:
    """The chunks of one table in this run as one RDD of lines, one partition a chunk: Spark analyses,
    plans and resolves the JDBC schema once for the table; each chunk is then a job on its partition."""

    rdd: Any
    partition: dict[str, int]  # chunk id → partition


def table_lines(session: Any, enc: TableEncoding, tasks: Sequence[ChunkTask], ctx: RunContext) -> TableLines:
    """The chunks' rows as lines (the key's JSON, a newline — never in compact JSON, control characters
    are escaped — the ``after`` payload's JSON), each chunk's in primary-key order. Nothing in the
    expressions depends on a chunk: Spark compiles them once per table."""
    from pyspark import RDD
    from pyspark.serializers import UTF8Deserializer
    from pyspark.sql import functions as F

    from cdc.mysql.config import MySqlSettings

    settings = MySqlSettings.parse(ctx.connector_config)
    init, multi = _session_init(settings)
    url = _jdbc_url(settings) + ("&allowMultiQueries=true" if multi else "")
    query = f"(SELECT {', '.join(enc.select_list)} FROM {enc.table.id.sql()}) AS cdc_chunk"
    # Spark writes "SELECT <columns> FROM <query> WHERE <predicate>": the ORDER BY rides on each chunk's
    # predicate (an ORDER BY inside the derived table would be dropped by MariaDB's optimizer).
    predicates = [f"{_literal_predicate(t)} ORDER BY {enc.order_by}" for t in tasks]
    reader = (
        session.read.option("driver", JDBC_DRIVER)
        .option("user", settings.database_user)
        .option("password", str(settings.password or ""))
        .option("sessionInitStatement", init)
        .option("fetchsize", "5000")
        .option("customSchema", enc.custom_schema)
    )
    # database.ssl.*'s TLS as Connector/J's properties: reader options, which Spark passes to the driver
    # (the URL would be logged, and a trust store's password with it)
    for name, value in settings.tls.jdbc_options(lambda: _server_offers_tls(settings)).items():
        reader = reader.option(name, value)
    frame = reader.jdbc(url, query, predicates=predicates)
    lines = frame.select(F.concat(enc.key_sql, F.lit("\n"), enc.after_sql).alias("line"))
    # Strings cross to Python as bare UTF-8 bytes (as textFile lines do): no pickling, no Row objects, no
    # decoding. (mapInArrow would need pandas and pyarrow, which cdc does not depend on.)
    sc = session.sparkContext
    strings = getattr(lines._jdf, "as")(sc._jvm.org.apache.spark.sql.Encoders.STRING())
    rdd: Any = RDD(strings.javaRDD(), sc, UTF8Deserializer(use_unicode=False))
    return TableLines(rdd, {t.chunk.id: i for i, t in enumerate(tasks)})


def run_chunk_jvm(
    session: Any, enc: TableEncoding, task: ChunkTask, ctx: RunContext, lines: TableLines | None = None
) -> ChunkResult:
    """Read, encode and produce one chunk as a Spark job; returns once Kafka acknowledged every record.
    ``lines``: the table's lines with this chunk's partition (else made for this chunk alone)."""
    from cdc.mysql.config import MySqlSettings
    from cdc.mysql.connection import connect

    started = time.monotonic()
    settings = MySqlSettings.parse(ctx.connector_config)
    now_ns = time.time_ns()
    prefix, suffixes = enc.value_pieces(ctx, now_ns)
    if lines is None or task.chunk.id not in lines.partition:
        lines = table_lines(session, enc, [task], ctx)
    envelope = _Envelope(
        prefix,
        suffixes[_marker(task, False, False)],
        suffixes[_marker(task, True, False)],
        suffixes[_marker(task, False, True)],
        suffixes[_marker(task, True, True)],
    )
    produce = _partition_producer(
        ctx.writer, enc.topic, envelope, ctx.transactional_id(task.chunk.id), ctx.headers
    )
    conn = connect(settings)
    try:
        with conn.cursor() as meta:
            low = _master_position(meta)
        (rows, attempt, replayed), *_ = _run_partition(session.sparkContext, lines, task.chunk.id, produce)
        with conn.cursor() as meta:
            high = _master_position(meta)
    finally:
        with contextlib.suppress(Exception):
            conn.close()
    seconds = time.monotonic() - started
    return ChunkResult(task.chunk.id, rows, low, high, seconds, attempt, replayed, enc.topic)


@dataclass(frozen=True)
class _Envelope:
    """The value around ``after`` for one chunk: the prefix, and the tail of a row with ``snapshot:
    "true"``, of the chunk's first row, its last row and its only row (which may all be ``true``'s)."""

    prefix: bytes
    true: bytes
    first: bytes
    last: bytes
    only: bytes


def _run_partition(
    sc: Any, lines: TableLines, chunk_id: str, produce: Callable[[Iterator[tuple[Any, Any]]], Produced]
) -> list[Produced]:
    """Run the chunk's partition through ``produce`` in an executor's Python worker (one job)."""

    def on_lines(rows: Iterable[bytes]) -> Iterator[Produced]:
        def pairs() -> Iterator[tuple[bytes, bytes]]:
            for line in rows:
                key, sep, after = line.partition(b"\n")
                if not sep:
                    raise RuntimeError("a row of the JVM encoding has no key/value separator")
                yield key, after

        yield produce(pairs())

    results = sc.runJob(lines.rdd, on_lines, [lines.partition[chunk_id]])
    return [(int(n), int(a), bool(r)) for n, a, r in results]


Produced = tuple[int, int, bool]
"""What a chunk's task reports: its row count, Spark's attempt number, whether an earlier attempt had
committed the chunk (exactly once: then nothing was written again)."""


def _partition_producer(
    spec: Any,
    topic: str,
    envelope: _Envelope,
    transactional_id: str | None,
    headers: Sequence[Header] = (),
) -> Callable[[Iterator[tuple[Any, Any]]], Produced]:
    """The executor side: produce the partition's records in order with the worker's producer settings
    (each value is the envelope around the row's ``after``, the chunk's first and last rows with their
    markers, ``headers`` on each, converted once), in the chunk's transaction when ``transactional_id``
    is given; returns once Kafka acknowledged all of them (and the transaction committed)."""

    def produce(rows: Iterator[tuple[Any, Any]]) -> Produced:
        from cdc.snapshot.delivery import ChunkWriter, task_attempt

        # the transaction opens while the first rows are read, so the JVM's read of the chunk goes on
        out = ChunkWriter(spec, transactional_id, background=True, topic=topic)
        try:
            ahead = out.read_ahead(rows, _pair_size)
            before = out.committed_before(topic)
            if before is not None:
                return before, task_attempt(), True
            send = out.writer.send_raw
            raw_headers = out.writer.header_bytes(topic, headers) if headers else None
            prefix, true = envelope.prefix, envelope.true
            n = 0
            pending: tuple[Any, Any] | None = None
            for row in itertools.chain(ahead, rows):
                if pending is not None:
                    value = prefix + pending[1] + (envelope.first if n == 1 else true)
                    send(topic, pending[0], value, raw_headers)
                if row[1] is None or row[0] is None:
                    raise RuntimeError(f"the JVM encoding of a row of {topic} is NULL (an unexpected value)")
                pending = row
                n += 1
            if pending is not None:
                value = prefix + pending[1] + (envelope.only if n == 1 else envelope.last)
                send(topic, pending[0], value, raw_headers)
            out.finish(n)
            return n, task_attempt(), False
        finally:
            out.close()

    return produce


def _pair_size(row: tuple[Any, Any]) -> int:
    return len(row[0] or b"") + len(row[1] or b"")
