"""The runtime: herders (standalone, distributed), the worker that runs tasks, stores, REST, CLI."""
