"""The lag statistics' quantiles are within Debezium's 1 % of the exact ones; disabled, there are none."""

from __future__ import annotations

import random

from cdc.mysql.lag_stats import LagStatistics


def test_quantiles_within_one_percent() -> None:
    rng = random.Random(5)
    values = [int(rng.lognormvariate(6, 2)) for _ in range(20000)] + [0] * 300
    stats = LagStatistics()
    for v in values:
        stats.record(v)
    ordered = sorted(values)
    for q in (0.5, 0.95, 0.99):
        exact = ordered[int(q * (len(ordered) - 1))]
        got = stats.quantile(q)
        assert got is not None and abs(got - exact) <= 0.0101 * exact + 1, (q, got, exact)
    assert stats.min == 0 and stats.max == max(values)
    assert stats.average == sum(values) / len(values)


def test_counted_events_and_disabled_quantiles() -> None:
    stats = LagStatistics()
    stats.record(100, count=99)
    stats.record(10000)
    assert stats.quantile(0.5) is not None and abs(stats.quantile(0.5) - 100) <= 1  # type: ignore[operator]
    off = LagStatistics(quantiles=False)
    off.record(100, count=3)
    assert off.attributes()["MilliSecondsBehindSourceP50"] is None
    assert off.attributes()["MilliSecondsBehindSourceAverageValue"] == 100
    assert LagStatistics().attributes()["MilliSecondsBehindSourceMinValue"] is None


def test_repeated_lags_land_in_the_same_buckets() -> None:
    # runs of equal lags (the usual case under load) reuse the last bucket: the statistics must be the same
    # as for the same lags in an order without runs
    rng = random.Random(7)
    lags = [int(rng.lognormvariate(3, 1)) for _ in range(500)]
    values = [v for v in lags for _ in range(rng.randint(1, 9))]
    in_runs, shuffled = LagStatistics(), LagStatistics()
    for v in values:
        in_runs.record(v)
    rng.shuffle(values)
    for v in values:
        shuffled.record(v)
    for q in (0.1, 0.5, 0.9, 0.95, 0.99):
        assert in_runs.quantile(q) == shuffled.quantile(q)
    assert (in_runs.min, in_runs.max, in_runs.average) == (shuffled.min, shuffled.max, shuffled.average)
