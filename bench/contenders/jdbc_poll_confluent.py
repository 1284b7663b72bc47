"""B11 (JDBC polling), the JVM peer: Confluent's JDBC source in Apache Kafka Connect, if its jar can be had.

``io.confluent:kafka-connect-jdbc`` is published only on Confluent's own Maven repository, which our
registries do not reach; ``check()`` asks Maven Central for it (``mvn dependency:get``) and the results
say "not run" with Maven's answer when it is missing there.
"""

from __future__ import annotations

import shutil
import subprocess

from bench.core import Case, Sample, Unavailable, contender
from bench.scenarios.jdbc_poll import PollContender

ARTIFACT = "io.confluent:kafka-connect-jdbc:10.7.6"


@contender
class ConfluentJdbcSource(PollContender):
    name = "confluent-jdbc"
    role = "peer"
    order = 30

    def check(self) -> None:
        if shutil.which("mvn") is None:
            raise Unavailable("Maven (mvn) is not installed")
        done = subprocess.run(
            ["mvn", "-B", "-q", "-U", "dependency:get", f"-Dartifact={ARTIFACT}", "-Dtransitive=false"],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode != 0:
            said = done.stdout + done.stderr
            missing = any(m in said for m in ("Missing", "was not found in", "Could not find artifact"))
            raise Unavailable(
                f"{ARTIFACT} is not on Maven Central (`mvn dependency:get` "
                f"{'answers: not found' if missing else f'failed with {done.returncode}'}); it is published "
                "only on Confluent's own repository, which our machines cannot reach"
            )
        raise Unavailable(f"{ARTIFACT} resolved, but running it in Kafka Connect is not wired up yet")

    def run(self, case: Case, run: int) -> Sample:
        raise Unavailable("not available")
