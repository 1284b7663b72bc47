"""Debezium's OpenLineage integration (``openlineage.integration.*``), emitted with ``openlineage-python``.

``config``: the keys as typed settings, and the ``openlineage.yml`` the connector names (Debezium's, i.e. the
Java client's spelling) turned into a transport of the Python client. ``emitter``: the run events Debezium
3.6 emits (START when a task starts, RUNNING with an input dataset for each captured table whose schema is
built, FAIL with the error, COMPLETE when it stops) and the registry the ``io.debezium.transforms.openlineage
.OpenLineage`` transform (:mod:`cdc.transforms.openlineage`) finds a task's emitter in, for the output
datasets (the topics). docs/mysql.md, "OpenLineage", says what differs from Debezium.
"""

from __future__ import annotations
