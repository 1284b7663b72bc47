"""B11 (JDBC polling), the Python peer: dlt's ``sql_database`` (``sql_table``) loading into duckdb.

dlt runs in a virtualenv of its own under ``${CDC_CACHE}/peers/dlt-venv`` (made on first use with pip from
PyPI: ``dlt[duckdb]``, SQLAlchemy and the MySQL driver), so its dependencies never touch ours. The driver
is mysqlclient, as ours uses (``--set dlt_driver=pymysql`` for PyMySQL); the backend dlt's default
``sqlalchemy`` (``--set dlt_backend=pyarrow`` needs pyarrow in that virtualenv).
"""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from bench.core import Case, Sample, Unavailable, contender
from bench.procstat import TreeMonitor, cpu_seconds
from bench.scenarios.jdbc_poll import DATABASE, PollContender
from bench.stack import Stack

DLT_VERSION = "1.31.0"
PACKAGES = [f"dlt[duckdb]=={DLT_VERSION}", "sqlalchemy>=2.0,<2.1", "pymysql>=1.1,<2", "mysqlclient>=2.2,<3"]
TOOL = Path(__file__).resolve().parent.parent / "tools" / "dlt_load.py"


@contender
class DltSqlDatabase(PollContender):
    name = "dlt"
    role = "peer"
    order = 20

    @property
    def venv(self) -> Path:
        return self.ctx.cache / "peers" / "dlt-venv"

    @property
    def python(self) -> str:
        return str(self.venv / "bin" / "python")

    def setup(self) -> None:
        ready = self.venv / ".installed"
        if ready.exists():
            return
        (self.ctx.cache / "peers").mkdir(parents=True, exist_ok=True)
        with (self.ctx.cache / "peers" / ".dlt-lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if ready.exists():
                return
            self.ctx.log(f"[bench]   making {self.venv} ({', '.join(PACKAGES)})")
            python = shutil.which("python3.11") or sys.executable
            if not (self.venv / "bin" / "python").exists():
                subprocess.run([python, "-m", "venv", str(self.venv)], check=True)
            done = subprocess.run(
                [self.python, "-m", "pip", "install", "-q", *PACKAGES], capture_output=True, text=True
            )
            if done.returncode != 0:
                raise Unavailable(f"pip could not install dlt: {done.stderr.strip()[-500:]}")
            ready.touch()

    def versions(self) -> dict[str, str]:
        probe = subprocess.run(
            [
                self.python,
                "-c",
                "import dlt, duckdb, sqlalchemy; from importlib.metadata import version; "
                "print(dlt.__version__, duckdb.__version__, sqlalchemy.__version__, version('mysqlclient'))",
            ],
            capture_output=True,
            text=True,
        )
        if probe.returncode != 0:
            return {"dlt": "?"}
        dlt_v, duck, sa, mysqlclient = probe.stdout.split()
        return {"dlt": f"{dlt_v} (duckdb {duck}, sqlalchemy {sa}, mysqlclient {mysqlclient})"}

    def run(self, case: Case, run: int) -> Sample:
        stack = Stack(self.ctx.repo)
        n, table = self.poll.rows(), self.poll.table
        mode = str(case.params["mode"])
        workdir = self.run_dir(f"dlt-{mode}-{run}-{int(time.time())}")
        driver = "pymysql" if self.ctx.options.get("dlt_driver") == "pymysql" else "mysqldb"
        url = f"mysql+{driver}://cdc:cdc@{stack.mysql_host}:{stack.mysql_port}/{DATABASE}"
        backend = self.ctx.options.get("dlt_backend", "sqlalchemy")
        argv = [self.python, str(TOOL), "--url", url, "--table", table, "--mode", mode]
        argv += ["--workdir", str(workdir), "--backend", backend]
        if self.ctx.options.get("cpus"):
            argv = ["taskset", "-c", self.ctx.options["cpus"], *argv]
        mysqld = stack.pid("mariadb")
        mysqld0 = cpu_seconds(mysqld) if mysqld else 0.0
        started = time.monotonic()
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=workdir)
        monitor = TreeMonitor(proc.pid, interval=0.2).start()
        while proc.poll() is None:
            monitor._sample()  # read /proc before the process is reaped, so its last CPU figure is kept
            time.sleep(0.1)
        wall = time.monotonic() - started
        monitor.stop()
        out, err = proc.communicate()
        mysqld_cpu = cpu_seconds(mysqld) - mysqld0 if mysqld else None
        if proc.returncode != 0:
            raise RuntimeError(f"dlt exited with {proc.returncode}: {err.strip()[-800:]}")
        result = json.loads([ln for ln in out.splitlines() if ln.startswith("{")][-1])
        rows = int(result["rows"])
        million = max(rows, 1) / 1e6
        shutil.rmtree(workdir, ignore_errors=True)
        shown = " ".join(argv).replace(str(workdir), "<workdir>").replace("cdc:cdc@", "cdc:***@")
        return Sample(
            {
                "rows_per_s": rows / float(result["run_s"]),
                "rows_per_s_wall": rows / wall,
                "wall_s": wall,
                "cpu_s_per_m": monitor.cpu() / million,
                "mysqld_cpu_s_per_m": mysqld_cpu / million if mysqld_cpu is not None else None,
                "peak_rss_mb": monitor.peak_hwm_kb / 1024,
                "records": float(rows),
                "missing": float(n - int(result["distinct"])),
                "duplicates": float(rows - int(result["distinct"])),
            },
            notes=[f"dlt: `{shown}` (sink: duckdb file, not Kafka); steps {json.dumps(result['steps'])}"],
        )
