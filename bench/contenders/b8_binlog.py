"""B8's contenders: B3's ours and Debezium (:mod:`bench.contenders.b3_cdc`,
:mod:`bench.contenders.b3_debezium`), registered again under B8, replaying one UPDATE of every row.
"""

from __future__ import annotations

from bench.contenders.b3_cdc import CdcMySql
from bench.contenders.b3_debezium import Debezium
from bench.core import contender


@contender
class CdcMySqlB8(CdcMySql):
    scenario_id = "B8"


@contender
class DebeziumB8(Debezium):
    scenario_id = "B8"
