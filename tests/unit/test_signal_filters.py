"""What a signal's ``additional-conditions`` filter and its patterns may be: one SQL expression whatever
the backslash mode, never formatted by the driver; regexes matched within a time budget, GIL released."""

from __future__ import annotations

import itertools
import threading
import time
from typing import Any

import pymysql
import pytest

from cdc.mysql.incremental.filters import UnsafeFilterError, bind, check_filter, where_clause
from cdc.mysql.incremental.patterns import PatternError, SignalPatterns
from cdc.mysql.metrics import SignalMetrics
from cdc.mysql.signals.actions import SignalActions
from cdc.mysql.signals.record import SignalRecord

EVIL = r"(?:\w|\w\w|\w\w\w)*\.(?:\w|\w\w)*!"
"""Backtracks exponentially in ``regex`` too (``(.*.*)*x`` no longer does there, only in ``re``)."""
LONG_NAME = "inventory_db.customers_and_orders_archive_2024_by_region"


@pytest.mark.parametrize(
    "text",
    [
        'name LIKE "A%"',
        "name LIKE 'A%' AND id > 3",
        "a = 'x;y' OR b = \"--#/*\"",
        "id IN (SELECT id FROM t WHERE b = 'it''s')",
        "`odd;name` > 1",
        "x = '\\\\'",  # an escaped backslash: one string in both modes
        "(a = 1) AND ((b = 2))",
    ],
)
def test_one_expression_is_accepted_as_it_is(text: str) -> None:
    assert check_filter(f"  {text} ") == text


@pytest.mark.parametrize(
    "text",
    [
        "1=1; INSERT INTO canary SELECT * FROM salaries",
        "1=1 -- ",
        "1=1 --x",
        "1=1 # trailing",
        "1=1 /* c */",
        "1=1 /*!50000 ; */",
        "1=1) UNION (SELECT 1",
        "1=1) OR (1=1",
        "(1=1",
        "a = 'never closed",
        "a = `never closed",
        # with backslash escapes the ';' is quoted, without them (NO_BACKSLASH_ESCAPES) it is not
        "a = '\\' ; SELECT 1; '",
        "a = '\\'' OR 1=1 -- '",
    ],
)
def test_more_than_one_expression_is_refused(text: str) -> None:
    with pytest.raises(UnsafeFilterError, match="not one SQL expression"):
        check_filter(text)


class _Literals:
    """A connection's ``literal`` as PyMySQL writes it (no server needed)."""

    encoding = "utf8"

    def literal(self, value: Any) -> str:
        return str(pymysql.converters.escape_item(value, "utf8mb4"))


def test_the_filter_is_never_formatted_and_values_are_escaped() -> None:
    clause = where_clause(_Literals(), "(`a%%b` > %s)", ["x'%s"], "name LIKE 'A%' AND c = '%s'")
    assert clause == b" WHERE (`a%b` > 'x\\'%s') AND (name LIKE 'A%' AND c = '%s')"
    assert bind(_Literals(), "`k` = %s", [b"\xff\x00"]) == b"`k` = _binary X'ff00'"
    assert where_clause(_Literals(), "", [], "") == b""
    with pytest.raises(UnsafeFilterError):
        where_clause(_Literals(), "", [], "1=1; SELECT 2")


def test_patterns_are_matched_within_a_budget_without_the_gil() -> None:
    # a 2 s budget, so a matcher that held the GIL would leave a gap of 2 s in the ticks; the bounds below
    # leave room for a loaded machine (two cores shared by many test processes)
    patterns = SignalPatterns(budget_s=2.0)
    assert patterns.fullmatch(r"db\.it.*", "db.items")
    assert patterns.fullmatch("DB.ITEMS", "db.items", ignore_case=True)
    assert not patterns.fullmatch("(.*.*)*x", LONG_NAME)  # re: hours; regex: microseconds
    ticks: list[float] = []
    done = threading.Event()

    def tick() -> None:
        while not done.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.01)

    ticker = threading.Thread(target=tick)
    ticker.start()
    started = time.monotonic()
    try:
        with pytest.raises(PatternError, match="took longer than"):
            patterns.fullmatch(EVIL, LONG_NAME)
    finally:
        done.set()
        ticker.join()
    assert time.monotonic() - started < 30  # bounded; the bound is loose for a loaded machine
    gaps = [b - a for a, b in itertools.pairwise(ticks)]
    assert len(ticks) > 20 and max(gaps) < 1.9  # the other thread ran while the pattern was matched
    with pytest.raises(PatternError, match="took longer than"):  # the budget is spent for the signal
        patterns.fullmatch(r"db\..*", "db.items")
    with pytest.raises(PatternError, match="not a regular expression"):
        SignalPatterns().compile("(")


class _Failing:
    """Stands in for the incremental snapshot: every action fails as a query the server refused would."""

    signal_table = None
    read_only = True

    def execute(self, *args: Any) -> None:
        raise pymysql.err.ProgrammingError(1064, "You have an error in your SQL syntax")


def test_a_failing_signal_is_reported_and_skipped(caplog: pytest.LogCaptureFixture) -> None:
    metrics = SignalMetrics("srv")
    blocked: list[Any] = []
    actions = SignalActions(_Failing(), lambda t, c: blocked.append(t), "srv", metrics)  # type: ignore[arg-type]
    send = lambda i, d: actions.dispatch(SignalRecord(i, "execute-snapshot", d, "kafka"))  # noqa: E731
    send("a", '{"data-collections": ["db.t"]}')
    send("b", '{"data-collections": ["db.t"], "type": "blocking", "additional-condition": "1; DROP x"}')
    send(
        "c",
        '{"data-collections": ["db.t"], "additional-conditions": [{"data-collection": "(", "filter": ""}]}',
    )
    assert blocked == []
    assert metrics.received == 3 and metrics.skipped == 3
    status = metrics.status()
    assert status is not None and status["last_skipped"]["id"] == "c"
    assert status["last_skipped"]["channel"] == "kafka"
    readings = {r.name: r.value for r in metrics.readings()}
    assert readings == {"cdc_mysql_signals_received": 3, "cdc_mysql_signals_skipped": 3}
    assert sum("skipped" in r.getMessage() for r in caplog.records) == 3

    def stopping(*args: Any) -> None:
        raise InterruptedError("stopping")

    actions.blocking = stopping
    with pytest.raises(InterruptedError):  # a stopping task still stops
        send("d", '{"data-collections": ["db.t"], "type": "blocking"}')
