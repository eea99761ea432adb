"""Random histories through the service on the memory store and on PostgreSQL: the same
states, events, PROC_STATE rows, cursor and snap log (the memory store is the model)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.errors import FlightstateError
from flightstate_core.domain.layout import DETAIL_TABLES
from flightstate_core.domain.wire import wire
from flightstate_core.engine.service import process_message
from flightstate_core.engine.unit_of_work import Work, apply_locked, locked_transaction
from flightstate_core.memory import MemoryStore
from flightstate_pg import PgStore
from flightstate_testing.histories import Step, histories
from flightstate_testing.postgres import orphan_detail_rows
from flightstate_testing.replay import apply_batched, history_rows

pytestmark = pytest.mark.pg

CONFIG = CoreConfig()
NOW = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
# Function-scoped database, reset per example by _reset (TRUNCATE), so the check is moot.
_SUPPRESS = (HealthCheck.function_scoped_fixture, HealthCheck.too_slow)
# The detail tables by name: they hold no foreign key that a CASCADE would follow.
_TABLES = ", ".join(
    ("FLIGHT_SCHD", *DETAIL_TABLES, "MSG_EVENT", "PROC_STATE", "INBOX_CURSOR", "SCHD_SNAP_LOG")
)


@pytest.fixture
def pg_store(fresh_pg: str) -> Iterator[PgStore]:
    store = PgStore(fresh_pg)
    store.dsn = fresh_pg  # type: ignore[attr-defined]
    yield store
    store.close()


def _reset(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"TRUNCATE {_TABLES} RESTART IDENTITY CASCADE")


def _run(store: Any, history: list[Step]) -> list[str]:
    outcomes = []
    for row, message in history_rows(history, NOW):
        try:
            done = process_message(store, row, CONFIG, now=NOW, epoch=None, decoded=message)
        except FlightstateError as exc:
            outcomes.append(f"error {type(exc).__name__}")
            continue
        outcomes.append("replay" if done is None else done.proc.status.value)
    return outcomes


def _pg_events(dsn: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(dsn) as conn:
        return conn.execute(
            "SELECT TOPIC, EVENT_KEY, PAYLOAD, FLID, STATE_VERSION, MESSAGE_ID FROM MSG_EVENT "
            "ORDER BY EVENT_ID"
        ).fetchall()


def _memory_events(store: MemoryStore) -> list[tuple[Any, ...]]:
    return [
        (e.topic, e.key, None if e.payload is None else e.payload.decode(), e.flid,
         e.state_version, e.message_id)
        for e in store.events()
    ]  # fmt: skip


@settings(max_examples=20, deadline=None, suppress_health_check=_SUPPRESS)
@given(history=histories(max_size=15))
def test_same_history_same_store_content(pg_store: PgStore, history: list[Step]) -> None:
    _reset(pg_store.dsn)  # type: ignore[attr-defined]
    memory = MemoryStore()
    assert _run(pg_store, history) == _run(memory, history)
    assert list(pg_store.iter_flights(page_size=3)) == list(memory.iter_flights())
    assert _pg_events(pg_store.dsn) == _memory_events(memory)  # type: ignore[attr-defined]
    ids = range(1, len(history) + 2)
    with pg_store.transaction() as tx:
        tx.lock_pipeline(None)
        assert [tx.get_proc(i) for i in ids] == [memory.proc(i) for i in ids]
    assert pg_store.inbox_cursor() == memory.inbox_cursor()
    assert pg_store.pending_backfills(100) == memory.pending_backfills(100)
    assert orphan_detail_rows(pg_store.dsn) == {}  # type: ignore[attr-defined]
    _assert_read_after_write_is_the_wire(pg_store)


def _assert_read_after_write_is_the_wire(store: PgStore) -> None:
    """Review F5: the last snapshot event of a flight is exactly wire(state read back)."""
    last: dict[str, tuple[int, str | None]] = {}
    events = _pg_events(store.dsn)  # type: ignore[attr-defined]
    for topic, key, payload, _flid, version, _mid in events:
        if topic == "schd":
            last[key] = (version, payload)
    for state in store.iter_flights():
        if state.flid in last and last[state.flid][0] == state.version and not state.is_deleted:
            assert last[state.flid][1] == wire(state, CONFIG).decode()


@settings(max_examples=10, deadline=None, suppress_health_check=_SUPPRESS)
@given(history=histories(max_size=20))
def test_one_transaction_with_savepoints_equals_one_by_one(
    pg_store: PgStore, history: list[Step]
) -> None:
    """Many messages in one transaction, a savepoint each (process_batch's shape, with the
    store's cache of loaded/saved states) end where the memory store does one by one."""
    _reset(pg_store.dsn)  # type: ignore[attr-defined]
    memory = MemoryStore()
    _run(memory, history)
    with locked_transaction(pg_store, None) as tx:
        for row, message in history_rows(history, NOW):
            try:
                with tx.savepoint():
                    apply_locked(tx, [Work(row, message)], CONFIG, now=NOW)
            except FlightstateError:
                continue  # rolled back to its savepoint; the memory run saw the same error
    assert list(pg_store.iter_flights(page_size=4)) == list(memory.iter_flights())
    assert _pg_events(pg_store.dsn) == _memory_events(memory)  # type: ignore[attr-defined]


def _run_batched(store: PgStore, history: list[Step], size: int) -> None:
    """The batch engine in chunks of ``size``; a chunk that fails goes one by one (the
    pump's fallback)."""
    apply_batched(store, history, CONFIG, NOW, size)


@settings(max_examples=15, deadline=None, suppress_health_check=_SUPPRESS)
@given(history=histories(max_size=25), size=st.integers(1, 12))
def test_batch_engine_equals_one_by_one(pg_store: PgStore, history: list[Step], size: int) -> None:
    """Batch-level reads and one write per batch (engine.unit_of_work) on PostgreSQL end
    exactly where the memory store ends one message at a time: states, events, PROC_STATE,
    cursor."""
    _reset(pg_store.dsn)  # type: ignore[attr-defined]
    memory = MemoryStore()
    _run(memory, history)
    _run_batched(pg_store, history, size)
    assert list(pg_store.iter_flights(page_size=4)) == list(memory.iter_flights())
    assert _pg_events(pg_store.dsn) == _memory_events(memory)  # type: ignore[attr-defined]
    ids = range(1, len(history) + 2)
    with pg_store.transaction() as tx:
        tx.lock_pipeline(None)
        assert [tx.get_proc(i) for i in ids] == [memory.proc(i) for i in ids]
    assert pg_store.inbox_cursor() == memory.inbox_cursor()
    _assert_read_after_write_is_the_wire(pg_store)
