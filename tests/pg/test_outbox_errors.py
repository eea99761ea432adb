"""The outbox's driver errors go through the package's one classifier (``_errors``), on
real failures: a killed session is transient and the next call reconnects; using a closed
cursor (``InterfaceError``) is transient; a missing watermark row and a refused statement
are permanent."""

from __future__ import annotations

from datetime import UTC, datetime

import psycopg
import pytest

from flightstate_core.domain.errors import PermanentError, TransientError
from flightstate_pg._errors import classify
from flightstate_pg.outbox import PgOutbox

pytestmark = pytest.mark.pg


def test_interface_error_is_transient(pg_store_dsn: str) -> None:
    """A closed connection or cursor: the adapters reconnect on the retry, so it is one a
    retry can cure (and a good message is never recorded DEAD for a client-side fault)."""
    with psycopg.connect(pg_store_dsn, autocommit=True) as conn:
        cursor = conn.cursor()
        cursor.close()
        with pytest.raises(psycopg.InterfaceError) as caught:
            cursor.execute("SELECT 1")
    assert isinstance(classify(caught.value), TransientError)


def test_a_killed_outbox_session_is_transient_and_the_next_call_reconnects(
    pg_store_dsn: str,
) -> None:
    outbox = PgOutbox(pg_store_dsn, outbox_name="kafka")
    try:
        assert outbox.watermark() == 0
        with psycopg.connect(pg_store_dsn, autocommit=True) as admin:
            killed = admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            ).fetchall()
        assert (True,) in killed
        with pytest.raises(TransientError, match="reading the outbox watermark"):
            outbox.watermark()
        assert outbox.watermark() == 0  # a new session
        assert outbox.backlog().count == 0
    finally:
        outbox.close()


def test_a_missing_watermark_row_and_a_refused_statement_are_permanent(pg_store_dsn: str) -> None:
    outbox = PgOutbox(pg_store_dsn, outbox_name="nobody")
    try:
        with pytest.raises(PermanentError, match="migration 0004"):
            outbox.fetch_rows(10)
        with pytest.raises(PermanentError, match="purging dispatched events: PostgreSQL 2201W"):
            outbox.purge_dispatched(datetime(2100, 1, 1, tzinfo=UTC), -1)  # LIMIT -1
    finally:
        outbox.close()
