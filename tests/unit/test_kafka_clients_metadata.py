"""Java's ``metadata.max.age.ms`` (refresh the metadata at least this often) is librdkafka's
``topic.metadata.refresh.interval.ms``, not librdkafka's ``metadata.max.age.ms`` (its cache's expiry)."""

from __future__ import annotations

from cdc.kafka.clients import to_librdkafka


def test_javas_metadata_max_age_is_librdkafkas_refresh_interval() -> None:
    out = to_librdkafka({"metadata.max.age.ms": "30000"})
    assert out == {"topic.metadata.refresh.interval.ms": "30000"}


def test_librdkafkas_own_key_wins() -> None:
    for settings in (
        {"metadata.max.age.ms": "30000", "topic.metadata.refresh.interval.ms": "10000"},
        {"topic.metadata.refresh.interval.ms": "10000", "metadata.max.age.ms": "30000"},
    ):
        assert to_librdkafka(settings) == {"topic.metadata.refresh.interval.ms": "10000"}


def test_the_mapped_settings_are_valid_for_librdkafka() -> None:
    from confluent_kafka import Producer

    Producer({"bootstrap.servers": "127.0.0.1:1", **to_librdkafka({"metadata.max.age.ms": "30000"})})
