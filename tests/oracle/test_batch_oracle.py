"""The batch engine (``get_procs``, ``find_duplicates``, ``save_many``) on a real Oracle 11.2.

SKIPPED without ``FLIGHTSTATE_TEST_ORACLE_DSN`` and ``FLIGHTSTATE_ORACLE_CLIENT_DIR``, also
under ``FLIGHTSTATE_REQUIRE_SERVICES=1``: no Oracle 11g can run on this machine or in CI.
Never run here; the pure half of ``save_many`` is covered by ``test_batch_plan``.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import Any

import oracledb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.errors import FlightstateError
from flightstate_core.engine.service import process_message
from flightstate_core.memory import MemoryStore
from flightstate_core.ports import BatchTransaction
from flightstate_core.testing.store_contract import NOW as SAMPLE_TIME
from flightstate_core.testing.store_contract import flight, processed
from flightstate_oracle import OracleOutbox, OracleStore
from flightstate_oracle._presence import decode_text, parse_empty_codes
from flightstate_testing.histories import Step, histories
from flightstate_testing.replay import apply_batched, history_rows
from tests.fixtures.services import ORACLE_SKIP_REASON
from tests.oracle.conftest import empty_store, sql_rows

pytestmark = [
    pytest.mark.oracle,
    pytest.mark.skipif(
        not os.environ.get("FLIGHTSTATE_TEST_ORACLE_DSN"), reason=ORACLE_SKIP_REASON
    ),
]

CONFIG = CoreConfig()
NOW = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
_SUPPRESS = (HealthCheck.function_scoped_fixture, HealthCheck.too_slow)


def _one_by_one(store: Any, history: list[Step]) -> None:
    for row, message in history_rows(history, NOW):
        try:
            process_message(store, row, CONFIG, now=NOW, epoch=None, decoded=message)
        except FlightstateError:
            continue


def _batched(store: OracleStore, history: list[Step], size: int) -> None:
    """The batch engine in chunks of ``size``; a failing chunk goes one by one (the pump)."""
    apply_batched(store, history, CONFIG, NOW, size)


def _events(store: OracleStore) -> list[tuple[Any, ...]]:
    out = []
    for topic, key, payload, flid, version, mid, empty in sql_rows(
        store, "SELECT TOPIC, EVENT_KEY, PAYLOAD, FLID, STATE_VERSION, MESSAGE_ID, EMPTY_CODES "
        "FROM MSG_EVENT ORDER BY EVENT_ID",
    ):  # fmt: skip
        empties = parse_empty_codes(empty)
        out.append((topic, decode_text("EVENT_KEY", key, empties),
                    decode_text("PAYLOAD", payload, empties), flid, version, mid))  # fmt: skip
    return out


def _memory_events(memory: MemoryStore) -> list[tuple[Any, ...]]:
    return [
        (e.topic, e.key, None if e.payload is None else e.payload.decode(), e.flid,
         e.state_version, e.message_id)
        for e in memory.events()
    ]  # fmt: skip


def test_transaction_is_a_batch_transaction(oracle_store: OracleStore) -> None:
    with oracle_store.transaction() as tx:
        assert isinstance(tx, BatchTransaction)


@settings(max_examples=10, deadline=None, suppress_health_check=_SUPPRESS)
@given(history=histories(max_size=20), size=st.integers(1, 10))
def test_batch_engine_equals_one_by_one(
    oracle_pool: oracledb.ConnectionPool, history: list[Step], size: int
) -> None:
    """Batch reads and one write per batch end where the memory model ends one by one."""
    store = empty_store(oracle_pool)
    memory = MemoryStore()
    _one_by_one(memory, history)
    _batched(store, history, size)
    assert list(store.iter_flights(page_size=3)) == list(memory.iter_flights())
    assert _events(store) == _memory_events(memory)
    ids = range(1, len(history) + 2)
    with store.transaction() as tx:
        tx.lock_pipeline(None)
        assert [tx.get_proc(i) for i in ids] == [memory.proc(i) for i in ids]
    assert store.inbox_cursor() == memory.inbox_cursor()


def test_batch_reads_beyond_one_in_list(oracle_store: OracleStore) -> None:
    """250 messages: get_procs and find_duplicates span three IN-list chunks."""
    batch = [processed(i, flight(f"F{i}")) for i in range(1, 251)]
    with oracle_store.transaction() as tx:
        tx.lock_pipeline(None)
        tx.save_many(batch)
    keys = {(p.proc.identity_key or "", p.proc.payload_digest or "") for p in batch}
    with oracle_store.transaction() as tx:
        tx.lock_pipeline(None)
        assert tx.get_procs(range(1, 301)) == set(range(1, 251))
        found = tx.find_duplicates(keys | {("AODB|FLOP|GTDT|999", "nope")})
    assert set(found) == keys
    assert found[("AODB|FLOP|GTDT|7", "d7")] == [(7, SAMPLE_TIME)]
    assert len(oracle_store.get_flights([f"F{i}" for i in range(1, 251)])) == 250
    assert oracle_store.inbox_cursor() == 250
    assert sql_rows(oracle_store, "SELECT COUNT(*) FROM SCHD_SNAP_LOG") == [(250,)]


def test_outbox_watermark(oracle_store: OracleStore) -> None:
    """Read above the watermark, advance over the leading delivered run, purge below it."""
    with oracle_store.transaction() as tx:
        tx.lock_pipeline(None)
        tx.save_many([processed(i, flight(f"W{i}")) for i in range(1, 4)])  # 6 events
    outbox = OracleOutbox(oracle_store.pool)
    events = outbox.fetch_undelivered(100)
    ids = [e.event_id for e in events]
    assert len(ids) == 6
    assert [e.event_id for e in outbox.fetch_undelivered(100, after_event_id=ids[2])] == ids[3:]
    outbox.mark_dispatched([ids[0], ids[1], ids[3]], NOW)  # ids[2] missing: stop at ids[1]
    assert outbox.watermark() == ids[1]
    outbox.advance(ids[0], NOW)  # never back
    assert outbox.watermark() == ids[1]
    backlog = outbox.backlog()
    assert (backlog.count, backlog.watermark) == (4, ids[1])
    assert outbox.purge_dispatched(datetime(2100, 1, 1, tzinfo=UTC), 100) == 2
    assert [e.event_id for e in outbox.fetch_undelivered(100)] == ids[2:]
