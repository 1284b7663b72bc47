"""Kafka clients as Connect configures them, for the worker and for connectors alike.

* :mod:`.clients`: Java client settings → librdkafka's, a client role's settings from a worker file,
  connector client overrides and their policy;
* :mod:`.jaas`: ``sasl.jaas.config`` parsed as Kafka does;
* :mod:`.failures`: which client errors fail a task, and the worker's first request;
* :mod:`.murmur2`: Java's partitioner hash, to predict where a keyed record goes;
* :mod:`.recipe`: a source connector's converters and producer, one recipe for the worker's task loop and
  the Spark snapshot writer.

The worker, the schema history's Kafka store and the snapshot writer all build their clients here, so
none of them imports another's internals.
"""
