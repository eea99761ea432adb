"""The operator commands over the core's lifecycle modules: history, republish, cleanup, and
schedule requests (RQFD into coutmsgs), each as a CLI subprocess on real databases."""

from __future__ import annotations

import json
import re

import psycopg
import pymysql
import pytest

from flightstate_mysql import insert_messages, parse_mysql_dsn
from flightstate_testing.traffic import TrafficGenerator
from tests.fixtures.util import unique_name
from tests.runner._cli import run_cli

pytestmark = [pytest.mark.pg]


def _ok(*args: str, env: dict[str, str]) -> str:
    result = run_cli(*args, env=env)
    assert result.returncode == 0, f"{args}: {result.stderr[-3000:]}"
    return result.stdout


def _count(dsn: str, query: str) -> int:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(query).fetchone()
    return int(row[0]) if row else 0


@pytest.fixture
def processed(pg_db: str) -> dict[str, str]:
    """A PG-table inbox with a generated day, pumped until idle (no Kafka)."""
    env = {"FLIGHTSTATE_PG_DSN": pg_db, "FLIGHTSTATE_INBOX": "store",
           "FLIGHTSTATE_INBOX_TABLE": unique_name("cmin"),
           "FLIGHTSTATE_POLL_INTERVAL": "0.1"}  # fmt: skip
    _ok("migrate", env=env)
    _ok("generate", "--messages", "300", "--flights", "30", env=env)
    _ok("run", "--until-idle", env=env)
    return env


def test_history_republish_cleanup(processed: dict[str, str]) -> None:
    dsn = processed["FLIGHTSTATE_PG_DSN"]
    history = json.loads(_ok("history", "--json", "7", env=processed))
    assert history[0]["change"] == "CREATED"
    assert [h["stateVersion"] for h in history if h["stateVersion"]] == sorted(
        h["stateVersion"] for h in history if h["stateVersion"]
    )

    before = _count(dsn, "SELECT count(*) FROM MSG_EVENT")
    assert _ok("republish", "--flid", "7", "--flid", "8", env=processed).startswith("2 record")
    assert _count(dsn, "SELECT count(*) FROM MSG_EVENT") == before + 2

    flights = _count(dsn, "SELECT count(*) FROM FLIGHT_SCHD")
    out = _ok("cleanup", "--retention-days", "0", "--quiet-days", "0", env=processed)
    removed = int(re.search(r"removed (\d+) flight", out).group(1))  # type: ignore[union-attr]
    assert _count(dsn, "SELECT count(*) FROM FLIGHT_SCHD") == flights - removed


@pytest.mark.mysql
def test_request_schedule_answered_by_the_pump(pg_db: str, mysql_dsn: str) -> None:
    env = {"FLIGHTSTATE_PG_DSN": pg_db, "FLIGHTSTATE_MYSQL_DSN": mysql_dsn,
           "FLIGHTSTATE_INBOX_TABLE": unique_name("cmin")}  # fmt: skip
    _ok("migrate", env=env)
    _ok("inbox-init", env=env)
    bad = run_cli("request-schedule", "--from", "2026-12-02", "--to", "2026-12-01", env=env)
    assert bad.returncode == 2
    assert "--from" in bad.stderr
    out = _ok("request-schedule", "--from", "2026-11-30", "--to", "2026-11-30 23:59", env=env)
    assert out.startswith("request ")
    conn = pymysql.connect(autocommit=True, **parse_mysql_dsn(mysql_dsn))
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT ROUTINGID, COUTMSGS_CLOB_MSG FROM coutmsgs")
            rows = cur.fetchall()
    finally:
        conn.close()
    assert any(routing == "VIEWRQFD" and "RQFD" in raw for routing, raw in rows)
    request_id = int(out.split()[1])

    # The AODB answers with a SCHD RESP of flights on that day; the pump matches it inside
    # the transaction that applies it (service after-save hook), before any reconcile.
    conn = pymysql.connect(autocommit=False, **parse_mysql_dsn(mysql_dsn))
    try:
        insert_messages(conn, [TrafficGenerator(seed=3).schedule("RESP", [1, 2, 3])],
                        table=env["FLIGHTSTATE_INBOX_TABLE"])  # fmt: skip
    finally:
        conn.close()
    _ok("run", "--until-idle", env=env)
    with psycopg.connect(pg_db) as pg:
        row = pg.execute("SELECT STATUS FROM SCHD_REQUEST WHERE REQUEST_ID = %s",
                         (request_id,)).fetchone()  # fmt: skip
    assert row == ("ANSWERED",)
    report = json.loads(_ok("requests", "--json", env=env))
    assert report["answered"] == 1
    text = _ok("requests", env=env).splitlines()
    assert text[0].startswith("requests: 0 open, 1 answered, 0 failed")
    listed = report["requests"]  # the text lists what the JSON lists, under a header
    assert len(text) == 2 + (1 + len(listed) if listed else 0)
    for item, line in zip(listed, text[3:], strict=True):
        assert line.split()[:2] == [str(item["requestId"]), item["status"]]
