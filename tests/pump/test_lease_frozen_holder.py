"""A standby behind an expired holder frozen inside a transaction (PgLeaderLease).

The frozen holder is played by a real session that took the PIPELINE_LOCK row FOR UPDATE
and then sends nothing: either between a pipeline's queries and its Sync (no server timer
runs there) or idle after a Sync. Every session here has a 0.5 s ``lock_timeout`` and no
idle-in-transaction timeout, so only the standby can end the wait.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from flightstate_core.domain.errors import TransientError
from flightstate_pg.lease import PgLeaderLease
from flightstate_pg.session import SessionLimits, holder_application_name, with_session_limits

pytestmark = pytest.mark.pg

_LIMITS = SessionLimits(lock_timeout=0.5, idle_in_transaction=0, statement_timeout=0)
_TAKE_ROW = "SELECT EPOCH FROM PIPELINE_LOCK WHERE LOCK_NAME = 'pipeline' FOR UPDATE"


def _dsn(base: str, app: str = "") -> str:
    return with_session_limits(base, _LIMITS, application_name=app)


@contextmanager
def _holding_in_pipeline(dsn: str) -> Iterator[psycopg.Connection]:
    """A session that ran the lock query inside a pipeline and has not sent its Sync."""
    conn = psycopg.connect(dsn)
    pipeline = conn.pipeline()
    pipeline.__enter__()
    conn.execute(_TAKE_ROW)
    conn.pgconn.flush()
    try:
        yield conn
    finally:
        conn.close()  # without leaving the pipeline: the session may be gone already


def _session_count(dsn: str, app: str) -> int:
    with psycopg.connect(dsn, autocommit=True) as probe:
        row = probe.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s "
                            "AND datname = current_database()", (app,)).fetchone()  # fmt: skip
    assert row is not None
    return int(row[0])


def _wait_until_holding(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as probe:
        for _ in range(200):
            probe.execute("BEGIN")
            try:
                probe.execute("SELECT 1 FROM PIPELINE_LOCK FOR UPDATE NOWAIT")
            except psycopg.errors.LockNotAvailable:
                probe.execute("ROLLBACK")
                return
            probe.execute("ROLLBACK")
        raise AssertionError("the frozen session never took the row")


def test_standby_ends_a_holder_frozen_inside_a_pipeline(migrated_pg: str) -> None:
    first, second = PgLeaderLease(_dsn(migrated_pg)), PgLeaderLease(_dsn(migrated_pg))
    frozen_app = holder_application_name(first.stored_holder("a"))
    old = first.try_acquire("a", 0)  # expired at once
    assert old is not None
    with _holding_in_pipeline(_dsn(migrated_pg, frozen_app)) as frozen:
        _wait_until_holding(migrated_pg)
        assert second.try_acquire("b", 30) == old + 1
        assert second.status() == (old + 1, second.stored_holder("b"), True)
        assert _session_count(migrated_pg, frozen_app) == 0
        with pytest.raises(psycopg.OperationalError):
            # Its transaction is gone, never to commit. In pipeline mode ``execute`` only
            # queues the query, and whether it already sees the closed socket is a race
            # (seen in CI not to raise); fetching the answer waits for the server's.
            frozen.execute("SELECT 1").fetchone()
    assert first.try_acquire("a", 30) is None  # and it does not lead again


def test_standby_ends_a_holder_idle_after_sync(migrated_pg: str) -> None:
    first, second = PgLeaderLease(_dsn(migrated_pg)), PgLeaderLease(_dsn(migrated_pg))
    frozen_app = holder_application_name(first.stored_holder("a"))
    old = first.try_acquire("a", 0)
    assert old is not None
    with psycopg.connect(_dsn(migrated_pg, frozen_app)) as frozen:
        frozen.execute(_TAKE_ROW)  # idle in transaction, holding the row
        assert second.try_acquire("b", 30) == old + 1
        with pytest.raises(psycopg.OperationalError):
            frozen.execute("SELECT 1")


def test_sessions_named_otherwise_are_left_alone(migrated_pg: str) -> None:
    """Not the holder's name: nothing is ended and the standby keeps waiting (transient)."""
    first, second = PgLeaderLease(_dsn(migrated_pg)), PgLeaderLease(_dsn(migrated_pg))
    old = first.try_acquire("a", 0)
    assert old is not None
    with _holding_in_pipeline(_dsn(migrated_pg, "someone else")):
        _wait_until_holding(migrated_pg)
        with pytest.raises(TransientError, match="55P03"):
            second.try_acquire("b", 30)
        assert _session_count(migrated_pg, "someone else") == 1
    assert second.status() == (old, first.stored_holder("a"), False)


def test_sessions_of_another_instance_with_the_same_name_are_left_alone(
    migrated_pg: str,
) -> None:
    """Only the expired *instance's* sessions are ended: a session of another process
    started with the same holder name (another instance) may hold the row, and is left."""
    expired, twin = PgLeaderLease(_dsn(migrated_pg)), PgLeaderLease(_dsn(migrated_pg))
    standby = PgLeaderLease(_dsn(migrated_pg))
    twin_app = holder_application_name(twin.stored_holder("a"))
    assert twin_app != holder_application_name(expired.stored_holder("a"))
    old = expired.try_acquire("a", 0)
    assert old is not None
    with _holding_in_pipeline(_dsn(migrated_pg, twin_app)):
        _wait_until_holding(migrated_pg)
        with pytest.raises(TransientError, match="55P03"):
            standby.try_acquire("b", 30)
        assert _session_count(migrated_pg, twin_app) == 1
    assert standby.status() == (old, expired.stored_holder("a"), False)


def test_a_live_holder_is_never_ended(migrated_pg: str) -> None:
    """An unexpired lease: the standby does not even queue for the row."""
    first, second = PgLeaderLease(_dsn(migrated_pg)), PgLeaderLease(_dsn(migrated_pg))
    live_app = holder_application_name(first.stored_holder("a"))
    epoch = first.try_acquire("a", 30)
    with _holding_in_pipeline(_dsn(migrated_pg, live_app)):
        _wait_until_holding(migrated_pg)
        assert second.try_acquire("b", 30) is None
        assert _session_count(migrated_pg, live_app) == 1
    assert first.try_acquire("a", 30) == epoch


def test_idle_sessions_of_the_expired_holder_are_left_alone(migrated_pg: str) -> None:
    """Only sessions inside a transaction that has an xid can hold the row; a session of
    the expired holder outside any transaction is not ended."""
    first, second = PgLeaderLease(_dsn(migrated_pg)), PgLeaderLease(_dsn(migrated_pg))
    frozen_app = holder_application_name(first.stored_holder("a"))
    old = first.try_acquire("a", 0)
    assert old is not None
    with psycopg.connect(_dsn(migrated_pg, frozen_app), autocommit=True) as idle, \
            _holding_in_pipeline(_dsn(migrated_pg, frozen_app)):  # fmt: skip
        _wait_until_holding(migrated_pg)
        assert second.try_acquire("b", 30) == old + 1
        assert idle.execute("SELECT 1").fetchone() == (1,)


def test_a_standby_not_allowed_to_end_it_keeps_waiting(
    migrated_pg: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A standby whose role may not see or signal the holder's backends (not a member of its
    role, no pg_read_all_stats / pg_signal_backend): a warning, and the wait stays transient."""
    role = f"fs_weak_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(migrated_pg, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        admin.execute(sql.SQL("GRANT SELECT, INSERT, UPDATE ON PIPELINE_LOCK TO {}")
                      .format(sql.Identifier(role)))  # fmt: skip
    try:
        weak = conninfo_to_dict(_dsn(migrated_pg))
        weak["user"] = role
        first = PgLeaderLease(_dsn(migrated_pg))
        second = PgLeaderLease(make_conninfo(**weak))
        old = first.try_acquire("a", 0)
        assert old is not None
        frozen_app = holder_application_name(first.stored_holder("a"))
        with _holding_in_pipeline(_dsn(migrated_pg, frozen_app)):
            _wait_until_holding(migrated_pg)
            with caplog.at_level("WARNING"), pytest.raises(TransientError, match="55P03"):
                second.try_acquire("b", 30)
            assert _session_count(migrated_pg, frozen_app) == 1
        expired = first.stored_holder("a")
        assert f"no session of expired holder {expired!r} could be ended" in caplog.text
        second.close()
    finally:
        with psycopg.connect(migrated_pg, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
            admin.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))
