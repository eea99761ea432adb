"""The review cases of the merge semantics (tests/fixtures/review_cases.py) end to end: the
texts inserted into a real MariaDB ``cminmsgs``, ``examples/runner.py run --until-idle`` as
an operator runs it (no Kafka: events stay in the outbox), then every row's backfilled
status, PROC_STATE's reason and the flights read back from PostgreSQL checked exactly as on
the memory store (tests/fixtures/review_cases.py)."""

from __future__ import annotations

import psycopg
import pytest

from flightstate_mysql import insert_messages
from flightstate_pg import PgStore
from tests.fixtures import review_cases
from tests.fixtures.util import unique_name
from tests.pump.harness import inbox_rows, mysql_conn
from tests.runner._cli import run_cli

pytestmark = [pytest.mark.pg, pytest.mark.mysql, pytest.mark.slow]


def _ok(*args: str, env: dict[str, str]) -> None:
    result = run_cli(*args, env=env)
    assert result.returncode == 0, f"{args}: {result.stderr[-3000:]}"


def test_review_cases_through_the_runner(pg_db: str, mysql_dsn: str) -> None:
    table = unique_name("cmin")
    env = {
        "FLIGHTSTATE_PG_DSN": pg_db,
        "FLIGHTSTATE_MYSQL_DSN": mysql_dsn,
        "FLIGHTSTATE_INBOX_TABLE": table,
        "FLIGHTSTATE_POLL_INTERVAL": "0.1",
        "FLIGHTSTATE_LEASE_TTL": "3",
    }
    _ok("migrate", env=env)
    _ok("inbox-init", env=env)
    entries = review_cases.all_raws()
    conn = mysql_conn(mysql_dsn)
    try:
        ids = insert_messages(conn, [raw for _, _, raw in entries], table=table)
    finally:
        conn.close()

    _ok("run", "--until-idle", env=env)

    statuses = {row[0]: (row[1], row[2]) for row in inbox_rows(mysql_dsn, table)}
    assert all(done is not None for _, done in statuses.values())  # every row backfilled
    with psycopg.connect(pg_db) as pg:
        reasons = dict(pg.execute("SELECT MESSAGE_ID, REASON FROM PROC_STATE").fetchall())
    results: dict[str, list[review_cases.Result]] = {}
    for mid, (case, _, _) in zip(ids, entries, strict=True):
        results.setdefault(case.name, []).append((statuses[mid][0], reasons[mid]))
    store = PgStore(pg_db, review_cases.CONFIG)
    try:
        flights = {state.flid: state for state in store.iter_flights()}
    finally:
        store.close()
    review_cases.check_all(results, flights)
