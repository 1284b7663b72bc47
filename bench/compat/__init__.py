"""The differential harness against the real Debezium (``make compat``): see :mod:`bench.compat.run`."""
