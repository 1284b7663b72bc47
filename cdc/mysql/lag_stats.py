"""``MilliSecondsBehindSource``'s statistics, as Debezium's ``StreamingMeter`` keeps them.

Debezium measures the lag of every change event (``LagBehindSourceMeasurement``): the last value, the
minimum, maximum and average since the task started, and — with ``statistics.metrics.enabled`` (its
default) — quantiles from a DDSketch of relative accuracy 1 % (``LongDDSketchStatistics``); with the key
false the quantiles are null (``NoopStatistics``) and nothing is spent on them.

:class:`LagStatistics` is that: the quantiles come from the same kind of sketch (values in logarithmic
buckets of ratio (1 + 1 %) / (1 - 1 %), a bucket's value its midpoint in relative terms), so a quantile
is within 1 % of the true one whatever the number of events, in memory that grows with the logarithm of
the range of lags, not with the events.
"""

from __future__ import annotations

import math
import threading

__all__ = ["LagStatistics"]

_ACCURACY = 0.01
_GAMMA = (1 + _ACCURACY) / (1 - _ACCURACY)
_LOG_GAMMA = math.log(_GAMMA)


class LagStatistics:
    """Min, max and average of the lags recorded, and (``quantiles``) their P50/P95/P99."""

    def __init__(self, quantiles: bool = True) -> None:
        self.quantiles = quantiles
        self.count = 0
        self.total = 0
        self.min: int | None = None
        self.max: int | None = None
        self._zeros = 0
        self._buckets: dict[int, int] = {}
        # lags repeat (a busy source's events are milliseconds apart): the last lag's bucket is kept so
        # that most events skip the logarithm
        self._last_lag = 0
        self._last_index = 0
        self._lock = threading.Lock()  # the streaming thread records, the metrics endpoint reads

    def record(self, lag_ms: int, count: int = 1) -> None:
        """``count`` change events ``lag_ms`` behind the source."""
        lock = self._lock
        lock.acquire()  # not ``with``: this runs per binlog event, and the context manager costs as much
        try:
            self.count += count
            self.total += lag_ms * count
            low = self.min
            if low is None or lag_ms < low:
                self.min = lag_ms
            high = self.max
            if high is None or lag_ms > high:
                self.max = lag_ms
            if not self.quantiles:
                return
            if lag_ms <= 0:
                self._zeros += count
            else:
                if lag_ms == self._last_lag:
                    index = self._last_index
                else:
                    index = math.ceil(math.log(lag_ms) / _LOG_GAMMA)
                    self._last_lag, self._last_index = lag_ms, index
                buckets = self._buckets
                buckets[index] = buckets.get(index, 0) + count
        finally:
            lock.release()

    @property
    def average(self) -> float | None:
        return self.total / self.count if self.count else None

    def quantile(self, q: float) -> float | None:
        """The value at quantile ``q`` (0..1), within 1 %; None when disabled or before any event."""
        with self._lock:
            if not self.quantiles or not self.count:
                return None
            rank = q * (self.count - 1)
            seen = self._zeros
            if rank < seen:
                return 0.0
            for index in sorted(self._buckets):
                seen += self._buckets[index]
                if rank < seen:
                    return 2 * _GAMMA**index / (_GAMMA + 1)
            return float(self.max or 0)

    def attributes(self) -> dict[str, float | int | None]:
        """Debezium's attribute names (None: null, not exported)."""
        return {
            "MilliSecondsBehindSourceMinValue": self.min,
            "MilliSecondsBehindSourceMaxValue": self.max,
            "MilliSecondsBehindSourceAverageValue": self.average,
            "MilliSecondsBehindSourceP50": self.quantile(0.5),
            "MilliSecondsBehindSourceP95": self.quantile(0.95),
            "MilliSecondsBehindSourceP99": self.quantile(0.99),
        }
