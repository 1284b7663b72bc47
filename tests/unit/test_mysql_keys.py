"""Every Debezium MySQL/MariaDB key is honoured or refused by name; misspelt filters are refused.

The key lists are Debezium's own (``MySqlConnector.config()`` of 3.6.1 and ``MariaDbConnector.config()`` of
3.5.0, the newest Maven Central serves, written by ``python -m bench.debezium_columns --keys``), plus the
keys its MySQL documentation lists that ``config()`` does not declare. "Honoured" in docs/mysql.md's key
table means a test marks the key with ``@pytest.mark.honours`` (``tests/honours.py``).
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any

import pytest
from pymysql.err import OperationalError

from cdc.api.errors import ConnectError
from cdc.mysql.config import MYSQL_DEF, MySqlSettings
from cdc.mysql.keys import REFUSED
from cdc.mysql.validation import validate_mysql

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
DEBEZIUM_KEYS = sorted(
    {
        line.split("\t")[0]
        for fixture in ("debezium-mariadb-keys.tsv", "debezium-mysql-keys.tsv")
        for line in (FIXTURES / "mysql" / fixture).read_text().splitlines()
        if line and not line.startswith("#")
    }
)
# Documented for the MySQL connector (3.x) but not in MariaDbConnector.config().
DOC_KEYS = [
    "topic.delimiter",
    "topic.cache.size",
    "topic.heartbeat.prefix",
    "topic.transaction",
    "binary.handling.mode",
    "field.name.adjustment.mode",
    "include.unknown.datatypes",
    "event.converting.failure.handling.mode",
    "database.jdbc.driver",
    "database.protocol",
    "snapshot.locking.mode.custom.name",
    "snapshot.new.tables",
    "read.only",
    "schema.history.internal.kafka.topic",
    "schema.history.internal.kafka.bootstrap.servers",
    "schema.history.internal.kafka.recovery.poll.interval.ms",
    "schema.history.internal.kafka.recovery.attempts",
    "schema.history.internal.kafka.query.timeout.ms",
    "schema.history.internal.kafka.create.timeout.ms",
    "schema.history.internal.producer.acks",
    "schema.history.internal.consumer.fetch.max.bytes",
    "signal.kafka.topic",
    "signal.kafka.bootstrap.servers",
    "signal.kafka.groupId",
    "signal.kafka.poll.timeout.ms",
    "signal.consumer.max.poll.records",
    "notification.sink.topic.name",
    "unavailable.value.placeholder",
    "database.connectionTimeZone",
]
BASE = {
    "database.hostname": "db.invalid",
    "database.user": "u",
    "database.password": "p",
    "topic.prefix": "p",
    "schema.history.internal.kafka.topic": "h",
}


def _sample(name: str) -> str:
    """A concrete key for a Debezium pattern key (``column.mask.with.(d+).chars`` …)."""
    return name.replace("([^.]+)", "SHA-256").replace("(.+)", "salt").replace("(d+)", "5")


def _errors(props: dict[str, str]) -> dict[str, list[str]]:
    return {v.name: v.errors for v in validate_mysql({**BASE, **props}) if v.errors}


@pytest.mark.parametrize("name", sorted({_sample(n) for n in DEBEZIUM_KEYS + DOC_KEYS}))
def test_every_debezium_key_is_declared_or_refused_by_name(name: str) -> None:
    if MYSQL_DEF.knows(name):
        return
    refusals = [r for r in REFUSED if r.matches(name)]
    assert refusals, f"{name} is neither declared nor refused"
    errors = _errors({name: "some value cdc cannot honour"})
    assert name in errors and name in errors[name][0], errors


def test_the_key_lists_are_debeziums() -> None:
    assert len(DEBEZIUM_KEYS) > 100 and "column.mask.hash.([^.]+).with.salt.(.+)" in DEBEZIUM_KEYS


def test_a_refused_key_set_to_debeziums_default_is_accepted() -> None:
    assert (
        _errors({"binlog.buffer.size": "0", "post.processors": "", "extended.headers.enabled": "false"}) == {}
    )
    errors = _errors({"binlog.buffer.size": "4"})
    assert "only '0', Debezium's default, is accepted" in errors["binlog.buffer.size"][0]
    assert "reselect" in _errors({"post.processors": "reselector"})["post.processors"][0]


@pytest.mark.parametrize(
    ("typo", "intended"),
    [
        ("table.include.lsit", "table.include.list"),
        ("database.includelist", "database.include.list"),
        ("table.whitelst", "table.whitelist"),
        ("column.exclude.lists", "column.exclude.list"),
    ],
)
def test_a_misspelt_filter_is_an_error_naming_the_intended_key(typo: str, intended: str) -> None:
    errors = _errors({typo: "inventory.orders"})
    assert typo in errors, errors
    assert f"did you mean {intended}?" in errors[typo][0]


def test_1x_filter_names_and_other_keys_are_not_taken_for_typos() -> None:
    props = {
        "table.whitelist": "db.t",
        "column.blacklist": "db.t.c",
        "topic.creation.default.include": "x",
        "transforms.unwrap.drop.tombstones": "false",
    }
    assert _errors(props) == {}


def test_a_misspelt_key_that_is_not_a_filter_is_logged_not_refused(caplog: pytest.LogCaptureFixture) -> None:
    """The seed 1.x config misspells the history's brokers; it must keep working."""
    assert _errors({"database.histroy.kafka.bootstrap.servers": "localhost:9092"}) == {}


def test_the_seed_configs_validate_without_errors() -> None:
    from cdc.worker.properties import load_properties

    seed = load_properties(FIXTURES / "seed-configs" / "debezium-mysql-1x.properties")
    avro = json.loads((FIXTURES / "seed-configs" / "debezium-mysql-avro.json").read_text())["config"]
    for config in (seed, avro):
        assert {v.name: v.errors for v in validate_mysql(config) if v.errors} == {}


def test_jdbc_driver_properties_are_accepted_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert _errors({"database.allowPublicKeyRetrieval": "true", "database.useCursorFetch": "true"}) == {}
    assert (
        "'database.allowPublicKeyRetrieval' is a property of MySQL's JDBC driver (Connector/J)" in caplog.text
    )
    # camelCase: a driver property, not "did you mean database.user" (useSSL itself is a TLS key now)
    assert "'database.useCursorFetch' is a property of MySQL's JDBC driver" in caplog.text


def test_a_misspelt_database_key_is_unknown_with_the_close_key_not_a_driver_property(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING):
        _errors({"database.hostnme": "db", "database.ssl.mod": "required", "database.some.thing": "x"})
    assert (
        "'database.hostnme' is not a known configuration and is ignored; did you mean 'database.hostname'?"
        in (caplog.text)
    )
    assert "did you mean 'database.ssl.mode'?" in caplog.text
    assert "'database.some.thing' is not a known configuration of the MySQL connector" in caplog.text
    assert "JDBC driver;" not in caplog.text and "driver (Connector/J)" not in caplog.text


def test_column_rules_and_converters_are_validated() -> None:
    errors = _errors(
        {
            "column.mask.hash.NOPE-1.with.salt.s": "db.t.c",
            "column.truncate.to.4.chars": "db.t.(",
            "converters": "a,b",
            "a.type": "io.debezium.connector.mysql.converters.SomethingElse",
        }
    )
    assert "unknown hash algorithm 'NOPE-1'" in errors["column.mask.hash.NOPE-1.with.salt.s"][0]
    assert "not a regular expression" in errors["column.truncate.to.4.chars"][0]
    assert "is not one of cdc's converters" in errors["a.type"][0]
    assert "The converter 'b' has no 'b.type'" in errors["converters"][0]
    ok = {
        "converters": "boolean",
        "boolean.type": "io.debezium.connector.binlog.converters.TinyIntOneToBooleanConverter",
    }
    assert _errors(ok) == {}


def test_the_worker_logs_unknown_keys_as_connect_does(caplog: pytest.LogCaptureFixture) -> None:
    from cdc.worker import validation

    config = {
        "connector.class": "FileStreamSource",
        "name": "f",
        "topic": "t",
        "file": "/dev/null",
        "tasks.mx": "1",
        "transforms": "",
        "key.converter.schemas.enable": "false",
    }
    with caplog.at_level(logging.WARNING, logger="cdc.worker.validation"):
        validation.validate(config)
    assert "The configuration 'tasks.mx' was supplied but isn't a known config." in caplog.text
    assert "'tasks.mx' looks like a misspelling of 'tasks.max'" in caplog.text
    assert "key.converter.schemas.enable" not in caplog.text


class _NoWait(threading.Event):
    def wait(self, timeout: float | None = None) -> bool:
        return False


@pytest.mark.parametrize("retries", [0, 2])
def test_errors_max_retries_bounds_the_reconnections(retries: int) -> None:
    from cdc.history.store import MemorySchemaHistory
    from cdc.mysql.capture import CaptureContext
    from cdc.mysql.metrics import StreamingMetrics
    from cdc.mysql.offsets import BinlogOffset
    from cdc.mysql.streaming import Streamer

    settings = MySqlSettings.parse({**BASE, "errors.max.retries": str(retries)})
    ctx = CaptureContext.build(settings, MemorySchemaHistory(), lambda r: True, _NoWait(), mariadb=True)
    attempts: list[Any] = []

    def lost(start: Any) -> Any:
        attempts.append(start)
        raise OperationalError(2013, "Lost connection to MySQL server during query")

    streamer = Streamer(ctx, StreamingMetrics("p"), reader_factory=lost)
    with pytest.raises(ConnectError, match=f"errors.max.retries={retries}"):
        streamer.run(BinlogOffset("binlog.000001", 4))
    assert len(attempts) == retries + 1


@pytest.mark.parametrize(
    ("key", "value", "default"),
    [
        ("incremental.snapshot.allow.schema.changes", "true", "false"),
    ],
)
def test_declared_keys_with_unimplemented_values_are_refused(key: str, value: str, default: str) -> None:
    errors = _errors({key: value})
    assert f"The '{key}' value {value!r} is not supported by cdc" in errors[key][0], errors
    assert _errors({key: default}) == {}


def test_keep_alive_off_is_accepted() -> None:
    """connect.keep.alive=false: the binlog client does not reconnect (tests/integration/
    test_mysql_connection_keys.py shows the task failing when its connection is lost)."""
    assert _errors({"connect.keep.alive": "false"}) == {}
    assert "connect.keep.alive.interval.ms" in _errors({"connect.keep.alive.interval.ms": "0"})


@pytest.mark.honours("schema.history.internal")
@pytest.mark.parametrize("key", ["schema.history.internal", "database.history"])
def test_a_schema_history_cdc_does_not_implement_is_refused(key: str) -> None:
    errors = _errors({key: "io.debezium.storage.redis.history.RedisSchemaHistory"})
    assert list(errors) == ["schema.history.internal"], errors
    assert (
        f"The '{key}' value 'io.debezium.storage.redis.history.RedisSchemaHistory' is not supported"
        in (errors["schema.history.internal"][0])
    )
    assert _errors({key: "io.debezium.storage.file.history.FileSchemaHistory"}).keys() <= {
        "schema.history.internal.file.filename"
    }


def test_docs_key_table_is_the_generated_one() -> None:
    from cdc.mysql.validation import key_table
    from tests.honours import honoured_keys

    docs = (Path(__file__).resolve().parent.parent.parent / "docs" / "mysql.md").read_text()
    table = key_table(set(honoured_keys()))
    assert docs.endswith(table), "docs/mysql.md's key table is stale: python -m tests.honours rewrites it"


# Declared keys no test marks yet with @pytest.mark.honours: the key table says "untested" for them, not
# "honoured". The list may only shrink: a key leaves it when a test shows it acting (this test then asks
# for its removal), and a newly declared key must come with a test or a refusal reason.
UNTESTED: set[str] = set()


def test_every_declared_key_has_a_test_or_a_reason() -> None:
    from cdc.mysql.validation import key_status
    from tests.honours import honoured_keys

    tested = set(honoured_keys())
    keys = [k.name for k in MYSQL_DEF.keys()] + ["signal.consumer.*"]  # noqa: SIM118
    untested = {k for k in keys if key_status(k.replace("*", "max.poll.records"), tested) == "untested"}
    assert untested - UNTESTED == set(), "declared without a test marking it (@pytest.mark.honours)"
    assert UNTESTED - untested == set(), "tested now: remove from UNTESTED"


def test_every_honours_mark_names_a_key_its_file_sets() -> None:
    """A mark names a key the connector knows (not a refused one), spelt as the test's file spells it: a
    mark cannot make a key "honoured" on its own."""
    from cdc.mysql.validation import canonical_key, key_status
    from tests.honours import TESTS, honoured_keys

    aliases = {k.name: k.aliases for k in MYSQL_DEF.keys()}  # noqa: SIM118
    for key, tests in honoured_keys().items():
        status = key_status(key, {key})
        assert status.startswith("honoured") or status in ("differs", "cdc only"), f"{key}: {status}, {tests}"
        names = [key.split(".with.salt.")[0], *aliases.get(canonical_key(key), ())]
        for path in {t.split("::")[0] for t in tests}:
            source = (TESTS.parent / path).read_text(encoding="utf-8")
            marks = sum(t.startswith(path + "::") for t in tests)
            assert sum(source.count(n) for n in names) > marks, f"{path} marks {key} but never sets it"


def test_the_share_of_debezium_keys_honoured_with_a_test_is_reported() -> None:
    from tests.honours import honoured_keys, honoured_share

    honoured, total, _ = honoured_share(set(honoured_keys()))
    assert total >= 140 and honoured >= 137, (honoured, total)  # 137 of 150 (91.3 %) on 28 Nov 2026


# Debezium 3.5's SchemaNameAdjuster.AVRO / AVRO_UNICODE on these names (run with its jars, 25 Nov 2026).
ADJUSTED = [
    ("p.db.table.Value", "p.db.table.Value", "p.db.table.Value"),
    ("my-prefix.db-1.t$x.Value", "my_prefix.db_1.t_x.Value", "my_u002dprefix.db_u002d1.t_u0024x.Value"),
    ("1abc.2def.Key", "_1abc.2def.Key", "_u0031abc.2def.Key"),
    ("p.db.tâble.Envelope", "p.db.t_ble.Envelope", "p.db.t_u00e2ble.Envelope"),
    ("a..b", "a..b", "a..b"),
    (".x", "_x", "_u002ex"),
    ("_ok.__9", "_ok.__9", "_u005fok._u005f_u005f9"),
]


@pytest.mark.parametrize(("name", "avro", "avro_unicode"), ADJUSTED)
def test_schema_names_are_adjusted_as_debezium_does(name: str, avro: str, avro_unicode: str) -> None:
    from cdc.mysql.schemanames import adjust_schema_name

    assert adjust_schema_name(name, "avro") == avro
    assert adjust_schema_name(name, "avro_unicode") == avro_unicode
    assert adjust_schema_name(name, "none") == name
