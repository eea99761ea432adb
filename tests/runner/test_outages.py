"""A read-only store, a denied or lock-blocked backfill and a broker outage never
stop the runner; ``run --until-idle`` ends after ``idle_wait`` with exit 3 saying what is
left; a broker outage is logged once at its start, at a bounded rate, and once at its end.

The read-only store is this test's own throwaway database (``ALTER DATABASE ... SET
default_transaction_read_only``, then its backends terminated: a failover to a standby not
yet promoted); the shared server is never touched otherwise.
"""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path
from typing import Any

import psycopg
import pymysql
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.wire import wire
from flightstate_mysql import parse_mysql_dsn
from flightstate_pg import PgStore
from tests.fixtures import postgres
from tests.fixtures.kafka import TansuBroker
from tests.fixtures.util import unique_name
from tests.runner._cli import run_cli
from tests.runner._procs import RunnerProc, drained, ok, status, wait_for

pytestmark = [pytest.mark.pg, pytest.mark.slow]

EXIT_LEFT_BEHIND = 3


def _base_env(pg_dsn: str) -> dict[str, str]:
    return {
        "FLIGHTSTATE_PG_DSN": pg_dsn,
        "FLIGHTSTATE_INBOX": "store",
        "FLIGHTSTATE_INBOX_TABLE": unique_name("cmin"),
        "FLIGHTSTATE_POLL_INTERVAL": "0.1",
        "FLIGHTSTATE_LEASE_TTL": "2",
        "FLIGHTSTATE_BACKOFF_INITIAL": "0.1",
        "FLIGHTSTATE_BACKOFF_MAX": "1",
        "FLIGHTSTATE_CLEANUP_INTERVAL": "0",
    }


def _flights(dsn: str) -> dict[str, dict[str, Any] | None]:
    """Every flight's wire form without ``updatedAt`` (the wall clock of its commit)."""
    store = PgStore(dsn)
    try:
        states = {s.flid: None if s.is_deleted else json.loads(wire(s, CoreConfig()))
                  for s in store.iter_flights()}  # fmt: skip
    finally:
        store.close()
    for state in states.values():
        if state is not None:
            state.pop("updatedAt")
    return states


def _outcomes(dsn: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(dsn) as conn:
        return conn.execute("SELECT MESSAGE_ID, STATUS, REASON FROM PROC_STATE "
                            "ORDER BY MESSAGE_ID").fetchall()  # fmt: skip


def _scrape(port: int) -> dict[str, float]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
            text = reply.read().decode()
    except OSError:
        return {}
    return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
            for line in text.splitlines() if line and not line.startswith("#")}  # fmt: skip


def _read_only(admin: str, dsn: str, on: bool) -> None:
    name = str(conninfo_to_dict(dsn)["dbname"])
    with psycopg.connect(admin, autocommit=True) as conn:
        if on:
            conn.execute(sql.SQL("ALTER DATABASE {} SET default_transaction_read_only = on")
                         .format(sql.Identifier(name)))  # fmt: skip
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                         "WHERE datname = %s AND pid <> pg_backend_pid()", (name,))  # fmt: skip
        else:
            conn.execute(sql.SQL("ALTER DATABASE {} RESET default_transaction_read_only")
                         .format(sql.Identifier(name)))  # fmt: skip


def test_read_only_store_for_30_s_then_writable(
    pg_db: str, pg_server_dsn: str, tmp_path: Path
) -> None:
    env = _base_env(pg_db) | {"FLIGHTSTATE_BATCH_SIZE": "5"}
    ok("migrate", env=env)
    ok("inbox-init", env=env)
    inserted = int(ok("generate", "--messages", "2000", "--flights", "100", env=env).split()[1])
    port = 20000 + int(time.time() * 1000) % 9000
    runner = RunnerProc(env, "ro", tmp_path, "--until-idle", "--metrics-port", str(port))
    try:
        wait_for(lambda: (status(env)["inbox"]["cursor"] or 0) > 0, 60, "the first commits")
        _read_only(pg_server_dsn, pg_db, on=True)
        cursor = status(env)["inbox"]["cursor"]
        unavailable_seen = False
        ends = time.monotonic() + 30
        while time.monotonic() < ends:
            assert runner.proc.poll() is None, runner.text()[-3000:]
            unavailable_seen |= _scrape(port).get("flightstate_store_unavailable") == 1
            time.sleep(1)
        assert status(env)["inbox"]["cursor"] == cursor  # nothing committed while read-only
        assert unavailable_seen, "store_unavailable never reported in the metrics"
        _read_only(pg_server_dsn, pg_db, on=False)  # sessions are not reset: it must reconnect
        code = runner.wait(timeout=240)
    finally:
        runner.stop()
        _read_only(pg_server_dsn, pg_db, on=False)
    assert code == 0, runner.text()[-3000:]
    assert "25006" in runner.text()  # it did meet the read-only store
    report = status(env)  # no Kafka here: events stay in the outbox by design
    assert sum(report["outcomes"].values()) == inserted
    assert report["inbox"]["lag"] == 0
    assert report["backfill_backlog"] == 0

    twin = postgres.create_database(pg_server_dsn)  # the same day, never interrupted
    try:
        twin_env = env | {"FLIGHTSTATE_PG_DSN": twin}
        ok("migrate", env=twin_env)
        ok("inbox-init", env=twin_env)
        ok("generate", "--messages", "2000", "--flights", "100", env=twin_env)
        ok("run", "--until-idle", env=twin_env)
        assert _outcomes(pg_db) == _outcomes(twin)  # nothing lost or doubled
        assert _flights(pg_db) == _flights(twin)
    finally:
        postgres.drop_database(pg_server_dsn, twin)


# ---------------------------------------------------------------------- backfill (MariaDB)


def _mysql(dsn: str) -> pymysql.connections.Connection[Any]:
    return pymysql.connect(autocommit=True, **parse_mysql_dsn(dsn))


def _inbox_status(dsn: str, table: str) -> list[tuple[Any, ...]]:
    conn = _mysql(dsn)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT CMINMSGS_ID, CMINMSGS_STATUS, CMINMSGS_DATE_PROCESSED "
                        f"FROM `{table}` ORDER BY CMINMSGS_ID")  # fmt: skip
            return list(cur.fetchall())
    finally:
        conn.close()


@pytest.mark.mysql
def test_backfill_denied_then_locked_then_granted(
    pg_db: str, mysql_dsn: str, tmp_path: Path
) -> None:
    env = _base_env(pg_db) | {"FLIGHTSTATE_MYSQL_DSN": mysql_dsn, "FLIGHTSTATE_INBOX": "mysql",
                              "FLIGHTSTATE_IDLE_WAIT": "3",
                              "FLIGHTSTATE_BACKFILL_LOCK_WAIT_TIMEOUT": "1"}  # fmt: skip
    table = env["FLIGHTSTATE_INBOX_TABLE"]
    ok("migrate", env=env)
    ok("inbox-init", env=env)
    inserted = int(ok("generate", "--messages", "400", "--flights", "40", env=env).split()[1])
    params = parse_mysql_dsn(mysql_dsn)
    user, password, database = unique_name("fsbf")[:16], "bf-pw", params["database"]
    root = _mysql(mysql_dsn)
    with root.cursor() as cur:
        cur.execute("CREATE USER %s@'%%' IDENTIFIED BY %s", (user, password))
        cur.execute(f"GRANT SELECT ON `{database}`.`{table}` TO %s@'%%'", (user,))
    limited = env | {
        "FLIGHTSTATE_MYSQL_DSN": f"mysql://{user}:{password}@{params['host']}:{params['port']}/{database}"
    }
    try:
        denied = run_cli("run", "--until-idle", env=limited)
        assert denied.returncode == EXIT_LEFT_BEHIND, denied.stderr[-3000:]
        assert f"{inserted} backfill(s) pending" in denied.stderr
        assert "password" not in denied.stderr.lower() or password not in denied.stderr
        failures = [line for line in denied.stderr.splitlines() if "backfill of" in line]
        assert 1 <= len(failures) < 20, len(failures)  # a line per attempt, not per row
        report = status(env)
        assert report["backfill_backlog"] == inserted
        assert report["backfill_failures"]["failing"] == inserted
        assert "denied" in report["backfill_failures"]["last_error"]
        outcomes = _outcomes(pg_db)
        assert len(outcomes) == inserted
        assert all(row[2] is None for row in _inbox_status(mysql_dsn, table))  # not written

        with root.cursor() as cur:  # granted, but an AODB transaction holds every row
            cur.execute(f"GRANT UPDATE ON `{database}`.`{table}` TO %s@'%%'", (user,))
            cur.execute("BEGIN")
            cur.execute(f"SELECT CMINMSGS_ID FROM `{table}` FOR UPDATE")
        locked = run_cli("run", "--until-idle", env=limited, timeout=120)
        assert locked.returncode == EXIT_LEFT_BEHIND, locked.stderr[-3000:]
        assert "1205" in locked.stderr  # innodb_lock_wait_timeout of 1 s, not 50
        root.rollback()

        done = run_cli("run", "--until-idle", env=limited)
        assert done.returncode == 0, done.stderr[-3000:]
    finally:
        with root.cursor() as cur:
            cur.execute("DROP USER IF EXISTS %s@'%%'", (user,))
        root.close()
    assert _outcomes(pg_db) == outcomes  # backfill never changes an outcome
    by_id = {row[0]: row[1] for row in outcomes}
    inbox = _inbox_status(mysql_dsn, table)
    assert [(row[0], row[1]) for row in inbox] == sorted(by_id.items())
    assert all(row[2] is not None for row in inbox)
    assert status(env)["backfill_backlog"] == 0
    assert status(env)["backfill_failures"]["failing"] == 0


# ---------------------------------------------------------------------- broker outage


@pytest.mark.kafka
def test_broker_outage_logged_at_start_bounded_and_end(
    pg_db: str, tansu_broker: TansuBroker, tmp_path: Path
) -> None:
    env = _base_env(pg_db) | {
        "FLIGHTSTATE_KAFKA_BOOTSTRAP": tansu_broker.bootstrap,
        "FLIGHTSTATE_TOPIC_SCHD": unique_name("schd"), "FLIGHTSTATE_TOPIC_MSG": unique_name("msg"),
        "FLIGHTSTATE_IDLE_WAIT": "8", "FLIGHTSTATE_KAFKA_OUTAGE_LOG_EVERY": "3",
    }  # fmt: skip
    ok("migrate", env=env)
    ok("inbox-init", env=env)
    inserted = int(ok("generate", "--messages", "300", "--flights", "30", env=env).split()[1])
    tansu_broker.stop()

    down = run_cli("run", "--until-idle", env=env, timeout=120)
    assert down.returncode == EXIT_LEFT_BEHIND, down.stderr[-3000:]
    assert "event(s) undelivered" in down.stderr
    assert not [line for line in down.stderr.splitlines() if line.startswith("%")]  # raw rdkafka
    kafka_lines = [line for line in down.stderr.splitlines() if "Kafka" in line]
    assert sum('"kafka_outage_start"' in line for line in kafka_lines) == 1
    assert len(kafka_lines) <= 8, kafka_lines  # ~10 s of outage at one line per 3 s

    runner = RunnerProc(env, "k", tmp_path)
    try:
        wait_for(lambda: "kafka_outage_start" in runner.text(), 60, "the outage line")
        tansu_broker.start()
        ok("topics", env=env)
        wait_for(lambda: drained(env, inserted), 120, "the outbox to drain")
        wait_for(lambda: "kafka_outage_end" in runner.text(), 30, "the outage end line")
    finally:
        assert runner.stop() == 0
    events = [line.get("event") for line in runner.lines()]
    assert events.count("kafka_outage_start") == 1
    assert events.count("kafka_outage_end") == 1
