"""Signals, as Debezium defines them: channels (signal table, file, Kafka topic), actions, processor."""

from cdc.mysql.signals.actions import SignalActions
from cdc.mysql.signals.channels import ChannelPoller, FileChannel, KafkaChannel, SignalChannel
from cdc.mysql.signals.processor import SignalProcessor
from cdc.mysql.signals.record import SignalError, SignalRecord, parse_signal_json

__all__ = [
    "ChannelPoller",
    "FileChannel",
    "KafkaChannel",
    "SignalActions",
    "SignalChannel",
    "SignalError",
    "SignalProcessor",
    "SignalRecord",
    "parse_signal_json",
]
