"""cdc installed from the project's sources: a copy of the checkout, a wheel, a packed environment.

* :func:`copy_project` — the checkout without its venv, stack, caches and build output, so a build writes
  its ``build/`` and ``*.egg-info`` into the copy and never into the tree under test.
* :func:`cdc_wheel` — ``pip wheel --no-deps --no-build-isolation --no-index`` of such a copy: cdc's own
  wheel, built offline with the project venv's build backend (the ``dev`` extra lists it).
* :func:`env_archive` — what docs/snapshots.md ("Spark cluster") tells a user to ship to Spark executors:
  a new virtualenv (``python -m venv``, the driver's interpreter), cdc's wheel installed into it with its
  dependencies from the package index, pinned to the versions of the driver's environment (a
  constraints file of ``pip freeze``), packed with venv-pack. Not the project venv itself: venv-pack packs
  a PEP 660 editable install without a word (it only checks ``.pth`` lines that name directories), and
  the packed copy would then import cdc from this checkout's path, which no other host has.

A packed venv's ``bin/python`` is a symlink to the interpreter it was made from (venv-pack keeps it; the
executors' hosts need that interpreter at that path, here the same machine's).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["PROBE", "REPO", "cdc_wheel", "copy_project", "env_archive", "site_packages"]

REPO = Path(__file__).resolve().parents[2]
_SKIP = shutil.ignore_patterns(
    ".git", ".venv", ".stack", "__pycache__", "*.egg-info", "build", "dist", ".*_cache", "results"
)

PROBE = "cdc-env-probe"
"""What the archive's interpreter writes to stderr as it starts (``probe=True``): ``cdc-env-probe
prefix=<sys.prefix> executable=<sys.executable>``; a Spark executor's Python workers' stderr goes to the
executor's stderr file."""


def copy_project(dest: Path) -> Path:
    shutil.copytree(REPO, dest, ignore=_SKIP, symlinks=True)
    return dest


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


def _run(cmd: list[str], timeout: float, cwd: Path) -> None:
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=_clean_env(), cwd=cwd)
    assert result.returncode == 0, f"{cmd}: {result.stdout[-3000:]}{result.stderr[-3000:]}"


def site_packages(python: Path) -> str:
    """The ``purelib`` directory of the environment whose interpreter is ``python``."""
    return subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env=_clean_env(),
    ).stdout.strip()


def cdc_wheel(work: Path) -> Path:
    src = copy_project(work / "src")
    wheels = work / "wheels"
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-w",
            str(wheels),
            str(src),
        ],
        240,
        work,
    )
    (wheel,) = wheels.glob("cdc-*.whl")
    return wheel


def env_archive(work: Path, probe: bool = False) -> Path:
    """``work/cdc-env.tar.gz``: a venv with cdc and its dependencies, packed by venv-pack (see above).

    ``probe``: the venv gets a ``.pth`` line that writes :data:`PROBE` with its prefix to stderr at each
    interpreter start, so a test can see which interpreter a remote process ran."""
    import venv_pack

    work.mkdir(parents=True, exist_ok=True)
    wheel = cdc_wheel(work)
    constraints = work / "constraints.txt"
    frozen = subprocess.run(
        [sys.executable, "-m", "pip", "freeze", "--exclude-editable"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env=_clean_env(),
    ).stdout
    constraints.write_text(frozen)
    env = work / "cdc-env"
    _run([sys.executable, "-m", "venv", str(env)], 120, work)
    python = env / "bin" / "python"
    _run([str(python), "-m", "pip", "install", "-q", "-c", str(constraints), str(wheel)], 600, work)
    if probe:
        site = site_packages(python)
        announce = f"'{PROBE} prefix=%s executable=%s\\n' % (sys.prefix, sys.executable)"
        line = f"import sys; sys.stderr.write({announce})"
        Path(site, "cdc_env_probe.pth").write_text(line + "\n")
    archive = work / "cdc-env.tar.gz"
    venv_pack.pack(prefix=str(env), output=str(archive), force=True)
    return archive
