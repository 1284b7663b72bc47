"""Distributed mode's group membership: Connect's ``connect`` group protocol over Kafka.

* :mod:`.protocol` — subscription and assignment bytes (v0 ``default``, v1 ``compatible``, v2 ``sessioned``).
* :mod:`.assignor` — the leader's incremental cooperative (KIP-415) and eager assignors, pure logic.
* :mod:`.coordinator` — a kafka-python ``BaseCoordinator`` that speaks the ``connect`` protocol type.
* :mod:`.membership` — :class:`GroupMembership`, the herder's :class:`~cdc.worker.membership.Membership`.
"""
