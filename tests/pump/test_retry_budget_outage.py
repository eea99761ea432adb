"""An outage of the store spends no retry budget (docs/design.md, "A retry budget for the
head message"): a private PostgreSQL (the store and the lease; the inbox stays on the
shared MariaDB, as in a deployment) is cut for 30 s while the head message is retried,
with a budget of 3 attempts / 1 s, far shorter than the outage. Every failure then finds
the health probe failing too (or its session lost), so nothing is made DEAD, and every
message is applied, with the outcomes a run without an outage gives, once the store is
back (the generated day holds a few broken messages: DEAD with or without an outage).
Only this test's own server is crashed and restarted (``EmbeddedPostgres.crash``)."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest

import flightstate_pg
from flightstate_core.domain.config import CoreConfig
from flightstate_core.memory import MemoryInbox, MemoryStore
from flightstate_core.pump import Backoff, Pump, PumpSettings, ServiceProcessor
from flightstate_mysql import MySqlInbox
from flightstate_pg import PgStore
from flightstate_pg.lease import PgLeaderLease
from flightstate_testing.pumping import pump_until_idle
from flightstate_testing.traffic import generate_day
from tests.fixtures import postgres
from tests.fixtures.util import unique_name
from tests.pump.harness import fill_mysql_inbox, mysql_conn

pytestmark = [pytest.mark.pg, pytest.mark.mysql, pytest.mark.slow]

OUTAGE_S = 30.0  # the acceptance figure; the budget below is 1 s
BUDGET = {"retry_budget_attempts": 3, "retry_budget_seconds": 1.0}
RAWS = generate_day(29, flights=8, messages=60)
FIRST = 30  # applied before the outage; the rest arrive while the store is down


def _reference() -> list[str]:
    """The outcome of each message, in id order, from a run without an outage."""
    inbox = MemoryInbox()
    for raw in RAWS:
        inbox.append(raw)
    run = pump_until_idle(MemoryStore(), inbox)
    return [run.outcomes[mid].value for mid in sorted(inbox.rows)]


def _outcomes(dsn: str) -> list[tuple[str, str]]:
    """(status, reason) of each message, in id order."""
    with psycopg.connect(dsn, connect_timeout=5) as conn:
        rows = conn.execute("SELECT STATUS, coalesce(REASON, '') FROM PROC_STATE"
                            " ORDER BY MESSAGE_ID").fetchall()  # fmt: skip
    return [(str(status), str(reason)) for status, reason in rows]


def _applied(dsn: str) -> int:
    try:
        return len(_outcomes(dsn))
    except psycopg.OperationalError:
        return -1  # down


def _wait(check: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def test_a_30_s_outage_with_a_1_s_budget_makes_nothing_dead(
    private_pg: tuple[postgres.EmbeddedPostgres, str], mysql_dsn: str
) -> None:
    server, dsn = private_pg  # the plugin's: a server of this test's own
    flightstate_pg.migrate(dsn)
    table = unique_name("cmin")
    fill_mysql_inbox(mysql_dsn, table, RAWS[:FIRST])
    store = PgStore(dsn, CoreConfig(), inbox_name=table)
    inbox = MySqlInbox(mysql_dsn, table=table)
    lease = PgLeaderLease(dsn)
    pump = Pump(processor=ServiceProcessor(store, CoreConfig()), inbox=inbox, lease=lease,
                backfills=store, read_cursor=store.inbox_cursor,
                settings=PumpSettings(holder=unique_name("outage"), batch_size=20,
                                      lease_ttl=5.0, renew_every=1.0, idle_poll=0.05,
                                      retry=Backoff(0.05, 1.0), **BUDGET))  # type: ignore[arg-type]  # fmt: skip
    thread = threading.Thread(target=pump.run, daemon=True)
    thread.start()
    seen_failing: list[tuple[int, int]] = []  # (attempts, counted) while the store was down
    try:
        _wait(lambda: _applied(dsn) == FIRST, 60, "the first messages")
        server.crash()
        assert store.ping() is False  # the probe fails during the outage
        _insert(mysql_dsn, table, RAWS[FIRST:])
        down_until = time.monotonic() + OUTAGE_S
        while time.monotonic() < down_until:
            stats = pump.stats
            if stats.head_failing is not None:
                seen_failing.append((stats.head_attempts, stats.head_budget_attempts))
            time.sleep(0.1)
        server.restart()
        assert store.ping() is True
        _wait(lambda: _applied(dsn) == len(RAWS), 120, "every message after the outage")
    finally:
        pump.request_stop()
        thread.join(30)
        for closer in (store, inbox, lease):
            closer.close()
    assert not thread.is_alive()
    outcomes = _outcomes(dsn)
    # DEAD only where the messages themselves are broken (as without an outage)
    assert [reason for _, reason in outcomes if reason.startswith("retry budget")] == []
    assert [status for status, _ in outcomes] == _reference()
    # the head was retried through the outage (many attempts), and none of them counted
    assert seen_failing, "the outage never reached the head message"
    assert max(attempts for attempts, _ in seen_failing) > BUDGET["retry_budget_attempts"]
    assert {counted for _, counted in seen_failing} == {0}
    assert pump.stats.budget_dead == 0


def _insert(mysql_dsn: str, table: str, raws: list[str]) -> None:
    from flightstate_mysql import insert_messages  # noqa: PLC0415

    conn = mysql_conn(mysql_dsn)
    try:
        insert_messages(conn, raws, table=table)
    finally:
        conn.close()
