"""A backlog of 400 two-megabyte SCHD DNLD packages is pumped in bounded memory
(docs/design.md, "Poison-proof bounds"): reads are capped by bytes, so the runner holds a
few packages at a time whatever the backlog, where a 1,000-row batch of them needed ~23 GB
before. Dense packages (many small flights per byte) are bounded by the decoded-record
budget as well.

The runner's peak resident size is read from the kernel's accounting of that one child
(``os.wait4``), so nothing is sampled and nothing is timed.
"""

from __future__ import annotations

import itertools
import os
import subprocess
from typing import Any

import psycopg
import pymysql
import pytest

from flightstate_mysql import insert_messages, parse_mysql_dsn
from flightstate_testing.seeded import dnld_backlog
from tests.fixtures.util import unique_name
from tests.runner._cli import REPO, clean_env, run_cli, runner_argv

# 400 packages of 1,600 flights take 8-10 minutes on a loaded 2-core machine (about 1.2 s
# each), too close to the suite's 600 s safety net; this test bounds memory, not time.
pytestmark = [
    pytest.mark.pg, pytest.mark.mysql, pytest.mark.slow, pytest.mark.longest,
    pytest.mark.timeout(1500),
]  # fmt: skip

PACKAGES = 400
FLIGHTS = 1600  # 2.06 MB of text per package
#: The stated bound on the runner's peak RSS (interpreter and libraries included): two
#: byte-capped reads of 16 MiB (8 packages each, the one applied and the one read ahead)
#: at ~18 MiB per package held, plus the process itself; measured 366 MiB.
PEAK_RSS_BOUND_MIB = 1024
DENSE_PACKAGES = 56
DENSE_FLIGHTS = 8000  # 2.14 MB of text per package, four times the flights per byte
#: The dense backlog's bound (decoded flight records per batch bound what is held).
DENSE_PEAK_RSS_BOUND_MIB = 512


def _ok(*args: str, env: dict[str, str]) -> None:
    result = run_cli(*args, env=env)
    assert result.returncode == 0, f"{args}: {result.stderr[-3000:]}"


def _peak_rss_mib(argv: list[str], env: dict[str, str]) -> tuple[int, float, str]:
    """(exit code, peak RSS in MiB, stderr tail) of one runner process."""
    with subprocess.Popen(argv, env=clean_env(env), cwd=REPO, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True) as proc:  # fmt: skip
        assert proc.stderr is not None
        tail = proc.stderr.read()[-3000:]  # drains stderr until the runner exits
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, usage.ru_maxrss / 1024, tail  # ru_maxrss is in KiB on Linux


def _connect(dsn: str) -> pymysql.connections.Connection[Any]:
    return pymysql.connect(autocommit=True, **parse_mysql_dsn(dsn))


def _pump_backlog(pg_db: str, mysql_dsn: str, packages: int, flights: int, *, dense: bool
                  ) -> float:  # fmt: skip
    """Fill a fresh inbox with *packages* DNLDs, run the runner until idle, check every one
    SUCCEEDED and was backfilled; the runner's peak RSS in MiB."""
    table = unique_name("cmin")
    env = {"FLIGHTSTATE_PG_DSN": pg_db, "FLIGHTSTATE_MYSQL_DSN": mysql_dsn,
           "FLIGHTSTATE_INBOX_TABLE": table, "FLIGHTSTATE_POLL_INTERVAL": "0.1"}  # fmt: skip
    _ok("migrate", env=env)
    _ok("inbox-init", env=env)
    conn = _connect(mysql_dsn)
    try:
        backlog = dnld_backlog(packages, flights, dense=dense)
        while chunk := list(itertools.islice(backlog, 10)):
            insert_messages(conn, chunk, table=table, chunk=10)
    finally:
        conn.close()

    code, peak_mib, tail = _peak_rss_mib(runner_argv("run", "--until-idle"), env)

    assert code == 0, tail
    with psycopg.connect(pg_db) as pg:
        found = pg.execute("SELECT STATUS, BACKFILL_STATUS, count(*) FROM PROC_STATE "
                           "GROUP BY STATUS, BACKFILL_STATUS").fetchall()  # fmt: skip
    assert found == [("SUCCEEDED", "DONE", packages)]
    conn = _connect(mysql_dsn)
    try:
        with conn.cursor() as cur:
            cur.execute(f"SELECT count(*) FROM `{table}` WHERE CMINMSGS_STATUS = 'SUCCEEDED'"
                        " AND CMINMSGS_DATE_PROCESSED IS NOT NULL")  # fmt: skip
            assert cur.fetchone() == (packages,)
    finally:
        conn.close()
    return peak_mib


def test_400_dnld_packages_pumped_under_the_peak_rss_bound(pg_db: str, mysql_dsn: str) -> None:
    peak_mib = _pump_backlog(pg_db, mysql_dsn, PACKAGES, FLIGHTS, dense=False)
    print(f"\nrunner peak RSS for {PACKAGES} DNLD packages: {peak_mib:.0f} MiB")
    assert peak_mib < PEAK_RSS_BOUND_MIB


def test_dense_dnld_packages_pumped_under_half_the_bound(pg_db: str, mysql_dsn: str) -> None:
    """Dense packages (8,000 flights in 2.1 MB): a 16 MiB read holds 64,000 flights, and
    with the text budget alone the runner peaked at about 1 GB; the decoded-record budget
    holds four packages per batch (docs/design.md, "Poison-proof bounds")."""
    peak_mib = _pump_backlog(pg_db, mysql_dsn, DENSE_PACKAGES, DENSE_FLIGHTS, dense=True)
    print(f"\nrunner peak RSS for {DENSE_PACKAGES} dense DNLD packages: {peak_mib:.0f} MiB")
    assert peak_mib < DENSE_PEAK_RSS_BOUND_MIB
