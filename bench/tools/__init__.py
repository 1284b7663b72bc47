"""Small programs the harness runs as processes of their own (load generators, readers)."""
