"""B2's and B12's verdicts on hand-made topics: the reducer must see missing and stale keys when they are
there, and the back-fill figures must take only the right records."""

from __future__ import annotations

from bench.scenarios.b1_snapshot import audit
from bench.scenarios.b12_incremental import Backfill, backfill

TABLE = [(1, 10, 1_000), (2, 21, 2_500), (3, 30, 3_000)]  # (id, k, updated_at µs); id 4 was deleted


def _after(k: int, at: int) -> dict[str, int]:
    return {"k": k, "updated_at": at}


GOOD = [
    (1, "r", _after(10, 1_000)),
    (2, "r", _after(20, 2_000)),
    (2, "u", _after(21, 2_500)),
    (3, "c", _after(30, 3_000)),
    (4, "r", _after(40, 4_000)),
    (4, "d", None),
]


def test_a_topic_equal_to_the_table_passes() -> None:
    verdict = audit(GOOD, TABLE)
    assert (verdict.records, verdict.missing, verdict.stale, verdict.absent, verdict.extra) == (6, 0, 0, 0, 0)
    assert verdict.duplicates == 0


def test_a_key_never_read_is_missing_not_stale() -> None:
    verdict = audit([e for e in GOOD if e[0] != 1], TABLE)
    assert (verdict.absent, verdict.stale, verdict.extra) == (1, 0, 0)


def test_an_update_lost_leaves_the_key_stale() -> None:
    verdict = audit([e for e in GOOD if e[1] != "u"], TABLE)
    assert (verdict.absent, verdict.stale) == (0, 1)


def test_a_read_after_a_newer_change_leaves_the_key_stale() -> None:
    # the snapshot's old row lands after the streamed update: what the watermarks must prevent
    events = [*GOOD, (2, "r", _after(20, 2_000))]
    verdict = audit(events, TABLE)
    assert (verdict.absent, verdict.stale) == (0, 1)


def test_a_deleted_row_read_after_its_delete_is_extra() -> None:
    verdict = audit([*GOOD, (4, "r", _after(40, 4_000))], TABLE)
    assert (verdict.missing, verdict.extra) == (0, 1)


def test_the_same_version_twice_is_a_duplicate_and_not_an_error() -> None:
    verdict = audit([*GOOD[:3], (2, "u", _after(21, 2_500)), *GOOD[3:]], TABLE)
    assert (verdict.missing, verdict.extra, verdict.duplicates, verdict.overlap) == (0, 0, 1, 1)


def test_backfill_counts_reads_and_times_only_changes_inside_the_window() -> None:
    events = [
        (900, (1, "u", _after(1, 850_000))),  # before the first read: not in the lag sample
        (1_000, (2, "r", _after(2, 1))),
        (1_500, (3, "u", _after(3, 1_490_000))),  # lag 10 ms
        (1_600, (9, "c", _after(9, 1_570_000))),  # lag 30 ms
        (1_700, (4, "d", None)),  # no commit stamp: not timed
        (2_000, (5, "r", _after(5, 1))),
        (2_500, (6, "u", _after(6, 2_000_000))),  # after the last read: not in the sample
    ]
    figures = backfill(events)
    assert (figures.reads, figures.first_read_ms, figures.last_read_ms) == (2, 1_000, 2_000)
    assert figures.lags_ms == [10.0, 30.0]
    assert figures.rows_per_s(signal_ms=0.0) == 1.0
    assert figures.read_span_rows_per_s() == 2.0
    assert backfill([]).rows_per_s(0.0) is None


def test_lag_percentiles_are_nearest_rank_whatever_the_order() -> None:
    figures = Backfill(lags_ms=[float(v) for v in range(100, 0, -1)])
    assert (figures.lag_ms(0.5), figures.lag_ms(0.99), Backfill().lag_ms(0.5)) == (50.0, 99.0, None)
