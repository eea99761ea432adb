"""``runner.py demo`` as a user runs it: no configuration, no service reachable.

The demo runs in a fresh network namespace (``unshare -n``) where only a loopback
interface exists, so 127.0.0.1:5432 and :3306 do not answer there: if the demo tried to use
the machine's PostgreSQL or MariaDB it would fail. Without ``unshare`` rights the test
still runs it with every FLIGHTSTATE_* variable unset.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from flightstate_runner.local import broker_available
from tests.runner._cli import REPO, clean_env, runner_argv, wait_for_line

pytestmark = pytest.mark.slow


def _isolated(argv: list[str]) -> list[str]:
    if shutil.which("unshare") and os.geteuid() == 0:
        probe = subprocess.run(
            ["unshare", "-n", "true"],  # noqa: S607 - system tool on PATH
            capture_output=True,
            check=False,
        )
        if probe.returncode == 0:
            return ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "demo", *argv]
    return argv


@pytest.fixture
def demo_tmp() -> Iterator[Path]:
    """A private TMPDIR for one demo run: what it leaves behind is its own, not that of a
    demo another xdist worker runs at the same time (a short path: the embedded server's
    Unix socket lives under it). It starts empty, so any demo directory in it is this
    test's."""
    root = Path(tempfile.mkdtemp(prefix="fsdt-", dir="/tmp"))
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _demo_dirs(root: Path) -> set[str]:
    return {p.name for p in root.glob("fs-demo-*")}


def test_demo_end_to_end_without_services(tmp_path: Path, demo_tmp: Path) -> None:
    summary_file = tmp_path / "summary.json"
    argv = _isolated(runner_argv("demo", "--messages", "600", "--flights", "60",
                                 "--summary-json", str(summary_file)))  # fmt: skip
    env = clean_env({"PGHOST": "/nonexistent", "PGPORT": "1",  # no libpq fallback either
                     "TMPDIR": str(demo_tmp)})  # fmt: skip
    result = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300,
                            check=False, cwd=REPO)  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(summary_file.read_text())

    outcomes = summary["messages_by_outcome"]
    assert summary["generated_messages"] >= 600
    assert sum(outcomes.values()) == summary["generated_messages"]  # every message finished
    assert set(outcomes) <= {"SUCCEEDED", "DUPLICATE", "IGNORED", "DEAD"}
    assert outcomes["SUCCEEDED"] > 0
    assert outcomes["DEAD"] > 0
    assert sum(summary["flights_by_state"].values()) >= 60
    assert summary["outbox_rows"] > 0
    if broker_available():
        assert summary["kafka"] is True
        assert summary["events_published"] == summary["outbox_rows"]
        assert 0 < summary["kafka_records"] <= summary["outbox_rows"]
    else:
        assert summary["events_published"] == 0
    assert "flightstate demo: summary" in result.stdout
    assert f"messages processed   {summary['generated_messages']}" in result.stdout
    first = summary["sample_flids"][0]
    flight_at = result.stdout.index(f"\nflight {first} (")  # a sample flight, as `show` prints
    assert flight_at < result.stdout.index("flightstate demo: summary")  # summary last
    assert re.search(r"^flid +" + re.escape(first) + "$", result.stdout, re.MULTILINE)
    assert len(result.stdout.splitlines()) < 80, result.stdout  # fits a terminal or two
    assert _demo_dirs(demo_tmp) == set()  # temp dirs removed


def test_demo_cleans_up_on_ctrl_c(demo_tmp: Path) -> None:
    proc = subprocess.Popen(runner_argv("demo", "--messages", "20000", "--flights", "300"),
                            env=clean_env({"TMPDIR": str(demo_tmp)}), stderr=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, cwd=REPO)  # fmt: skip
    try:
        wait_for_line(proc, "pumping", 120)
        ours = _demo_dirs(demo_tmp)
        assert ours  # the embedded PostgreSQL's directory exists while it runs
        servers = [p for p in psutil.process_iter(["cmdline"])
                   if any(d in " ".join(p.info["cmdline"] or []) for d in ours)]  # fmt: skip
        children = psutil.Process(proc.pid).children(recursive=True)
        proc.send_signal(signal.SIGINT)
        code = proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == 130
    assert servers  # the postmaster was found by its data directory
    _, alive = psutil.wait_procs(servers + children, timeout=10)
    assert alive == []
    assert _demo_dirs(demo_tmp) == set()


def _stop_kept(tmp: Path, dirs: set[str]) -> None:
    """End the postmaster of each kept demo directory by its PID, then delete the files."""
    for name in dirs:
        root = tmp / name
        pidfile = root / "pgdata" / "postmaster.pid"
        if pidfile.exists():
            server = psutil.Process(int(pidfile.read_text().split()[0]))
            server.terminate()
            psutil.wait_procs([server], timeout=30)
        shutil.rmtree(root, ignore_errors=True)


def test_demo_keep_leaves_its_database_for_show_and_history(tmp_path: Path, demo_tmp: Path) -> None:
    summary_file = tmp_path / "summary.json"
    try:
        result = subprocess.run(
            runner_argv("demo", "--messages", "400", "--flights", "40", "--keep",
                        "--summary-json", str(summary_file)),
            env=clean_env({"TMPDIR": str(demo_tmp)}), capture_output=True, text=True,
            timeout=300, check=False, cwd=REPO,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr[-3000:]
        summary = json.loads(summary_file.read_text())
        dead = summary["messages_by_outcome"]["DEAD"]
        assert re.search(rf"DEAD +{dead} +the generator's deliberate bad messages", result.stdout)
        kept = summary["kept"]
        assert f"export FLIGHTSTATE_PG_DSN='{kept['pg_dsn']}' FLIGHTSTATE_INBOX=store" in (
            result.stdout)  # fmt: skip
        assert all(line in result.stdout for line in kept["stop"])

        env = clean_env({"FLIGHTSTATE_PG_DSN": kept["pg_dsn"], "FLIGHTSTATE_INBOX": "store"})
        flid = summary["sample_flids"][0]
        for command in (["show", flid], ["history", flid], ["status"]):
            shown = subprocess.run(runner_argv(*command), env=env, capture_output=True,
                                   text=True, timeout=120, check=False, cwd=REPO)  # fmt: skip
            assert shown.returncode == 0, shown.stderr[-3000:]
            assert flid in shown.stdout or command == ["status"]
        assert f"DEAD:     {dead} message(s)" in shown.stdout  # status on the kept data
    finally:
        _stop_kept(demo_tmp, _demo_dirs(demo_tmp))
    assert _demo_dirs(demo_tmp) == set()
