"""B8's contenders: B3's ours and Debezium at its defaults and at its best (:mod:`bench.contenders.b3_cdc`,
:mod:`bench.contenders.b3_debezium`, :mod:`bench.peer_tuning`), registered again under B8, replaying one
UPDATE of every row.
"""

from __future__ import annotations

from bench.contenders.b3_cdc import CdcMySql
from bench.contenders.b3_debezium import Debezium, DebeziumBest
from bench.core import contender


@contender
class CdcMySqlB8(CdcMySql):
    scenario_id = "B8"


@contender
class DebeziumB8(Debezium):
    scenario_id = "B8"


@contender
class DebeziumBestB8(DebeziumBest):
    scenario_id = "B8"
