"""A three-node KRaft cluster of one test's own, for the replicated-broker fault tests.

Each node is a :class:`faultkit.PrivateKafka` (broker and controller in one process, free ports, its data
under the test's directory) with replication factor 3 and ``min.insync.replicas`` 2, as
``CDC_KAFKA_BROKERS=3 make up`` configures the stack's. The shared broker on 9092 is never touched.

:meth:`KafkaCluster.create_topic` places a topic's partition leaders on a chosen node (the first replica
of an explicit assignment is the preferred leader), so a test knows which node to stop to take away the
leader of the data and the offsets partitions at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from faultkit import PrivateKafka, free_port, kraft_cluster_id, wait_for

__all__ = ["KafkaCluster"]


class KafkaCluster:
    def __init__(self, root: Path, nodes: int = 3, host: str = "127.0.0.1") -> None:
        ports = [(free_port(), free_port()) for _ in range(nodes)]
        voters = ",".join(f"{i + 1}@{host}:{c}" for i, (_, c) in enumerate(ports))
        cluster_id = kraft_cluster_id()
        self.nodes = [
            PrivateKafka(
                root / f"node{i + 1}",
                host=host,
                node_id=i + 1,
                ports=ports[i],
                voters=voters,
                replication=min(3, nodes),
                cluster_id=cluster_id,
            )
            for i in range(nodes)
        ]
        self.bootstrap = ",".join(n.bootstrap for n in self.nodes)

    def start(self, timeout: float = 180.0) -> KafkaCluster:
        for node in self.nodes:  # a quorum needs its voters up: start all, then wait for each
            node.start(wait=False)
        for node in self.nodes:
            wait_for(node._answers, timeout, f"node {node.node_id} on {node.bootstrap}")
        wait_for(lambda: len(self.live_brokers()) == len(self.nodes), timeout, "every broker registered")
        return self

    def kill(self) -> None:
        """SIGKILL every node: the end of a test, whose data is thrown away (a clean stop of the last
        nodes waits a minute for a controlled shutdown the cluster cannot grant)."""
        for node in self.nodes:
            if node.proc is not None and node.proc.poll() is None:
                node.proc.kill()
                node.proc.wait(30)

    def node(self, node_id: int) -> PrivateKafka:
        return self.nodes[node_id - 1]

    def _admin(self) -> Any:
        from confluent_kafka.admin import AdminClient

        return AdminClient({"bootstrap.servers": self.bootstrap})

    def live_brokers(self) -> set[int]:
        try:
            return set(self._admin().list_topics(timeout=5).brokers)
        except Exception:
            return set()

    def create_topic(self, topic: str, partitions: int, leader: int, **config: str) -> None:
        """Create ``topic`` replicated on every node with ``leader`` first (the preferred leader) in each
        partition."""
        from confluent_kafka.admin import NewTopic

        others = [n.node_id for n in self.nodes if n.node_id != leader]
        assignment = [[leader, *others] for _ in range(partitions)]
        admin = self._admin()  # kept alive until the futures resolve
        futures = admin.create_topics(
            [NewTopic(topic, partitions, replica_assignment=assignment, config=config)], request_timeout=30
        )
        for future in futures.values():
            future.result(60)
        wait_for(lambda: self.leaders(topic) == {leader}, 60, f"{topic}'s leaders on node {leader}")

    def leaders(self, topic: str) -> set[int]:
        """The nodes leading ``topic``'s partitions now."""
        try:
            metadata = self._admin().list_topics(topic, timeout=5).topics.get(topic)
        except Exception:
            return set()
        if metadata is None or metadata.error is not None:
            return set()
        return {p.leader for p in metadata.partitions.values()}

    def isr(self, topic: str) -> dict[int, list[int]]:
        """Partition → its in-sync replicas."""
        metadata = self._admin().list_topics(topic, timeout=5).topics[topic]
        return {p.id: list(p.isrs) for p in metadata.partitions.values()}

    def topic_config(self, topic: str) -> dict[str, str]:
        from cdc.kafka.failures import describe_topic_configs

        entries = describe_topic_configs(self._admin(), topic, 30)
        return {k: str(v.value) for k, v in entries.items()}
