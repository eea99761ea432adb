"""Commit notifications on a real PostgreSQL: NOTIFY is sent inside the writing transaction,
so a listener hears a commit that wrote events, and nothing of a rollback."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from flightstate_core.domain.config import CoreConfig
from flightstate_core.testing.store_contract import flight, processed
from flightstate_pg import PgStore
from flightstate_pg.outbox import DEFAULT_CHANNEL, OutboxListener

pytestmark = pytest.mark.pg

_DEADLINE_S = 10.0


@pytest.fixture
def store(pg_store_dsn: str) -> Iterator[PgStore]:
    pg = PgStore(pg_store_dsn, CoreConfig())
    yield pg
    pg.close()


@pytest.fixture
def listening(pg_store_dsn: str) -> Iterator[psycopg.Connection[Any]]:
    """A plain connection that LISTENs on the default outbox channel."""
    with psycopg.connect(pg_store_dsn, autocommit=True) as conn:
        conn.execute(f"LISTEN {DEFAULT_CHANNEL}")
        yield conn


class _Wakes:
    """Counts ``wake`` calls (from the listener's thread)."""

    def __init__(self) -> None:
        self.count = 0
        self.changed = threading.Condition()

    def __call__(self) -> None:
        with self.changed:
            self.count += 1
            self.changed.notify_all()

    def wait_beyond(self, count: int) -> int:
        with self.changed:
            self.changed.wait_for(lambda: self.count > count, timeout=_DEADLINE_S)
            return self.count


def _wait_for(condition: Any) -> None:
    deadline = time.monotonic() + _DEADLINE_S
    while not condition():
        assert time.monotonic() < deadline, "condition not met before the deadline"
        time.sleep(0.01)


def test_commit_notifies_and_rollback_does_not(
    store: PgStore, listening: psycopg.Connection[Any]
) -> None:
    with pytest.raises(RuntimeError), store.transaction() as tx:  # noqa: PT012 - the tx
        tx.lock_pipeline(None)
        tx.save(processed(1, flight("A")))
        raise RuntimeError("rolled back after the save")
    with store.transaction() as tx:  # a commit without outbox events: nothing to wake for
        tx.lock_pipeline(None)
        tx.save(processed(2))
    assert list(listening.notifies(timeout=1.0)) == []
    with store.transaction() as tx:
        tx.lock_pipeline(None)
        tx.save_many([processed(3, flight("A", 3)), processed(4, flight("B", 4))])
        tx.save(processed(5, flight("C", 5)))
    heard = list(listening.notifies(timeout=_DEADLINE_S, stop_after=1))
    assert [n.channel for n in heard] == [DEFAULT_CHANNEL]
    # Identical notifications of one transaction arrive once: one commit, one wake-up.
    assert list(listening.notifies(timeout=0.5)) == []


def test_listener_wakes_on_another_connections_commit(store: PgStore, pg_store_dsn: str) -> None:
    wakes = _Wakes()
    listener = OutboxListener(pg_store_dsn, wakes)
    listener.start()
    try:
        _wait_for(listener.listening.is_set)
        after_connect = wakes.wait_beyond(0)  # one wake right after LISTEN (missed commits)
        assert after_connect == 1
        with store.transaction() as tx:
            tx.lock_pipeline(None)
            tx.save(processed(1, flight("A")))
        assert wakes.wait_beyond(after_connect) == after_connect + 1
    finally:
        listener.close()


def test_listener_reconnects_and_wakes_after_its_session_is_killed(
    store: PgStore, pg_store_dsn: str
) -> None:
    wakes = _Wakes()
    listener = OutboxListener(pg_store_dsn, wakes, retry_s=0.1)
    listener.start()
    try:
        _wait_for(listener.listening.is_set)
        first = wakes.wait_beyond(0)
        with psycopg.connect(pg_store_dsn, autocommit=True) as admin:
            killed = admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND query LIKE 'LISTEN%%'"
            ).fetchall()
        assert killed == [(True,)]
        reconnected = wakes.wait_beyond(first)  # the wake after the new LISTEN
        assert reconnected > first
        _wait_for(listener.listening.is_set)
        with store.transaction() as tx:
            tx.lock_pipeline(None)
            tx.save(processed(1, flight("A")))
        assert wakes.wait_beyond(reconnected) > reconnected
    finally:
        listener.close()


def test_a_store_without_a_channel_sends_no_notify_and_a_named_channel_is_used(
    pg_store_dsn: str, listening: psycopg.Connection[Any]
) -> None:
    quiet = PgStore(pg_store_dsn, CoreConfig(), notify_channel=None)
    named = PgStore(pg_store_dsn, CoreConfig(), notify_channel="fs_other")
    try:
        listening.execute("LISTEN fs_other")
        with quiet.transaction() as tx:  # events written, but nobody is told
            tx.lock_pipeline(None)
            tx.save_many([processed(1, flight("A")), processed(2, flight("B", 2))])
            tx.save(processed(3, flight("C", 3)))
        assert list(listening.notifies(timeout=1.0)) == []
        with named.transaction() as tx:
            tx.lock_pipeline(None)
            tx.save(processed(4, flight("D", 4)))
        heard = list(listening.notifies(timeout=_DEADLINE_S, stop_after=1))
        assert [n.channel for n in heard] == ["fs_other"]
    finally:
        quiet.close()
        named.close()
