"""``gtid.source.includes`` / ``gtid.source.excludes``: which GTID sources a connector follows.

As Debezium's binlog connectors apply them (``MariaDbConnectorConfig.getGtidSourceFilter``,
``GtidSet.retainAll``, ``BinlogStreamingChangeEventSource``):

* a *source* is a MySQL server UUID, or a MariaDB ``domain-server`` pair; each key is a comma-separated list
  of regular expressions matched against the whole source, ignoring case; includes win when both are given
  (validate refuses both, "Cannot specify GTID excludes when includes are provided.");
* when streaming resumes from an offset, the offset's ``gtids`` keep only the sources the filter accepts
  (the rest of the set is dropped from the offsets from then on);
* the row events of a transaction whose GTID comes from a source the filter rejects are not emitted
  (``gtid.source.filter.dml.events=true``, the default; ``false`` emits them, the filter then only trims
  the offsets' GTID set); its GTID is still added to the completed set, and its DDL still applies, as in
  Debezium.
"""

from __future__ import annotations

from collections.abc import Sequence

from cdc.mysql.config import MySqlSettings
from cdc.mysql.gtids import gtid_source_filter

__all__ = ["GtidSourceFilter", "gtid_source"]


def gtid_source(gtid: str) -> str:
    """The source of one GTID or GTID-set element: ``uuid`` of ``uuid:1-5``, ``d-s`` of ``d-s-n``."""
    gtid = gtid.strip()
    if ":" in gtid:
        return gtid.split(":", 1)[0].strip()
    return gtid.rsplit("-", 1)[0]


class GtidSourceFilter:
    """The predicate is :func:`cdc.history.gtid_source_filter`'s (the history's position comparator's too)."""

    def __init__(
        self, includes: Sequence[str] = (), excludes: Sequence[str] = (), filter_dml: bool = True
    ) -> None:
        self._accepts = gtid_source_filter(",".join(includes), ",".join(excludes))
        self._filter_dml = filter_dml

    @classmethod
    def of(cls, settings: MySqlSettings) -> GtidSourceFilter:
        return cls(
            settings.gtid_source_includes,
            settings.gtid_source_excludes,
            settings.gtid_source_filter_dml_events,
        )

    @property
    def active(self) -> bool:
        return self._accepts is not None

    def accepts(self, source: str) -> bool:
        return self._accepts is None or self._accepts(source)

    def skips(self, gtid: str | None) -> bool:
        """Whether the row events of the transaction with this GTID are left out (never when
        ``gtid.source.filter.dml.events`` is false: Debezium's ``getGtidDmlSourceFilter`` is null then)."""
        return self._filter_dml and gtid is not None and not self.accepts(gtid_source(gtid))

    def retain(self, gtids: str | None) -> str | None:
        """``gtids`` with only the accepted sources' elements (``GtidSet.retainAll``)."""
        if not gtids or self._accepts is None:
            return gtids
        kept = [e.strip() for e in gtids.replace("\n", "").split(",") if e.strip()]
        return ",".join(e for e in kept if self.accepts(gtid_source(e))) or None
