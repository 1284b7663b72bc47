"""The streamer's incremental GTID set equals GtidSet's parse-add-print for every transaction."""

from __future__ import annotations

import random

import pytest

from cdc.mysql.gtids import CompletedGtids, GtidSet


@pytest.mark.parametrize("seed", range(20))
def test_mariadb_sets_match_the_reference(seed: int) -> None:
    rng = random.Random(seed)
    kept = CompletedGtids(mariadb=True)
    current: str | None = rng.choice([None, "", "0-1-5", "0-1-5,1-2-7"])
    seqs = {0: 10, 1: 10, 2: 10}
    for _ in range(300):
        domain = 0 if rng.random() < 0.8 else rng.choice([1, 2])
        server = 1 if rng.random() < 0.9 else 2
        seqs[domain] += rng.choice([1, 1, 1, 2]) if rng.random() > 0.02 else -3  # rarely out of order
        gtid = f"{domain}-{server}-{seqs[domain]}"
        expected = str(GtidSet(current or "", True).add(gtid))
        current = kept.add(current, gtid)
        assert current == expected
        if rng.random() < 0.05:  # the text replaced from elsewhere (a new start): parsed again
            current = "".join(current)
            current = str(GtidSet(current, True))


def test_one_domain_moves_on_without_parsing() -> None:
    kept = CompletedGtids(mariadb=True)
    current = kept.add("0-1-5", "0-1-6")
    assert current == "0-1-6" and kept.simple == "0-1-"
    for n in range(7, 50):
        current = kept.add(current, f"0-1-{n}")
        assert current == f"0-1-{n}"
        assert kept.parsed is None  # the set was never parsed again
    assert kept.add(current, "0-1-3") == "0-1-49"  # an older sequence number does not move it back
    assert kept.add("0-1-49", "0-2-50") == "0-2-50"  # another server takes the domain over
    assert kept.add(kept.text, "1-1-1") == "0-2-50,1-1-1"


def test_mysql_sets_match_the_reference() -> None:
    kept = CompletedGtids(mariadb=False)
    uuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
    current: str | None = f"{uuid}:1-5"
    for n in (6, 7, 9, 8, 10):
        expected = str(GtidSet(current or "", False).add(f"{uuid}:{n}"))
        current = kept.add(current, f"{uuid}:{n}")
        assert current == expected
    assert current == f"{uuid}:1-10"
