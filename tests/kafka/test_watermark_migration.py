"""Migration 0004 (OUTBOX_WATERMARK) on databases that already have outbox rows: the
initial watermark, nothing already dispatched is sent again, and the rollback."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from yoyo import get_backend, read_migrations

from flightstate_kafka import KafkaSettings
from flightstate_pg.migrate import MIGRATIONS_DIR, migrate, yoyo_url
from flightstate_pg.outbox import PgOutbox
from tests.kafka._consume import drain, read_until
from tests.kafka._outbox_db import insert_rows, watermark

pytestmark = pytest.mark.pg

BEFORE = "0003_lifecycle_requests"
WATERMARK = "0004_outbox_watermark"


def fill_v3(dsn: str, rows: int, dispatched: set[int]) -> None:
    """Migrate to 0003 and insert *rows* msg rows (ids 1..rows, one key each); mark the
    ids in *dispatched* as the pre-0004 dispatcher did (DISPATCHED_AT)."""
    assert migrate(dsn, target=BEFORE)[-1] == BEFORE
    insert_rows(
        dsn, [("msg", f"K{n}", f'{{"n":{n}}}', f"K{n}", 1, "NOTIFY", n) for n in range(1, rows + 1)]
    )
    with psycopg.connect(dsn) as conn:
        conn.execute(
            "UPDATE msg_event SET dispatched_at = now() - interval '1 hour' "
            "WHERE event_id = ANY(%s)",
            (sorted(dispatched),),
        )


def rollback_watermark(dsn: str) -> None:
    """Roll migration 0004 back with yoyo (its .rollback.sql); later ones are not applied."""
    migrations = read_migrations(str(MIGRATIONS_DIR))
    backend = get_backend(yoyo_url(dsn))
    try:
        with backend.lock():
            backend.rollback_migrations(migrations.filter(lambda m: m.id == WATERMARK))
    finally:
        backend.connection.close()


@pytest.mark.parametrize(
    ("rows", "dispatched", "expected"),
    [
        (0, set(), 0),  # empty outbox
        (6, set(), 0),  # nothing dispatched yet
        (6, {1, 2, 3, 4, 5, 6}, 6),  # everything dispatched
        (10, {1, 2, 3, 4, 6, 7}, 4),  # just below the oldest undispatched row
        (10, {2, 3}, 0),  # the first row is undispatched
    ],
)
def test_initial_watermark_from_existing_rows(
    pg_db: str, rows: int, dispatched: set[int], expected: int
) -> None:
    fill_v3(pg_db, rows, dispatched)
    assert migrate(pg_db, target=WATERMARK) == [WATERMARK]
    assert watermark(pg_db) == expected
    outbox = PgOutbox(pg_db)
    try:
        pending = [r.event_id for r in outbox.fetch_undelivered(100)]
        backlog = outbox.backlog()
    finally:
        outbox.close()
    # Rows the old dispatcher marked are never read again, even above the watermark.
    assert pending == [n for n in range(1, rows + 1) if n not in dispatched]
    assert backlog.count == len(pending)


def test_watermark_after_a_purged_prefix(pg_db: str) -> None:
    fill_v3(pg_db, 8, {1, 2, 3, 4, 5, 6})
    with psycopg.connect(pg_db) as conn:
        conn.execute("DELETE FROM msg_event WHERE event_id <= 3")  # purged by the old code
    migrate(pg_db, target=WATERMARK)
    assert watermark(pg_db) == 6


@pytest.mark.kafka
def test_upgrade_sends_only_what_was_not_dispatched_then_rolls_back(
    pg_db: str, settings: KafkaSettings
) -> None:
    from flightstate_kafka import Dispatcher  # noqa: PLC0415

    fill_v3(pg_db, 10, {1, 2, 3, 4, 6, 7})
    migrate(pg_db, target=WATERMARK)
    outbox = PgOutbox(pg_db)
    dispatcher = Dispatcher(outbox, settings)
    try:
        assert drain(dispatcher) == 4
    finally:
        dispatcher.close()
        outbox.close()
    assert watermark(pg_db) == 10

    def four(records: list[Any]) -> bool:
        return len(records) >= 4

    sent = read_until(settings.bootstrap_servers, settings.topics["msg"], four)
    assert sorted(int(dict(r.headers())["event-id"]) for r in sent) == [5, 8, 9, 10]

    # Back to 0003: the old dispatcher reads DISPATCHED_AT, so the rollback writes it.
    rollback_watermark(pg_db)
    with psycopg.connect(pg_db) as conn:
        undispatched = conn.execute(
            "SELECT count(*) FROM msg_event WHERE dispatched_at IS NULL"
        ).fetchone()
        table = conn.execute("SELECT to_regclass('outbox_watermark')").fetchone()
    assert undispatched == (0,)
    assert table == (None,)
    assert migrate(pg_db, target=WATERMARK) == [WATERMARK]  # forward again: nothing to send
    assert watermark(pg_db) == 10
