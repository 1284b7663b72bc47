"""``gtid.source.includes``/``excludes`` as Debezium's ``GtidSet.retainAll`` and DML filter apply them."""

from __future__ import annotations

from cdc.mysql.gtid_filter import GtidSourceFilter, gtid_source

UUID_A = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
UUID_B = "5d5c4a2e-1111-11e1-9e33-c80aa9429562"


def test_sources() -> None:
    assert gtid_source("0-1-500") == "0-1"
    assert gtid_source("17-23-5") == "17-23"
    assert gtid_source(f"{UUID_A}:1-5:7") == UUID_A


def test_includes_keep_only_matching_sources_of_an_offset() -> None:
    f = GtidSourceFilter(includes=["0-1"])
    assert f.retain("0-1-500,7-1-3,0-2-9") == "0-1-500"
    assert f.retain(None) is None
    assert f.skips("7-1-4") and not f.skips("0-1-501") and not f.skips(None)


def test_excludes_are_whole_case_insensitive_regexes() -> None:
    f = GtidSourceFilter(excludes=[UUID_B.upper()])
    assert f.retain(f"{UUID_A}:1-10,{UUID_B}:1-3") == f"{UUID_A}:1-10"
    assert f.skips(f"{UUID_B}:4") and not f.skips(f"{UUID_A}:11")
    partial = GtidSourceFilter(excludes=["0"])  # matches the whole source only, not 0-1
    assert not partial.skips("0-1-5")


def test_no_filter_changes_nothing() -> None:
    f = GtidSourceFilter()
    assert not f.active
    assert f.retain("0-1-5,7-1-3") == "0-1-5,7-1-3"
    assert not f.skips("7-1-4")
