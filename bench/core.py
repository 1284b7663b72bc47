"""The harness's vocabulary: scenarios, contenders, samples, and the registry that names them.

A **scenario** (B3, B9, B10, ...) prepares what every contender needs (data, a binlog, a topic) once per
*case* (a variant such as "1 process" / "2 processes" or "updates" / "inserts"), and declares its metrics.
A **contender** is one program measured in one scenario: ours, a peer, or a ceiling. It runs one case once
and returns a :class:`Sample` of named numbers. The runner (``bench.runner``) repeats each contender
``--runs`` times per case, takes medians and spreads, and computes ours/peer ratios.

Adding a scenario or a contender is one module under ``bench/scenarios/`` or ``bench/contenders/`` with a
class decorated by :func:`scenario` or :func:`contender`; ``bench.scenarios`` and ``bench.contenders``
import every module of their package, so nothing else changes.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar

__all__ = [
    "Case",
    "Contender",
    "Context",
    "Metric",
    "Role",
    "Sample",
    "Scenario",
    "Unavailable",
    "contender",
    "contenders_for",
    "scenario",
    "scenarios",
]

Role = Literal["ours", "peer", "ceiling"]


class Unavailable(Exception):
    """A contender cannot run here (a missing plugin, a jar not on our registries): said in the results."""


@dataclass(frozen=True)
class Metric:
    """One column of a scenario's table. ``better`` decides nothing but is printed beside ratios."""

    key: str
    label: str
    unit: str = ""
    better: Literal["higher", "lower"] = "higher"
    digits: int = 1
    ratio: bool = True  # whether ours/peer is computed for it


@dataclass(frozen=True)
class Case:
    """A variant of a scenario, prepared once and run by every contender."""

    key: str
    label: str
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class Sample:
    """What one run of one contender measured, plus notes (commands, warnings) for the report."""

    values: dict[str, float | None] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@dataclass
class Context:
    """What the runner hands every scenario and contender."""

    repo: Path
    cache: Path  # ${CDC_CACHE:-~/.cache/cdc}
    workdir: Path  # scratch space of this invocation (outside the repo)
    python: str  # the interpreter running the harness (the venv's)
    runs: int = 3
    rows: int | None = None  # --rows: size override for the scenario's data
    options: dict[str, str] = field(default_factory=dict)  # --set key=value
    info: dict[str, Any] = field(default_factory=dict)  # what the scenario's prepare() found (positions, ...)
    log: Callable[[str], None] = print


class Scenario:
    """Base class of a scenario; subclasses set the class attributes and may override the hooks."""

    id: ClassVar[str]
    title: ClassVar[str]
    measures: ClassVar[str]  # one paragraph for docs/benchmarks.md
    metrics: ClassVar[tuple[Metric, ...]]
    default_rows: ClassVar[int | None] = None

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def cases(self) -> list[Case]:
        return [Case("default", self.title)]

    def setup(self) -> None:
        """Once per invocation, before any case (fetch peers, check the stack)."""

    def prepare(self, case: Case) -> None:
        """Once per case, before its contenders run (load data, write a binlog)."""

    def before_run(self, case: Case, contender: Contender, run: int) -> None:
        """Before each run of each contender (fresh topics, caches)."""

    def teardown(self, case: Case) -> None:
        """After every contender ran the case."""

    def rows(self) -> int:
        if self.ctx.rows is not None:
            return self.ctx.rows
        if self.default_rows is None:
            raise ValueError(f"{self.id} has no row count")
        return self.default_rows


class Contender:
    """Base class of a contender: one program measured in one scenario."""

    name: ClassVar[str]
    scenario_id: ClassVar[str]
    role: ClassVar[Role]
    order: ClassVar[int] = 50  # where its column sits; runs alternate in this order
    # the contender whose settings this one tunes (``debezium-best`` tunes ``debezium``): the report takes
    # ours' ratios against the better of the two per metric ("the peer at its best")
    tunes: ClassVar[str | None] = None

    def __init__(self, ctx: Context, scenario: Scenario) -> None:
        self.ctx = ctx
        self.scenario = scenario

    def check(self) -> None:
        """Raise :class:`Unavailable` when this contender cannot run here."""

    def setup(self) -> None:
        """Once per invocation (fetch jars)."""

    def run(self, case: Case, run: int) -> Sample:
        raise NotImplementedError

    def versions(self) -> dict[str, str]:
        """Versions this contender adds to the report's header."""
        return {}


_SCENARIOS: dict[str, type[Scenario]] = {}
_CONTENDERS: dict[str, list[type[Contender]]] = {}
_loaded = False

S = TypeVar("S", bound=type[Scenario])
C = TypeVar("C", bound=type[Contender])


def scenario(cls: S) -> S:
    _SCENARIOS[cls.id] = cls
    return cls


def contender(cls: C) -> C:
    _CONTENDERS.setdefault(cls.scenario_id, []).append(cls)
    return cls


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for package in ("bench.scenarios", "bench.contenders"):
        pkg = importlib.import_module(package)
        for module in pkgutil.iter_modules(pkg.__path__):
            importlib.import_module(f"{package}.{module.name}")


def scenarios() -> dict[str, type[Scenario]]:
    _load()

    def order(sid: str) -> tuple[int, str]:
        digits = "".join(ch for ch in sid if ch.isdigit())
        return (int(digits) if digits else 10**6, sid)

    return dict(sorted(_SCENARIOS.items(), key=lambda item: order(item[0])))


def contenders_for(scenario_id: str) -> list[type[Contender]]:
    _load()
    return sorted(_CONTENDERS.get(scenario_id, []), key=lambda cls: (cls.order, cls.name))
