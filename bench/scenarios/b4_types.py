"""B4: B3's binlog replay on dataset B, and ours' values compared with Debezium's field by field.

The preparation, the runs and the metrics are B3's (:mod:`bench.scenarios.b3_binlog`), on dataset B of
:mod:`bench.datagen` (50 columns: INT, BIGINT UNSIGNED up to its maximum, DECIMAL(12,2) with negatives,
VARCHAR with non-ASCII letters, DATETIME(6) with microseconds and zero dates, TIMESTAMP(6), JSON, ENUM,
BLOB). Ours and Debezium get the same connector configuration, the type-mapping options spelled out at
Debezium's defaults (:data:`VALUE_OPTIONS`), and both workers write JSON without schemas.

After each Connect contender drained, its table topic is kept until the other side of the pair (ours or
the peer) of the same run has drained too; then both topics are read back together and the ``after``
image of each key is compared field by field: a field differs when its JSON value or its JSON type
(``1`` and ``1.0``, ``0`` and ``false``) differs, or when one side lacks it. ``value_mismatches`` (the
number of differing fields; 0 expected) goes into both samples of the pair, with the fields that differ
most and up to five examples (key, field, both values) in the notes. The pair is compared once, when its
second member finishes; the first member's sample, which the runner already holds, is completed then.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from bench.core import Case, Contender, Metric, Sample, scenario
from bench.scenarios.b3_binlog import RUNNING, B3Binlog
from bench.stack import Stack
from bench.verify import key_id, records

__all__ = ["VALUE_OPTIONS", "B4Types", "Comparison", "compare_after_images"]

# the options that decide how a column's value is written, at Debezium's defaults, for both connectors
VALUE_OPTIONS = {
    "decimal.handling.mode": "precise",
    "time.precision.mode": "adaptive_time_microseconds",
    "bigint.unsigned.handling.mode": "long",
    "binary.handling.mode": "bytes",
}

_ABSENT = object()
_BATCH = 2000


@dataclass
class Comparison:
    """What comparing two topics' ``after`` images key by key found."""

    compared: int = 0  # keys present on both sides (the first record of each key on each side)
    mismatches: int = 0  # fields that differ, over all compared keys
    only_ours: int = 0
    only_peer: int = 0
    by_field: Counter[str] = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)


def _after_images(bootstrap: str, topic: str) -> Iterator[tuple[int, Any]]:
    # read in step with another topic: the time limit covers both readings and the comparison
    for msg in records(bootstrap, topic, timeout=3600.0):
        value = msg.value()
        if value is not None:  # tombstones carry no image
            yield key_id(msg.key()), json.loads(value).get("after")


def _shown(value: Any, limit: int = 80) -> str:
    text = "(absent)" if value is _ABSENT else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _differing(ours: Any, peer: Any) -> list[tuple[str, Any, Any]]:
    """(field, ours, peer) for each field whose value or JSON type differs."""
    if not isinstance(ours, dict) or not isinstance(peer, dict):
        return [] if ours == peer else [("(the whole after image)", ours, peer)]
    out = []
    for name in [*peer, *(k for k in ours if k not in peer)]:
        a, b = ours.get(name, _ABSENT), peer.get(name, _ABSENT)
        if type(a) is not type(b) or a != b:
            out.append((name, a, b))
    return out


def compare_after_images(
    bootstrap: str, ours_topic: str, peer_topic: str, names: tuple[str, str] = ("ours", "peer")
) -> Comparison:
    """Compare the ``after`` image of each key in two topics, reading both from the start in step.

    Both connectors write the binlog's rows in its order, so a key met on one side is met on the other
    soon after: only the keys one side is ahead by are held. A key's later records (duplicates, counted by
    the read-back) are not compared again.
    """
    result = Comparison()
    streams = [_after_images(bootstrap, ours_topic), _after_images(bootstrap, peer_topic)]
    pending: list[dict[int, Any]] = [{}, {}]
    live = [True, True]
    done: set[int] = set()
    while any(live):
        for side in (0, 1):
            if not live[side]:
                continue
            batch = list(itertools.islice(streams[side], _BATCH))
            if not batch:
                live[side] = False
                continue
            other = 1 - side
            for ident, after in batch:
                if ident in done:
                    continue
                match = pending[other].pop(ident, _ABSENT)
                if match is _ABSENT:
                    if live[other]:
                        pending[side].setdefault(ident, after)
                    else:  # the other side ended without it
                        done.add(ident)
                        result.only_ours += side == 0
                        result.only_peer += side == 1
                    continue
                done.add(ident)
                result.compared += 1
                ours, peer = (after, match) if side == 0 else (match, after)
                for name, a, b in _differing(ours, peer):
                    result.mismatches += 1
                    result.by_field[name] += 1
                    if len(result.examples) < 5:
                        result.examples.append(
                            f"id {ident} {name}: {names[0]} {_shown(a)}, {names[1]} {_shown(b)}"
                        )
    result.only_ours += len(pending[0])
    result.only_peer += len(pending[1])
    return result


@scenario
class B4Types(B3Binlog):
    id = "B4"
    title = "replay of a prepared binlog (dataset B, 50 columns of mixed types)"
    measures = (
        "B3 on dataset B (50 columns mixing INT, BIGINT UNSIGNED, DECIMAL(12,2), VARCHAR, DATETIME(6) with "
        "zero dates, TIMESTAMP(6), JSON, ENUM, BLOB): events per second, CPU-seconds per million events, "
        "peak RSS, missing and duplicated keys, and whether ours writes the same values as Debezium: both "
        "topics are read back and the `after` image of every key compared field by field (value and JSON "
        "type); the number of differing fields is reported, 0 expected, with examples."
    )
    dataset = "B"
    metrics = (
        *B3Binlog.metrics,
        RUNNING,
        Metric("value_mismatches", "fields whose after value differs from the pair's", "", "lower", 0, False),
        Metric("values_compared", "keys whose after images were compared", "", "higher", 0, False),
    )

    def connector_overrides(self) -> dict[str, str]:
        return dict(VALUE_OPTIONS)

    def setup(self) -> None:
        super().setup()
        # (case, run) -> contender name -> (role, table topic, sample) of the drained runs not compared yet
        self._kept: dict[tuple[str, int], dict[str, tuple[str, str, Sample]]] = {}

    def _drop(self, keep: tuple[str, int] | None = None) -> None:
        doomed = [topic for key, runs in self._kept.items() if key != keep for _r, topic, _s in runs.values()]
        self._kept = {k: v for k, v in self._kept.items() if k == keep}
        if doomed and self.ctx.options.get("keep") != "1":
            Stack(self.ctx.repo).delete_topics(doomed)

    def before_run(self, case: Case, contender: Contender, run: int) -> None:
        self._drop(keep=(case.key, run))

    def teardown(self, case: Case) -> None:
        self._drop()

    def ran(self, case: Case, run: int, contender: Contender, topic: str, sample: Sample) -> bool:
        drained = self._kept.setdefault((case.key, run), {})
        drained[contender.name] = (contender.role, topic, sample)
        pairs = [
            (own, peer)
            for own, peer in itertools.permutations(drained, 2)
            if drained[own][0] == "ours" and drained[peer][0] == "peer" and contender.name in (own, peer)
        ]
        for own, peer in pairs:
            (_r, own_topic, own_sample), (_p, peer_topic, peer_sample) = drained[own], drained[peer]
            self.ctx.log(f"[bench]     comparing the after images of {own} and {peer}, key by key")
            found = compare_after_images(self.stack.bootstrap, own_topic, peer_topic, (own, peer))
            notes = [
                f"{case.key} run {run + 1}, {own} vs {peer}: {found.compared:,} keys compared, "
                f"{found.mismatches:,} fields differ, {found.only_ours:,} keys only in {own}'s topic, "
                f"{found.only_peer:,} only in {peer}'s"
            ]
            if found.by_field:
                top = ", ".join(f"{name} {count:,}" for name, count in found.by_field.most_common(12))
                notes.append(f"{case.key} run {run + 1}, differing fields ({own} vs {peer}): {top}")
            notes += [f"{case.key} run {run + 1}, example: {text}" for text in found.examples]
            self.ctx.log("\n".join(f"[bench]     {note}" for note in notes))
            for s in (own_sample, peer_sample):
                s.values["value_mismatches"] = float(found.mismatches)
                s.values["values_compared"] = float(found.compared)
                s.notes += notes
        return True
