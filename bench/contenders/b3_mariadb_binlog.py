"""B3, the ceiling: ``mariadb-binlog --read-from-remote-server -v`` over the workload's range, to /dev/null.

It reads the same events over the same replication protocol as the connectors and decodes every row
(``-v`` prints each row as pseudo-SQL), but writes nothing anywhere: the most any reader can do here.
"""

from __future__ import annotations

import subprocess
import time

from bench.core import Case, Sample, contender
from bench.procstat import TreeMonitor, cpu_seconds
from bench.scenarios.b3_binlog import BinlogContender
from bench.stack import Stack


@contender
class MariadbBinlog(BinlogContender):
    name = "mariadb-binlog"
    role = "ceiling"
    order = 90

    def run(self, case: Case, run: int) -> Sample:
        stack = Stack(self.ctx.repo)
        rng = self.b3.range_for(case)
        files = stack.binlog_files(rng.start_file, rng.end_file)
        argv = [
            "mariadb-binlog",
            "--read-from-remote-server",
            f"--host={stack.mysql_host}",
            f"--port={stack.mysql_port}",
            "--user=cdc",
            "--password=cdc",
            "-v",
            f"--start-position={rng.start_pos}",
            f"--stop-position={rng.end_pos}",
            *files,
        ]
        mysqld = stack.pid("mariadb")
        mysqld0 = cpu_seconds(mysqld) if mysqld else 0.0
        started = time.monotonic()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        monitor = TreeMonitor(proc.pid, interval=0.05).start()
        while proc.poll() is None:
            monitor._sample()
            time.sleep(0.02)
        seconds = time.monotonic() - started
        monitor.stop()
        err = proc.stderr.read() if proc.stderr else ""
        if proc.returncode != 0:
            raise RuntimeError(f"mariadb-binlog exited with {proc.returncode}: {err.strip()[-500:]}")
        million = rng.events / 1e6
        return Sample(
            {
                "events_per_s": rng.events / seconds,
                "events_per_s_wall": rng.events / seconds,
                "drain_s": seconds,
                "cpu_s_per_m": monitor.cpu() / million,
                "mysqld_cpu_s_per_m": (cpu_seconds(mysqld) - mysqld0) / million if mysqld else None,
                "peak_rss_mb": monitor.peak_hwm_kb / 1024,
            },
            notes=[
                f"{self.name}: `{' '.join(a if 'password' not in a else '--password=***' for a in argv)}`"
            ],
        )
