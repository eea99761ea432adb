"""``run`` against services that are not there, as an operator meets it (a subprocess):

- ``run --until-idle`` ends after ``IDLE_WAIT`` with exit 3 and says what is down when
  MariaDB never answers, or when the broker never does (then ``kafka_unreachable`` is true);
- ``run`` waits out a store that is unreachable at start, then does its work (a private
  PostgreSQL of this test's own is stopped and started; the shared one is never touched).
"""

from __future__ import annotations

import json
import re
import subprocess
from typing import Any

import pytest

from flightstate_testing import postgres
from flightstate_testing.ports import free_local_port
from tests.fixtures.util import unique_name
from tests.runner._cli import REPO, clean_env, run_cli, runner_argv, wait_for_line

_QUICK = {
    "FLIGHTSTATE_IDLE_WAIT": "3",
    "FLIGHTSTATE_BACKOFF_MAX": "0.5",
    "FLIGHTSTATE_POLL_INTERVAL": "0.1",
    "FLIGHTSTATE_KAFKA_OUTAGE_LOG_EVERY": "1",
}


def _json_lines(stderr: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]


def _ok(*args: str, env: dict[str, str]) -> str:
    result = run_cli(*args, env=env)
    assert result.returncode == 0, f"{args}: {result.stderr[-3000:]}"
    return result.stdout


@pytest.mark.pg
def test_until_idle_ends_when_mariadb_never_answers(pg_db: str) -> None:
    env = {"FLIGHTSTATE_STORE_DSN": pg_db, **_QUICK,
           "FLIGHTSTATE_MYSQL_DSN": f"mysql://root@127.0.0.1:{free_local_port()}/aodb"}  # fmt: skip
    _ok("migrate", env=env)
    result = run_cli("run", "--until-idle", env=env, timeout=120)
    assert result.returncode == 3, result.stderr[-3000:]
    left = [line for line in result.stderr.splitlines() if line.startswith("stopped with work")]
    assert len(left) == 1, result.stderr[-3000:]
    assert left[0].startswith("stopped with work left: failing for 3 s: read cminmsgs: "
                              "MySQL error 2003: ")  # fmt: skip


@pytest.mark.pg
def test_until_idle_ends_when_the_broker_never_answers(pg_db: str) -> None:
    env = {"FLIGHTSTATE_STORE_DSN": pg_db, "FLIGHTSTATE_INBOX": "store", **_QUICK,
           "FLIGHTSTATE_IDLE_WAIT": "6",  # the dispatcher tells an outage within 2 s
           "FLIGHTSTATE_INBOX_TABLE": unique_name("cmin"),
           "FLIGHTSTATE_KAFKA_BOOTSTRAP": f"127.0.0.1:{free_local_port()}"}  # fmt: skip
    _ok("migrate", env=env)
    _ok("generate", "--messages", "20", "--flights", "4", env=env)
    result = run_cli("run", "--until-idle", env=env, timeout=120)
    assert result.returncode == 3, result.stderr[-3000:]
    (left,) = [line for line in result.stderr.splitlines() if line.startswith("stopped with work")]
    assert re.match(r"stopped with work left: events not yet delivered downstream after 6 s "
                    r"idle: 0 backfill\(s\) pending, \d+ event\(s\) undelivered; Kafka "
                    r"unreachable: .+", left), left
    (stopped,) = [line for line in _json_lines(result.stderr) if line.get("event") == "stop"]
    assert stopped["kafka_unreachable"] is True, stopped
    assert stopped["processed"] >= 20


@pytest.mark.slow
def test_run_waits_out_a_store_unreachable_at_start(
    private_pg: tuple[postgres.EmbeddedPostgres, str],
) -> None:
    server, dsn = private_pg
    env = {"FLIGHTSTATE_STORE_DSN": dsn, "FLIGHTSTATE_INBOX": "store", **_QUICK,
           "FLIGHTSTATE_INBOX_TABLE": "cminmsgs"}  # fmt: skip
    _ok("migrate", env=env)
    _ok("generate", "--messages", "30", "--flights", "5", env=env)
    server.crash()
    proc = subprocess.Popen(runner_argv("run", "--until-idle"), env=clean_env(env), cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)  # fmt: skip
    try:
        wait_for_line(proc, "store not reachable, retrying", timeout=60)
        wait_for_line(proc, "store not reachable, retrying", timeout=30)  # still waiting
        assert proc.poll() is None  # waiting, not exited
        server.restart()
        rest = proc.communicate(timeout=120)[1]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, rest[-3000:]
    report = json.loads(_ok("status", "--json", env=env))
    assert report["inbox"]["lag"] == 0
    assert sum(report["outcomes"].values()) >= 30
