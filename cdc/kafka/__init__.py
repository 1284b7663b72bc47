"""Kafka clients as Connect configures them, for the worker and for connectors alike.

Java client settings → librdkafka's (:mod:`.clients`), Java's murmur2 placement (:mod:`.murmur2`). The
worker, the schema history's Kafka store and the Spark snapshot writer all build their clients here, so
none of them imports another's internals.
"""
