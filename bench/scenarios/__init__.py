"""Scenarios, one module each; :mod:`bench.core` imports every module of this package."""
