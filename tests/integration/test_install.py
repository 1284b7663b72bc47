"""Issue #2: ``pip install .`` in a new virtual environment gives a working ``cdc --help``.

Without network: the new venv (from the project venv's interpreter, ``--without-pip``) sees the project
venv's site-packages through a ``.pth`` file, so pip, the build backend and cdc's dependencies resolve
there (``--system-site-packages`` would add the base interpreter's site-packages, not the project
venv's). ``pip install --no-deps --no-build-isolation --no-index`` builds a copy of the repo's sources
into the new venv; pip leaves the project venv's editable cdc alone (outside the new environment).
``cdc --help`` then runs from the new venv's console script, importing the installed copy.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tomllib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest
from envpack import REPO, copy_project, site_packages


def _build_requirements_present() -> None:
    """``--no-build-isolation`` uses the build backend as installed: [build-system] requires must be
    met in the project venv (the ``dev`` extra lists them; ``make install`` installs them)."""
    from packaging.requirements import Requirement

    requires = tomllib.loads((REPO / "pyproject.toml").read_text())["build-system"]["requires"]
    for text in requires:
        requirement = Requirement(text)
        try:
            found = version(requirement.name)
        except PackageNotFoundError:
            pytest.fail(f"{requirement.name} is not in the project venv: run `make install`")
        assert requirement.specifier.contains(found, prereleases=True), (
            f"{requirement.name} {found} does not satisfy {text}: run `make install`"
        )


def test_pip_install_in_a_new_venv_gives_cdc_help(tmp_path: Path) -> None:
    _build_requirements_present()
    src = copy_project(tmp_path / "src")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60)
    python = venv / "bin" / "python"
    site = site_packages(python)
    Path(site, "project-venv.pth").write_text(sysconfig.get_path("purelib") + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    install = subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            str(src),
        ],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
        cwd=tmp_path,
    )
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]

    where = subprocess.run(
        [str(python), "-c", "import cdc; print(cdc.__file__)"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=tmp_path,
    )
    assert where.stdout.strip().startswith(site), where.stdout + where.stderr  # the installed copy

    cdc = venv / "bin" / "cdc"
    assert cdc.exists()
    result = subprocess.run(
        [str(cdc), "--help"], capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.startswith("usage: cdc")
    for command in ("standalone", "distributed", "snapshot", "version"):
        assert f"    {command} " in result.stdout, result.stdout
    assert subprocess.run([str(cdc), "version"], capture_output=True, timeout=60, env=env).returncode == 0
