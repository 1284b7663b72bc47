"""``python -m bench``: run a scenario, list scenarios and contenders, generate data.

python -m bench run [--scenario B10] [--runs 3] [--rows N] [--only NAME ...] [--set KEY=VALUE ...]
python -m bench list
python -m bench data --dataset A --rows 1000000 [--table bench.a_1m] [--seed 42]
python -m bench publish bench/results/B3-<stamp>.json [--block B3-1M]
python -m bench aims [--print]
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from bench.core import Context, contenders_for, scenarios
from bench.runner import default_cache, run_scenario

__all__ = ["main"]

REPO = Path(__file__).resolve().parent.parent
DEFAULT_SCENARIOS = ("B10", "B9", "B3")


def _options(pairs: Sequence[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise SystemExit(f"--set wants KEY=VALUE, not {pair!r}")
        out[key.strip()] = value.strip()
    return out


def _context(args: argparse.Namespace, workdir: Path) -> Context:
    def log(message: str) -> None:
        print(message, flush=True)

    return Context(
        repo=REPO,
        cache=default_cache(),
        workdir=workdir,
        python=sys.executable,
        runs=args.runs,
        rows=args.rows,
        options=_options(args.set),
        log=log,
    )


def _run(args: argparse.Namespace) -> int:
    ids = [s.strip().upper() for s in args.scenario.split(",")] if args.scenario else list(DEFAULT_SCENARIOS)
    with tempfile.TemporaryDirectory(prefix="cdc-bench-") as tmp:
        workdir = Path(args.workdir) if args.workdir else Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        for scenario_id in ids:
            run_scenario(
                _context(args, workdir), scenario_id, only=args.only or None, update_docs=not args.no_docs
            )
    return 0


def _list(_args: argparse.Namespace) -> int:
    for sid, cls in scenarios().items():
        print(f"{sid}: {cls.title}")
        for c in contenders_for(sid):
            print(f"    {c.name} ({c.role})")
    return 0


def _data(args: argparse.Namespace) -> int:
    from bench import datagen
    from bench.stack import Stack

    stack = Stack(REPO)
    stack.up()
    with tempfile.TemporaryDirectory(prefix="cdc-bench-data-") as tmp:
        table = args.table or f"bench.{args.dataset.lower()}_{args.rows}"
        seconds = datagen.load(stack, args.dataset, table, args.rows, args.seed, Path(tmp))
    print(f"loaded {args.rows} rows of dataset {args.dataset} into {table} in {seconds:.1f} s")
    return 0


def _publish(args: argparse.Namespace) -> int:
    import json

    from bench import report

    for path in args.results:
        result = json.loads(Path(path).read_text())
        cls = scenarios()[result["scenario"]]
        for case in result["cases"]:  # the ratios as today's report computes them (the peers at their best)
            report.summarize(cls.metrics, case["contenders"])
        md = report.markdown(result, cls.metrics)
        block = args.block or result["scenario"]
        if not report.publish(REPO, block, result, md):
            print(f"docs/benchmarks.md has no results block {block}")
            return 1
        print(f"published {path} into docs/benchmarks.md")
    return 0


def _aims(args: argparse.Namespace) -> int:
    from bench import aims, report

    verdicts = aims.evaluate(aims.load_published(REPO / report.PUBLISHED))
    md = aims.markdown(verdicts)
    if args.print:
        print(md, end="")
        return 0
    if not report.update_docs(REPO / "docs" / "benchmarks.md", "aims", md):
        print("docs/benchmarks.md has no results block aims")
        return 1
    print(f"wrote the aims table ({len(verdicts)} rows) into docs/benchmarks.md")
    return 0


def _interrupted(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    run = sub.add_parser("run", help="run scenarios and report")
    run.add_argument("--scenario", help=f"comma list (default: {','.join(DEFAULT_SCENARIOS)})")
    run.add_argument("--runs", type=int, default=3, help="runs per contender and case (default 3)")
    run.add_argument("--rows", type=int, help="row/record count, instead of the scenario's default")
    run.add_argument("--only", action="append", metavar="CONTENDER", help="run only these contenders")
    run.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a scenario option (see docs/benchmarks.md)",
    )
    run.add_argument("--workdir", help="keep logs and configs here instead of a temporary directory")
    run.add_argument("--no-docs", action="store_true", help="do not update docs/benchmarks.md")
    run.set_defaults(func=_run)
    ls = sub.add_parser("list", help="list scenarios and their contenders")
    ls.set_defaults(func=_list)
    data = sub.add_parser("data", help="generate and load a dataset")
    data.add_argument("--dataset", choices=["A", "B"], default="A")
    data.add_argument("--rows", type=int, default=1_000_000)
    data.add_argument("--table", help="db.table (default bench.<dataset>_<rows>)")
    data.add_argument("--seed", type=int, default=42)
    data.set_defaults(func=_data)
    pub = sub.add_parser("publish", help="write result JSON files into docs/benchmarks.md")
    pub.add_argument("results", nargs="+")
    pub.add_argument("--block", help="the docs block to write (default: the scenario id, e.g. B3)")
    pub.set_defaults(func=_publish)
    aim = sub.add_parser("aims", help="regenerate the aims table from bench/published/*.json")
    aim.add_argument("--print", action="store_true", help="print it instead of writing the page")
    aim.set_defaults(func=_aims)
    args = parser.parse_args(argv)
    # a TERM (or an INT that a background shell would ignore) unwinds like Ctrl-C, so the workers and
    # producers the harness started are stopped on the way out
    signal.signal(signal.SIGTERM, _interrupted)
    signal.signal(signal.SIGINT, _interrupted)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    return int(args.func(args))
