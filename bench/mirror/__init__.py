"""MirrorMaker 2 on two clusters: Kafka's own (``java_mm2``), ours (``cdc mirror-maker``), and what each
writes to the internal topics (``capture``), read back as raw bytes for the interchange tests and B15."""
