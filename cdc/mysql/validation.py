"""Validating a MySQL connector config: the declared keys, then what Debezium would accept or refuse.

:func:`validate_mysql` is the connector's ``validate`` without the server (``Connector.validate`` adds
the connection, binlog and grant checks of :mod:`cdc.mysql.connection`): :data:`~cdc.mysql.config.MYSQL_DEF`'s
per-key checks, Debezium's cross-key rules, and the keys it does not declare (:mod:`cdc.mysql.keys`: refused
Debezium keys, misspelt filters, column rules, converters). :func:`key_table` renders the key table of
``docs/mysql.md`` from the same data.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection, Mapping

from cdc.api.errors import ConfigError
from cdc.config import ConfigValue
from cdc.history.factory import history_class_error
from cdc.mysql.columns import column_rule_error
from cdc.mysql.config import MYSQL_DEF, MySqlSettings
from cdc.mysql.converters import converter_errors
from cdc.mysql.keys import (
    CDC_ONLY,
    DIFFERS,
    DRIVER_PREFIXES,
    LIMITED,
    NOTES,
    PATTERN_KEYS,
    REFUSED,
    closest_key,
    refusal_error,
    typo_errors,
)
from cdc.mysql.post_processors import post_processor_errors
from cdc.mysql.tls import MySqlTls, driver_tls_errors, effective_mode, is_driver_tls_key
from cdc.snapshot.spark_conf import connector_spark_errors

__all__ = ["canonical_key", "key_status", "key_table", "require_valid", "validate_mysql"]

log = logging.getLogger(__name__)


def validate_mysql(props: Mapping[str, str]) -> list[ConfigValue]:
    """Per-key validation plus the cross-key rules Debezium checks."""
    values = MYSQL_DEF.validate(props)
    by_name = {v.name: v for v in values}
    for key, message in _undeclared_errors(props).items():
        value = ConfigValue(key, props[key])
        value.add_error(message)
        values.append(value)
        by_name[key] = value
    for a, b in (
        ("database.include.list", "database.exclude.list"),
        ("table.include.list", "table.exclude.list"),
        ("column.include.list", "column.exclude.list"),
    ):
        if by_name[a].value and by_name[b].value:
            by_name[b].add_error(f'"{b}" is already specified together with "{a}"; only one may be set')
    if by_name["gtid.source.includes"].value and by_name["gtid.source.excludes"].value:
        by_name["gtid.source.excludes"].add_error("Cannot specify GTID excludes when includes are provided.")
    channels = {str(c).strip().lower() for c in by_name["notification.enabled.channels"].value or ()}
    if "sink" in channels and not by_name["notification.sink.topic.name"].value:
        by_name["notification.sink.topic.name"].add_error(
            "Notification topic name must be provided when kafka notification channel is enabled"
        )
    history_error = history_class_error(props)
    if history_error:
        by_name[canonical_key(history_error[0])].add_error(history_error[1])
    store_error = _store_error(props, by_name)
    if store_error:
        key, message = store_error
        if key not in by_name:
            by_name[key] = ConfigValue(key, props.get(key))
            values.append(by_name[key])
        by_name[key].add_error(message)
    history = props.get(
        "schema.history.internal",
        props.get("database.history", "io.debezium.storage.kafka.history.KafkaSchemaHistory"),
    )
    if "Kafka" in history:
        # The brokers may be left out: the worker's own bootstrap.servers is used then (the seed 1.x config
        # misspells that key, and Debezium would refuse it).
        for key in ("schema.history.internal.kafka.topic",):
            if not by_name[key].value and not by_name[key].errors:
                by_name[key].add_error(f"The '{key}' value is invalid: A value is required")
    return values


def _store_error(props: Mapping[str, str], by_name: dict[str, ConfigValue]) -> tuple[str, str] | None:
    """The trust and key stores open with their passwords: a missing file or a wrong password is an error
    on the key it concerns (key, message), before any connection is tried."""
    if any(v.errors for k, v in by_name.items() if k.startswith("database.ssl.")):
        return None
    try:
        MySqlTls.from_props(props, props.get)
    except ConfigError as exc:
        return exc.name or "database.ssl.mode", str(exc)
    return None


def _undeclared_errors(props: Mapping[str, str]) -> dict[str, str]:
    """Errors for keys MYSQL_DEF does not declare: Debezium keys cdc refuses, misspelt filters, bad
    column rules and converters; a JDBC driver property is only logged (it has no effect here)."""
    errors: dict[str, str] = dict(typo_errors(props, MYSQL_DEF.knows))
    tls_errors = driver_tls_errors(props)
    for key, value in props.items():
        if MYSQL_DEF.knows(key):
            message = column_rule_error(key, value) or refusal_error(key, str(value), LIMITED)
            if message:
                errors[key] = message
            continue
        message = refusal_error(key, str(value)) or tls_errors.get(key)
        if message:
            errors.setdefault(key, message)
        elif is_driver_tls_key(key):
            log.info("'%s' is read as database.ssl.mode=%s (docs/mysql.md)", key, effective_mode(props))
        elif key.startswith(DRIVER_PREFIXES) and key not in errors:
            log.warning("%s", _undeclared_driver_key(key))
    names = [n.strip() for n in str(props.get("converters") or "").split(",") if n.strip()]
    errors.update(converter_errors(names, props))
    errors.update(post_processor_errors(props))
    # Spark settings a connector may not make (JVM options, jars, the interpreter …): docs/snapshots.md
    errors.update(connector_spark_errors(props))
    return errors


def _undeclared_driver_key(key: str) -> str:
    """What a ``database.*`` / ``driver.*`` key MYSQL_DEF does not declare is. Debezium hands every such
    key to its JDBC driver, so it refuses none; cdc accepts them too, and says which it is. Connector/J's
    properties are camelCase words (``allowPublicKeyRetrieval``, ``useSSL``, ``connectTimeout``); Debezium's
    keys are lower-case and dotted, so a lower-case one close to a declared key is a typo, not a driver
    property (``database.hostnme``)."""
    prefix = next(p for p in DRIVER_PREFIXES if key.startswith(p))
    suffix = key[len(prefix) :]
    if "." not in suffix and suffix != suffix.lower():
        return (
            f"'{key}' is a property of MySQL's JDBC driver (Connector/J), which Debezium passes on; "
            "cdc connects without JDBC and ignores it"
        )
    names = [k.name for k in MYSQL_DEF.keys()] + [a for k in MYSQL_DEF.keys() for a in k.aliases]  # noqa: SIM118
    intended = closest_key(key, names)
    if intended is not None:
        return f"'{key}' is not a known configuration and is ignored; did you mean '{intended}'?"
    return (
        f"'{key}' is not a known configuration of the MySQL connector and is ignored "
        "(Debezium would pass it to its JDBC driver)"
    )


def require_valid(props: Mapping[str, str]) -> MySqlSettings:
    errors = [e for v in validate_mysql(props) for e in v.errors]
    if errors:
        raise ConfigError("; ".join(errors))
    return MySqlSettings.parse(props)


def canonical_key(name: str) -> str:
    """A declared key's own name for ``name`` or one of its aliases (``name`` itself otherwise)."""
    for key in MYSQL_DEF.keys():  # noqa: SIM118 - ConfigDef.keys() gives ConfigKeys
        if name == key.name or name in key.aliases:
            return key.name
    return name


def key_status(name: str, tested: Collection[str]) -> str:
    """The key table's status of one concrete key, ``tested`` being the keys some test marks with
    ``@pytest.mark.honours`` (``tests/honours.py``): *honoured* only with such a test; a declared key
    without one is *untested* (which ``tests/unit/test_mysql_keys.py`` does not let through)."""
    tested_names = {canonical_key(k) for k in tested}
    client = _client_prefix(name)
    if client is not None:  # the history's producer./consumer. settings: one family per prefix
        return "honoured" if any(_client_prefix(k) == client for k in tested) else "untested"
    if MYSQL_DEF.knows(name) and not any(re.fullmatch(p, name) for p in PATTERN_KEYS):
        name = canonical_key(name)
        if name.startswith(CDC_ONLY):
            return "cdc only"
        if any(r.matches(name) for r in LIMITED):
            return "honoured, some values" if name in tested_names else "refused, some values"
        if name in DIFFERS:
            return "differs"
        return "honoured" if name in tested_names else "untested"
    for pattern in PATTERN_KEYS:
        if re.fullmatch(pattern, name):
            return "honoured" if any(re.fullmatch(pattern, k) for k in tested) else "untested"
    for refusal in REFUSED:
        if refusal.matches(name):
            return "refused unless default" if refusal.accepted else "refused"
    return "unknown"


def _client_prefix(name: str) -> str | None:
    """``producer.``/``consumer.`` of a schema history client setting (either spelling), else None."""
    for old in ("schema.history.internal.", "database.history."):
        for client in ("producer.", "consumer."):
            if name.startswith(old + client):
                return client
    return None


def key_table(tested: Collection[str] = ()) -> str:
    """docs/mysql.md's key table: every key (declared, parameterised, refused) with its status; ``tested``:
    the keys tests mark as shown acting (see :func:`key_status`)."""
    rows: list[tuple[str, str, str]] = []
    for key in MYSQL_DEF.keys():  # noqa: SIM118 - ConfigDef.keys() gives ConfigKeys
        limited = [r for r in LIMITED if r.matches(key.name)]
        note = key.documentation
        if key.aliases:
            note += " Also read as: " + ", ".join(f"`{a}`" for a in key.aliases) + "."
        status = key_status(key.name, tested)
        if status == "cdc only":
            pass
        elif limited:
            accepted = ", ".join(f"`{a}`" for a in limited[0].accepted if a) or "empty"
            note += f" Accepted: {accepted}; other values are refused ({limited[0].reason})."
        elif key.name in DIFFERS:
            note += " " + DIFFERS[key.name][0].upper() + DIFFERS[key.name][1:] + "."
        elif key.name in NOTES:
            note += " Differs: " + NOTES[key.name] + "."
        rows.append((f"`{key.name}`", status, note))
    for pattern, sample, note in (
        (
            "column.mask.with.N.chars",
            "column.mask.with.5.chars",
            "Character columns replaced by N `*` (see Column rules).",
        ),
        (
            "column.mask.hash[.v2].ALGORITHM.with.salt.SALT",
            "column.mask.hash.SHA-256.with.salt.s",
            "Character columns hashed as Debezium does.",
        ),
        ("column.truncate.to.N.chars", "column.truncate.to.5.chars", "Strings and bytes cut to N."),
        (
            "signal.consumer.*",
            "signal.consumer.max.poll.records",
            "Java consumer settings of the Kafka signal channel, as the worker's "
            "connector.client.config.override.policy allows (see docs/security.md).",
        ),
    ):
        rows.append((f"`{pattern}`", key_status(sample, tested), note))
    for pattern, note in (
        ("<converter>.type, <converter>.<option>", "The converters named in `converters`."),
        (
            "<post processor>.type, <post processor>.reselect.*",
            "The post processors named in `post.processors`: Debezium's ReselectColumnsPostProcessor and its "
            "options (columns.include.list, columns.exclude.list, unavailable.values, null.values, "
            "use.event.key, error.handling.mode).",
        ),
        (
            "snapshot.spark.conf.*",
            "Spark settings of the Spark snapshot: only the keys docs/snapshots.md lists (parallelism, "
            "memory, shuffle, executors); any other Spark key comes from the worker file.",
        ),
    ):
        owner = "post.processors" if pattern.startswith("<post") else "converters"
        status = "cdc only" if pattern.startswith("snapshot.") else key_status(owner, tested)
        rows.append((f"`{pattern}`", status, note))
    for refusal in REFUSED:
        name = (
            refusal.pattern.replace("\\.", ".")
            .replace(".+", "*")
            .replace("(keystore|truststore)(.password)?", "{keystore,truststore}[.password]")
        )
        name = name.replace("(write|read)", "{write,read}").replace("(schemas|tables)", "{schemas,tables}")
        if {"true", "false"} <= set(refusal.accepted):
            status, note = "accepted", refusal.reason[0].upper() + refusal.reason[1:] + "."
        elif refusal.accepted:
            default = f"`{refusal.accepted[0]}`" if refusal.accepted[0] else "empty"
            status, note = "refused unless default", f"Accepted only as {default}: {refusal.reason}."
        else:
            status, note = "refused", refusal.reason[0].upper() + refusal.reason[1:] + "."
        rows.append((f"`{name}`", status, note))
    lines = ["| key | status | notes |", "|---|---|---|"]
    lines += [f"| {k} | {s} | " + n.replace("|", "\\|") + " |" for k, s, n in rows]
    return "\n".join(lines) + "\n"
