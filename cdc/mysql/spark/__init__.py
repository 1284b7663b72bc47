"""The MySQL connector's parallel snapshot on Spark (``cdc snapshot``, ``snapshot.engine=spark``).

What is MySQL's lives here: the job (:mod:`.engine`), the task's use of it (:mod:`.connector`), the chunk
readers (:mod:`.executor` in Python, :mod:`.jvm` through Spark's JDBC reader) and the reconciliation
of changes made while it ran (:mod:`.reconcile`). What any source could use (chunk planning, progress,
the runners, the Kafka writer) is :mod:`cdc.snapshot`.
"""
