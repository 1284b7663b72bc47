"""cdc's benchmark harness: us and the peers on the same machine, in the same run, on the same data.

``python -m bench run --scenario B10`` (or ``make bench SCENARIO=B10``); ``python -m bench list``.
See docs/benchmarks.md and ../shared/BENCHMARKS.md.
"""
