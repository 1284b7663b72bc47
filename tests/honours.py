"""Which connector keys a test shows acting: the ``@pytest.mark.honours("key", …)`` marks, read from the
test files' source (no test is imported or run).

docs/mysql.md's key table says *honoured* only for a key some test marks (``tests/unit/test_mysql_keys.py``
checks that the table is the one these marks give, and that every declared key has a mark or a refusal
reason); ``python -m tests.honours`` rewrites the table and prints the share of Debezium's keys honoured.
A mark may sit on a test function, a test class, or a module's ``pytestmark``.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

__all__ = ["TESTS", "debezium_keys", "honoured_keys", "honoured_share"]

TESTS = Path(__file__).resolve().parent


def _marks(node: ast.expr) -> list[list[str]]:
    """The key lists of the ``pytest.mark.honours(...)`` calls in a decorator or ``pytestmark`` value."""
    calls = node.elts if isinstance(node, ast.List | ast.Tuple) else [node]
    out: list[list[str]] = []
    for call in calls:
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "honours"
            and isinstance(call.func.value, ast.Attribute)
            and call.func.value.attr == "mark"
        ):
            out.append(
                [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            )
    return out


def honoured_keys(root: Path = TESTS) -> dict[str, list[str]]:
    """Each marked key → the tests (``path::name``) that mark it."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(root.rglob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        rel = path.relative_to(root.parent).as_posix()
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not node.name.startswith(
                    "test"
                ):
                    continue
                for dec in node.decorator_list:
                    for keys in _marks(dec):
                        for key in keys:
                            found[key].append(f"{rel}::{node.name}")
            elif isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets
            ):
                for keys in _marks(node.value):
                    for key in keys:
                        found[key].append(f"{rel}::*")
    return dict(found)


def debezium_keys() -> list[str]:
    """Debezium's MySQL/MariaDB keys: MySqlConnector 3.6.1's and MariaDbConnector 3.5.0's ``config()``
    (``python -m bench.debezium_columns --keys``) and the documented keys ``config()`` leaves out; a
    parameterised name (``column.mask.with.(d+).chars``) as a concrete one."""
    from tests.unit.test_mysql_keys import DOC_KEYS

    names: set[str] = set(DOC_KEYS)
    for fixture in ("debezium-mysql-keys.tsv", "debezium-mariadb-keys.tsv"):
        text = (TESTS / "fixtures" / "mysql" / fixture).read_text(encoding="utf-8")
        names |= {ln.split("\t")[0] for ln in text.splitlines() if ln and not ln.startswith("#")}
    return sorted(
        {n.replace("([^.]+)", "SHA-256").replace("(.+)", "salt").replace("(d+)", "5") for n in names}
    )


def honoured_share(tested: set[str]) -> tuple[int, int, list[str]]:
    """(Debezium keys honoured with a test, Debezium keys, the others with their status)."""
    from cdc.mysql.validation import key_status

    keys = debezium_keys()
    statuses = {k: key_status(k, tested) for k in keys}
    honoured = [k for k, s in statuses.items() if s.startswith("honoured")]
    return (
        len(honoured),
        len(keys),
        [f"{k} ({s})" for k, s in statuses.items() if not s.startswith("honoured")],
    )


def main() -> None:
    from cdc.mysql.validation import key_table

    keys = honoured_keys()
    docs = TESTS.parent / "docs" / "mysql.md"
    text = docs.read_text(encoding="utf-8")
    head = text[: text.index("| key | status | notes |\n|---|---|---|\n| `database.hostname`")]
    docs.write_text(head + key_table(set(keys)), encoding="utf-8")
    honoured, total, missing = honoured_share(set(keys))
    print(f"{honoured} of {total} Debezium keys honoured with a test ({100 * honoured / total:.1f} %)")
    for key in missing:
        print("  not honoured:", key)


if __name__ == "__main__":
    main()
