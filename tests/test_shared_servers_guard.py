"""The shared-server guard (tests/fixtures/shared_servers.py) fails a run that stops a server.

Proven on a private MariaDB standing in for the shared one: an inner pytest run, pointed at it
by FLIGHTSTATE_TEST_MYSQL_DSN, stops it by PID; the run must fail and say so. An inner run that
leaves it alone passes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from flightstate_testing.mariadb_server import PrivateMariaDB

pytestmark = [pytest.mark.mysql, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
STOPS_IT = """
import os, signal, time, socket

def test_stops_the_server():
    os.kill(int(os.environ["GUARDED_PID"]), signal.SIGTERM)
    port = int(os.environ["GUARDED_PORT"])
    for _ in range(600):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) != 0:
                return
        time.sleep(0.1)
"""
LEAVES_IT = "def test_nothing_to_see():\n    assert 1 + 1 == 2\n"


def _inner_run(
    tmp_path: Path, body: str, server: PrivateMariaDB
) -> subprocess.CompletedProcess[str]:
    test_file = tmp_path / "test_inner.py"
    test_file.write_text(body)
    env = {**os.environ, "FLIGHTSTATE_TEST_MYSQL_DSN": server.dsn,
           "GUARDED_PID": str(server.pid), "GUARDED_PORT": str(server.port)}  # fmt: skip
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(ROOT),
         "-c", str(ROOT / "pyproject.toml"), "-p", "tests.fixtures.shared_servers",
         str(test_file)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_a_run_that_stops_the_server_fails(tmp_path: Path, private_mariadb: PrivateMariaDB) -> None:
    done = _inner_run(tmp_path, STOPS_IT, private_mariadb)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "the shared MariaDB was stopped" in done.stdout


def test_a_run_that_leaves_it_alone_passes(tmp_path: Path, private_mariadb: PrivateMariaDB) -> None:
    done = _inner_run(tmp_path, LEAVES_IT, private_mariadb)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
