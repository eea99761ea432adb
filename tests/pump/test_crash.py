"""Crash safety, failover and connection faults with real pump processes on real MariaDB
(the inbox) and PostgreSQL (the store). Marked slow: a generated day is >= 5,000 messages.

Reference: the same traffic pumped once, uninterrupted, into a second store database.
"""

from __future__ import annotations

import random
import signal
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

import flightstate_pg
from flightstate_core.engine.lease_identity import split_holder
from flightstate_testing.mariadb_server import PrivateMariaDB
from flightstate_testing.traffic import generate_day
from tests.fixtures import mysql, postgres
from tests.fixtures.util import unique_name
from tests.pump.harness import (
    fill_mysql_inbox,
    finish,
    inbox_rows,
    run_pump_inline,
    start_pump,
    store_snapshot,
)

pytestmark = [pytest.mark.mysql, pytest.mark.pg, pytest.mark.slow]

DAY_MESSAGES = 5000
KILLS = 24


@pytest.fixture(scope="module")
def day() -> list[str]:
    return generate_day(11, flights=300, messages=DAY_MESSAGES)


@pytest.fixture(scope="module")
def reference(day: list[str], mysql_dsn: str, pg_server_dsn: str) -> Iterator[dict[str, object]]:
    """Store snapshot of one uninterrupted run over the day."""
    pg = postgres.create_database(pg_server_dsn)
    try:
        flightstate_pg.migrate(pg)
        table = unique_name("ref")
        fill_mysql_inbox(mysql_dsn, table, day)
        run_pump_inline(pg, mysql_dsn, table, batch=100)
        yield store_snapshot(pg)
    finally:
        postgres.drop_database(pg_server_dsn, pg)


def assert_complete(pg: str, mysql_dsn: str, table: str, reference: dict[str, object]) -> None:
    """Same decisions as the reference; every message once; every inbox row backfilled."""
    snap = store_snapshot(pg)
    assert snap["procs"] == reference["procs"]
    assert snap["flights"] == reference["flights"]
    assert snap["states"] == reference["states"]
    assert snap["events"] == reference["events"]
    with psycopg.connect(pg) as conn:
        twice = conn.execute(
            "SELECT FLID, STATE_VERSION FROM MSG_EVENT WHERE TOPIC = 'schd'"
            " GROUP BY FLID, STATE_VERSION HAVING COUNT(DISTINCT COALESCE(PAYLOAD, '')) > 1"
            " OR COUNT(*) > 1"
        ).fetchall()
    assert twice == []
    rows = inbox_rows(mysql_dsn, table)
    assert len(rows) == DAY_MESSAGES
    statuses = {mid: status for mid, status, *_ in snap["procs"]}  # type: ignore[attr-defined]
    assert [r[1] for r in rows] == [statuses[r[0]] for r in rows]
    assert all(r[2] is not None for r in rows)


def test_sigkill_at_random_points_loses_and_repeats_nothing(
    day: list[str], reference: dict[str, object], mysql_dsn: str, migrated_pg: str
) -> None:
    table = unique_name("crash")
    fill_mysql_inbox(mysql_dsn, table, day)
    rng = random.Random(20261130)
    applied_at_kills: list[int] = []
    for _ in range(KILLS):
        proc = _start_and_kill(rng, migrated_pg, mysql_dsn, table)
        assert proc.returncode == -signal.SIGKILL, "the pump ended before it was killed"
        applied_at_kills.append(_applied(migrated_pg))
    # Every kill landed while the day still had messages left to apply, and most of them
    # after fresh progress (a start-up kill may apply nothing).
    assert applied_at_kills[-1] < DAY_MESSAGES, applied_at_kills
    assert len(set(applied_at_kills)) >= KILLS // 2, applied_at_kills
    last = finish(start_pump(migrated_pg, mysql_dsn, table, batch=100, ttl=1))
    assert last["cursor"] == DAY_MESSAGES
    assert_complete(migrated_pg, mysql_dsn, table, reference)


def _start_and_kill(
    rng: random.Random, pg: str, mysql_dsn: str, table: str
) -> subprocess.Popen[str]:
    """One pump process, SIGKILLed at one of three kinds of point; returns it ended.

    Mid-run kill points are set by progress, not by time: a pump on a fast machine would
    otherwise drain the day within the first few kills (it then exits normally, and every
    later attempt has nothing left to interrupt). A kill lets about 100 messages through on
    average, so the 24 kills use about half of the day on a machine of any speed.
    """
    holder = "steady" if rng.random() < 0.6 else None  # None: a new holder takes over
    kind = rng.random()
    if kind < 0.4:  # exactly between a commit and its backfill: the pump kills itself
        env = {"FS_PUMP_KILL_AFTER_COMMIT": str(rng.randint(1, 6))}
        proc = start_pump(pg, mysql_dsn, table, holder=holder, batch=25, ttl=1, env=env)
        proc.communicate(timeout=300)
        return proc
    proc = start_pump(pg, mysql_dsn, table, holder=holder, batch=25, ttl=1)
    try:
        if kind < 0.55:  # during start-up: imports, connecting, taking the lease
            time.sleep(rng.uniform(0.05, 0.4))
        else:  # mid-transaction or mid-backfill, a little after some progress
            _wait_for_progress(pg, _applied(pg) + rng.randint(10, 100), proc)
            time.sleep(rng.uniform(0, 0.02))
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
    return proc


def test_two_pumps_one_applies_then_the_other_takes_over(
    day: list[str], reference: dict[str, object], mysql_dsn: str, migrated_pg: str, tmp_path
) -> None:
    table = unique_name("pair")
    fill_mysql_inbox(mysql_dsn, table, day)
    started = tmp_path / "leader"
    env = {"FS_PUMP_STARTED_FILE": str(started), "FS_PUMP_PAUSE_AFTER_COMMIT": "0.05"}
    first = start_pump(migrated_pg, mysql_dsn, table, holder="one", batch=25, ttl=1, env=env)
    second = start_pump(migrated_pg, mysql_dsn, table, holder="two", batch=25, ttl=1, env=env)
    while not started.exists():
        time.sleep(0.05)
    time.sleep(1.5)
    holder = _lease_holder(migrated_pg)
    leader, standby = (first, second) if holder == "one" else (second, first)
    assert holder in ("one", "two")
    assert 0 < _applied(migrated_pg) < DAY_MESSAGES
    leader.send_signal(signal.SIGKILL)
    leader.communicate(timeout=60)
    # the standby only exits (until idle) once it led and drained the inbox
    stats = finish(standby, timeout=600)
    assert stats["holder"] != holder
    assert stats["leadership_changes"] == 1
    assert stats["cursor"] == DAY_MESSAGES
    assert_complete(migrated_pg, mysql_dsn, table, reference)


def _lease_holder(pg: str) -> str | None:
    with psycopg.connect(pg) as conn:
        row = conn.execute(
            "SELECT HOLDER FROM PIPELINE_LOCK WHERE LOCK_NAME = 'pipeline'"
        ).fetchone()
    return None if row is None else split_holder(row[0])[0]  # the name, not its instance


def test_pg_backend_terminated_and_mariadb_restarted_mid_run(
    day: list[str], reference: dict[str, object], migrated_pg: str,
    private_mariadb: PrivateMariaDB,
) -> None:  # fmt: skip
    inbox_dsn = mysql.create_database(private_mariadb.dsn)
    table = unique_name("faults")
    fill_mysql_inbox(inbox_dsn, table, day)
    env = {"FS_PUMP_PAUSE_AFTER_COMMIT": "0.02"}
    proc = start_pump(migrated_pg, inbox_dsn, table, batch=25, ttl=2, env=env)
    try:
        _wait_for_progress(migrated_pg, 200)
        for _ in range(3):
            _terminate_store_backends(migrated_pg)
            time.sleep(0.7)
        _wait_for_progress(migrated_pg, 1200)
        applied_before_restart = _applied(migrated_pg)
        pid_before = private_mariadb.pid
        # Down for 2 s: the pump keeps retrying against a dead server for a while.
        private_mariadb.restart(down_for=2.0)
        assert private_mariadb.pid not in (None, pid_before)
        stats = finish(proc, timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert stats["cursor"] == DAY_MESSAGES
    assert stats["transient_errors"] >= 1
    # The pause after each commit caps the pump at 1,250 msg/s, so the restart is mid-run.
    assert applied_before_restart < DAY_MESSAGES
    assert_complete(migrated_pg, inbox_dsn, table, reference)


def _applied(pg: str) -> int:
    with psycopg.connect(pg, autocommit=True) as conn:
        return _applied_on(conn)


def _applied_on(conn: psycopg.Connection[Any]) -> int:
    """Messages with a PROC_STATE row: every message applied, whatever its outcome."""
    row = conn.execute("SELECT COUNT(*) FROM PROC_STATE").fetchone()
    return 0 if row is None else int(row[0])


def _wait_for_progress(
    pg: str, count: int, proc: subprocess.Popen[str] | None = None, timeout: float = 120
) -> None:
    """Until PROC_STATE holds *count* rows; fails if *proc* exits or time runs out first."""
    deadline = time.monotonic() + timeout
    with psycopg.connect(pg, autocommit=True) as conn:
        while True:
            if _applied_on(conn) >= count:
                return
            assert proc is None or proc.poll() is None, f"pump exited {proc.returncode}"
            assert time.monotonic() < deadline, f"no progress to {count} messages"
            time.sleep(0.01)


def _terminate_store_backends(pg: str) -> None:
    with psycopg.connect(pg, autocommit=True) as conn:
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
