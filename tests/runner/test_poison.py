"""No message's content or size stops the FIFO (docs/design.md, "Poison-proof bounds").

Every over-long or out-of-range envelope value and every over-long value that would reach
a key or an indexed column, plus a row over the message limit, sit between valid messages
in a real MariaDB ``cminmsgs``; ``run --until-idle`` against a real PostgreSQL must end,
each poison row DEAD with a reason naming its element, every valid one applied, and every
row backfilled.
"""

from __future__ import annotations

from typing import Any

import psycopg
import pymysql
import pytest

from flightstate_mysql import insert_messages, parse_mysql_dsn
from flightstate_pg import PgStore
from flightstate_testing.sis import fltr, schd
from tests.codec.oversize import OVERSIZE_CASES, remark
from tests.fixtures.util import unique_name
from tests.runner._cli import run_cli

pytestmark = [pytest.mark.pg, pytest.mark.mysql, pytest.mark.slow]

CREATE = schd("DNLD", *(fltr("<REMC>new</REMC>", flid) for flid in ("9001", "9002")), seqn="1")
TOO_BIG = remark(text="x" * (5 * 1024 * 1024))  # over the 4 MiB message limit


def _ok(*args: str, env: dict[str, str]) -> str:
    result = run_cli(*args, env=env, timeout=600)
    assert result.returncode == 0, f"{args}: {result.stderr[-3000:]}"
    return result.stdout


def _mysql(dsn: str) -> pymysql.connections.Connection[Any]:
    return pymysql.connect(autocommit=True, **parse_mysql_dsn(dsn))


def test_poison_rows_end_dead_and_the_fifo_moves_on(pg_db: str, mysql_dsn: str) -> None:
    table = unique_name("cmin")
    env = {"FLIGHTSTATE_PG_DSN": pg_db, "FLIGHTSTATE_MYSQL_DSN": mysql_dsn,
           "FLIGHTSTATE_INBOX_TABLE": table, "FLIGHTSTATE_POLL_INTERVAL": "0.1",
           "FLIGHTSTATE_BATCH_SIZE": "7"}  # fmt: skip
    _ok("migrate", env=env)
    _ok("inbox-init", env=env)
    raws, expected = [CREATE], {0: None}
    poison = [(name, raw, xpath) for name, raw, xpath in OVERSIZE_CASES]
    poison.append(("over_the_message_limit", TOO_BIG, "/"))
    for number, (_name, raw, xpath) in enumerate(poison, 2):
        expected[len(raws)] = xpath
        raws.append(raw)
        expected[len(raws)] = None
        raws.append(remark(flid="9001", text=f"after {number}", seqn=str(number)))
    conn = _mysql(mysql_dsn)
    try:
        ids = insert_messages(conn, raws, table=table, chunk=5)
    finally:
        conn.close()

    _ok("run", "--until-idle", env=env)

    with psycopg.connect(pg_db) as pg:
        found = pg.execute("SELECT MESSAGE_ID, STATUS, REASON, BACKFILL_STATUS FROM PROC_STATE")
        procs = {row[0]: row[1:] for row in found.fetchall()}
    assert sorted(procs) == ids
    for index, xpath in expected.items():
        status, reason, backfill = procs[ids[index]]
        assert backfill == "DONE", (index, status, reason)
        if xpath is None:
            assert status == "SUCCEEDED", (index, reason)
        else:
            assert status == "DEAD", (poison[(index - 1) // 2][0], status)
            assert reason.startswith(f"{xpath}: "), (poison[(index - 1) // 2][0], reason)
    conn = _mysql(mysql_dsn)
    try:
        with conn.cursor() as cur:
            cur.execute(f"SELECT CMINMSGS_ID, CMINMSGS_STATUS, CMINMSGS_DATE_PROCESSED "
                        f"FROM `{table}` ORDER BY CMINMSGS_ID")  # fmt: skip
            inbox = list(cur.fetchall())
    finally:
        conn.close()
    assert [row[0] for row in inbox] == ids
    assert all(row[1] == procs[row[0]][0] and row[2] is not None for row in inbox)
    store = PgStore(pg_db)
    try:
        flight = store.get_flights(["9001"])["9001"]
    finally:
        store.close()
    assert flight.scalars["REMC"] == f"after {len(poison) + 1}"
