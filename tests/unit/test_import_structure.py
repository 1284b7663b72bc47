"""The shape of ``cdc``'s imports: no cycle among its modules or packages, and the layers keep their place.

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
