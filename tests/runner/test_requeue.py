"""``requeue``: a DEAD message is applied exactly once more after its cause is removed.

The realistic cause: a PSHT (stand update) names a stand (PUST) that no stand-plan item
(PSDT) of the flight has yet, so it is DEAD. A later FLOP PSDT adds that stand; the
operator requeues the PSHT, which now applies.
"""

from __future__ import annotations

import json

import psycopg
import pymysql
import pytest

from flightstate_mysql import create_cminmsgs, insert_messages, parse_mysql_dsn
from flightstate_testing.traffic import TrafficGenerator
from tests.fixtures.util import unique_name
from tests.runner._cli import run_cli

pytestmark = [pytest.mark.pg, pytest.mark.mysql]

FLID = 9001


def _messages() -> list[str]:
    gen = TrafficGenerator(seed=5)
    stand_update = (f'<PSHT PSHN="1"><PSTM>{gen.when(FLID, 1)}</PSTM><PSID>T9</PSID>'
                    "<PUST>777</PUST></PSHT>")  # fmt: skip
    new_stand = (f'<PSDT PSNO="2"><PSST>777</PSST><STST>{gen.when(FLID, -30)}</STST>'
                 f"<STET>{gen.when(FLID, 40)}</STET></PSDT>")  # fmt: skip
    return [
        gen.schedule("ADD", [FLID]),
        gen.flop("PSHT", FLID, stand_update),  # DEAD: no PSDT item with PSST 777 yet
        gen.flop("PSDT", FLID, new_stand),
    ]


@pytest.fixture
def env(pg_db: str, mysql_dsn: str) -> dict[str, str]:
    table = unique_name("cmin")
    conn = pymysql.connect(autocommit=False, **parse_mysql_dsn(mysql_dsn))
    try:
        create_cminmsgs(conn, table)
        insert_messages(conn, _messages(), table=table)
    finally:
        conn.close()
    return {"FLIGHTSTATE_PG_DSN": pg_db, "FLIGHTSTATE_MYSQL_DSN": mysql_dsn,
            "FLIGHTSTATE_INBOX_TABLE": table, "FLIGHTSTATE_POLL_INTERVAL": "0.1"}  # fmt: skip


def _ok(*args: str, env: dict[str, str]) -> str:
    result = run_cli(*args, env=env)
    assert result.returncode == 0, f"{args}: {result.stderr[-3000:]}"
    return result.stdout


def _stand_plan(env: dict[str, str]) -> list[dict[str, object]]:
    return json.loads(_ok("show", "--json", str(FLID), env=env))["PSDT"]


def test_requeue_applies_a_fixed_dead_message_once(env: dict[str, str]) -> None:
    _ok("migrate", env=env)
    _ok("run", "--until-idle", env=env)
    status = json.loads(_ok("status", "--json", env=env))
    assert status["outcomes"] == {"DEAD": 1, "SUCCEEDED": 2}
    (dead,) = status["dead"]
    assert dead["styp"] == "PSHT"
    assert "777" in dead["reason"]
    dead_id = dead["message_id"]
    assert all(item.get("PSID") is None for item in _stand_plan(env))

    result = run_cli("requeue", str(dead_id), env=env)
    assert result.returncode == 0, result.stderr
    assert f"message {dead_id}: DEAD" in result.stdout
    assert "-> SUCCEEDED" in result.stdout

    (item,) = [i for i in _stand_plan(env) if i["PSST"] == "777"]
    assert item["PSID"] == "T9"
    assert item["PSHN"] == "1"
    status = json.loads(_ok("status", "--json", env=env))
    assert status["outcomes"] == {"SUCCEEDED": 3}
    assert status["dead"] == []
    assert status["backfill_backlog"] == 0
    with psycopg.connect(env["FLIGHTSTATE_PG_DSN"]) as conn:
        proc = conn.execute("SELECT STATUS, ATTEMPTS FROM PROC_STATE WHERE MESSAGE_ID = %s",
                            (dead_id,)).fetchone()  # fmt: skip
        events = conn.execute("SELECT count(*) FROM MSG_EVENT WHERE MESSAGE_ID = %s",
                              (dead_id,)).fetchone()  # fmt: skip
        audit = conn.execute("SELECT PREVIOUS_STATUS, NEW_STATUS FROM RUNNER_REQUEUE "
                             "WHERE MESSAGE_ID = %s", (dead_id,)).fetchall()  # fmt: skip
    assert proc == ("SUCCEEDED", 2)
    assert events is not None
    assert events[0] >= 1
    assert audit == [("DEAD", "SUCCEEDED")]
    conn2 = pymysql.connect(autocommit=True, **parse_mysql_dsn(env["FLIGHTSTATE_MYSQL_DSN"]))
    try:
        with conn2.cursor() as cur:
            cur.execute(f"SELECT CMINMSGS_STATUS FROM `{env['FLIGHTSTATE_INBOX_TABLE']}` "
                        "WHERE CMINMSGS_ID = %s", (dead_id,))  # fmt: skip
            assert cur.fetchone() == ("SUCCEEDED",)  # the new outcome written back
    finally:
        conn2.close()

    again = run_cli("requeue", str(dead_id), env=env)  # exactly once: a second one is refused
    assert again.returncode == 1
    assert "is SUCCEEDED, not DEAD" in again.stderr
    _ok("run", "--until-idle", env=env)  # the pump does not apply it a third time
    assert json.loads(_ok("status", "--json", env=env))["outcomes"] == {"SUCCEEDED": 3}
    with psycopg.connect(env["FLIGHTSTATE_PG_DSN"]) as conn:
        after = conn.execute("SELECT count(*) FROM MSG_EVENT WHERE MESSAGE_ID = %s",
                             (dead_id,)).fetchone()  # fmt: skip
    assert after == events


def test_requeue_refuses_unknown_and_unprocessed_messages(env: dict[str, str]) -> None:
    _ok("migrate", env=env)
    missing = run_cli("requeue", "999999", env=env)
    assert missing.returncode == 1
    assert "not in the inbox" in missing.stderr
    pending = run_cli("requeue", "1", env=env)  # in the inbox, not processed yet
    assert pending.returncode == 1
    assert "has no outcome yet" in pending.stderr
