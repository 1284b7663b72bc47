"""cdc: change-data-capture connectors and a Kafka-Connect-compatible worker."""

__version__ = "0.1.0"

__all__ = ["__version__"]
