"""The shape of ``cdc``'s imports: no cycle among its modules, packages or sub-packages, and the layers
keep their place (docs/architecture.md, "Packages and their layers", draws the same order).

Every ``import`` of a module counts, lazy ones (inside functions) and ``TYPE_CHECKING`` ones included, since
a lazy import only hides a cycle. ``from cdc.a import b`` is an edge to ``cdc.a.b`` when that is a module,
else to ``cdc.a``; importing ``cdc.a.b`` does not count as importing the package ``cdc.a`` itself.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "cdc"

CONNECTOR_PACKAGES = ("cdc.mysql", "cdc.jdbc", "cdc.jdbcsink", "cdc.file")
"""Connectors and the support libraries they stand on: none of them may import the runtime."""
WORKER_FREE = ("cdc.api", "cdc.config", "cdc.history", "cdc.snapshot", "cdc.kafka", *CONNECTOR_PACKAGES)

LAYERS: dict[str, tuple[tuple[str, ...], ...]] = {
    # The MySQL source, top floor first: the task composes everything, the signals drive incremental
    # snapshots, which run on Spark or in the streamer; snapshot and streaming share the capture context.
    # Every other module of the package (events, converters, types, rowdecoder, binlog, offsets …) is a
    # floor below capture.
    "cdc.mysql": (
        ("connector",),
        ("task",),
        ("signals",),
        ("incremental",),
        ("spark",),
        ("snapshot", "streaming"),
        ("capture",),
    ),
    # The runtime: the composition root, the herder (its mixins on their shared core), the REST API and the
    # group membership that call it through the Herder interface, the worker, the task loops, the stores.
    "cdc.worker": (
        ("runtime",),
        ("connect_herder",),
        ("herder_offsets", "herder_status", "reconciler"),
        ("herder_core", "distributed"),
        ("rest", "connect_metrics"),
        ("worker", "validation"),
        ("exactly_once", "sink_task"),
        ("source_task",),
        ("task", "status_view"),
        ("herder", "membership", "offsets", "security", "tolerance"),
        ("settings", "stores", "config_providers"),
        ("config", "errors", "file_paths", "metrics", "names", "plugin_path", "properties"),
    ),
}
"""Each package's children (modules and sub-packages) by floor, top first: a child may import only from
its own floor or below. A child not named is on the floor below the last one named."""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _targets(module: str, path: Path, node: ast.Import | ast.ImportFrom) -> Iterable[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        base = ".".join(package[: len(package) - (node.level - 1)])
        base = f"{base}.{node.module}" if node.module else base
    else:
        base = node.module or ""
    return [f"{base}.{alias.name}" for alias in node.names] + [base]


def _resolve(name: str) -> str | None:
    """The module of ``cdc`` an imported name lives in (None outside ``cdc``)."""
    modules = _modules()
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


@cache
def _graph() -> dict[str, frozenset[str]]:
    graph: dict[str, frozenset[str]] = {}
    for module, path in _modules().items():
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            targets = list(_targets(module, path, node))
            if isinstance(node, ast.ImportFrom):  # `from a import b`: b the module if it is one, else a
                base, names = targets[-1], targets[:-1]
                resolved = {n for n in names if n in _modules()}
                if len(resolved) < len(names):
                    resolved.add(base)
                targets = list(resolved)
            for target in targets:
                found = _resolve(target)
                if found is not None and found != module:
                    edges.add(found)
        graph[module] = frozenset(edges)
    return graph


def _package(module: str) -> str:
    return ".".join(module.split(".")[:2])


def _cycles(graph: dict[str, frozenset[str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_walk_sees_lazy_imports() -> None:
    # cdc.cli imports its snapshot command inside a function: the walk must see it
    assert "cdc.cli.snapshot" in _graph()["cdc.cli"]
    assert "cdc.worker.runtime" in _graph()["cdc.cli"]


def test_no_import_cycle_among_modules() -> None:
    assert _cycles(_graph()) == []


def test_no_import_cycle_among_packages() -> None:
    packages: dict[str, set[str]] = {}
    for module, edges in _graph().items():
        if module == "cdc":
            continue
        targets = packages.setdefault(_package(module), set())
        targets.update(_package(e) for e in edges if e != "cdc" and _package(e) != _package(module))
    assert _cycles({k: frozenset(v) for k, v in packages.items()}) == []


def _children(graph: dict[str, frozenset[str]], package: str) -> dict[str, frozenset[str]]:
    """The import graph among ``package``'s direct children (its modules and sub-packages, each sub-package
    standing for all the modules below it)."""
    depth = package.count(".") + 2
    out: dict[str, set[str]] = {}
    for module, edges in graph.items():
        if not module.startswith(package + "."):
            continue
        child = ".".join(module.split(".")[:depth])
        targets = out.setdefault(child, set())
        for edge in edges:
            if edge.startswith(package + "."):
                target = ".".join(edge.split(".")[:depth])
                if target != child:
                    targets.add(target)
    return {k: frozenset(v) for k, v in out.items()}


def _packages(graph: dict[str, frozenset[str]]) -> list[str]:
    """Every package of ``cdc`` that has sub-packages or modules (``cdc`` itself included)."""
    return sorted({m.rpartition(".")[0] for m in graph if "." in m})


def _subpackage_cycles(graph: dict[str, frozenset[str]]) -> list[list[str]]:
    """Cycles among the children of any one package, at every depth."""
    return [cycle for package in _packages(graph) for cycle in _cycles(_children(graph, package))]


def _layer_violations(
    graph: dict[str, frozenset[str]], layers: dict[str, tuple[tuple[str, ...], ...]]
) -> list[str]:
    """``a -> b`` for each child ``a`` of a layered package importing a child ``b`` on a higher floor."""
    found = []
    for package, floors in layers.items():
        floor = {f"{package}.{name}": i for i, names in enumerate(floors) for name in names}
        below_all = len(floors)
        for child, targets in sorted(_children(graph, package).items()):
            for target in sorted(targets):
                if floor.get(target, below_all) < floor.get(child, below_all):
                    found.append(f"{child} -> {target}")
    return found


def test_no_import_cycle_among_sub_packages() -> None:
    """No package's modules and sub-packages import each other round (e.g. mysql.spark and mysql.snapshot,
    or worker.rest and worker.distributed), at any depth."""
    assert _subpackage_cycles(_graph()) == []


def test_the_layered_packages_keep_their_floors() -> None:
    assert _layer_violations(_graph(), LAYERS) == []


def test_the_layers_name_only_existing_children() -> None:
    graph = _graph()
    for package, floors in LAYERS.items():
        children = {c.rpartition(".")[2] for c in _children(graph, package)}
        assert {n for names in floors for n in names} - children == set(), package


def test_a_sub_package_cycle_and_an_upward_import_are_found() -> None:
    """The checks themselves, on a synthetic tree: ``cdc.p.a`` (a sub-package) and ``cdc.p.b`` import each
    other through modules below them, which no module-level cycle shows; and a floor is skipped upwards."""
    graph = {
        "cdc.p.a.x": frozenset({"cdc.p.b"}),
        "cdc.p.b": frozenset({"cdc.p.a.y"}),
        "cdc.p.a.y": frozenset(),
        "cdc.q.top": frozenset({"cdc.q.low"}),
        "cdc.q.low": frozenset({"cdc.q.top"}),
        "cdc.r.low": frozenset({"cdc.r.top"}),
        "cdc.r.top": frozenset(),
    }
    assert _cycles(graph) == [["cdc.q.low", "cdc.q.top"]]  # the module walk sees only q's cycle
    assert _subpackage_cycles(graph) == [["cdc.p.a", "cdc.p.b"], ["cdc.q.low", "cdc.q.top"]]
    assert _layer_violations(graph, {"cdc.r": (("top",), ("low",))}) == ["cdc.r.low -> cdc.r.top"]
    assert _layer_violations(graph, {"cdc.r": (("top",),)}) == ["cdc.r.low -> cdc.r.top"]  # unnamed: below


@pytest.mark.parametrize("package", WORKER_FREE)
def test_the_api_the_config_and_the_connectors_do_not_import_the_worker(package: str) -> None:
    offenders = sorted(
        f"{module} -> {target}"
        for module, edges in _graph().items()
        if module == package or module.startswith(package + ".")
        for target in edges
        if target.startswith(("cdc.worker", "cdc.cli"))
    )
    assert offenders == []
