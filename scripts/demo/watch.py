"""Print the demo topic's change records as they arrive (Ctrl-C to stop)."""

from __future__ import annotations

import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])

from run import TOPIC, Reader

if __name__ == "__main__":
    print(f"watching {TOPIC}; make changes in the ops database", flush=True)
    reader = Reader()
    try:
        while True:
            reader.until(1_000_000, timeout=3600)
    except KeyboardInterrupt:
        pass
