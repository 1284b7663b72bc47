"""B4's contenders: B3's (ours, Debezium at its defaults and at its best, the ``mariadb-binlog`` ceiling),
registered again under B4.

They run as in B3 (:mod:`bench.contenders.b3_cdc`, :mod:`bench.contenders.b3_debezium`,
:mod:`bench.contenders.b3_mariadb_binlog`); the B4 scenario adds the type-mapping options to both
connectors' configuration and compares their topics field by field.
"""

from __future__ import annotations

from bench.contenders.b3_cdc import CdcMySql
from bench.contenders.b3_debezium import Debezium, DebeziumBest
from bench.contenders.b3_mariadb_binlog import MariadbBinlog
from bench.core import contender


@contender
class CdcMySqlB4(CdcMySql):
    scenario_id = "B4"


@contender
class DebeziumB4(Debezium):
    scenario_id = "B4"


@contender
class DebeziumBestB4(DebeziumBest):
    scenario_id = "B4"


@contender
class MariadbBinlogB4(MariadbBinlog):
    scenario_id = "B4"
