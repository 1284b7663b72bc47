"""Short names for the config types and importances, for the modules that declare many keys.

A connector's ``ConfigDef`` is a long table of ``define`` calls; spelling ``ConfigType.STRING`` and
``Importance.HIGH`` in each row would push most of them past one line. One set here, so every config module
reads the same letters the same way (``from cdc.config.shorthands import S, INT, H, …``).
"""

from __future__ import annotations

from cdc.config.definition import ConfigType, Importance

__all__ = ["CLS", "INT", "LO", "LST", "SH", "B", "H", "L", "M", "P", "S"]

S = ConfigType.STRING
INT = ConfigType.INT
SH = ConfigType.SHORT
L = ConfigType.LONG
B = ConfigType.BOOLEAN
LST = ConfigType.LIST
P = ConfigType.PASSWORD
CLS = ConfigType.CLASS

H = Importance.HIGH
M = Importance.MEDIUM
LO = Importance.LOW
