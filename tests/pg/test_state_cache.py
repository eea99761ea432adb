"""The writer's cache of committed states (flightstate_pg/_cache.py) is never stale: other
writers, deleted rows and rolled-back transactions are all seen inside the lock."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import psycopg
import pytest

from flightstate_core import service
from flightstate_core.config import CoreConfig
from flightstate_core.messages import Message
from flightstate_core.ports import StateTransaction
from flightstate_core.records import InboxRow, ProcessedMessage
from flightstate_core.state import FlightState
from flightstate_pg import PgStore

pytestmark = pytest.mark.pg

CONFIG = CoreConfig()
NOW = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def _flop(styp: str, flid: str, body: str, seqn: int) -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8"?><MSG><META><SNDR>AODB</SNDR>'
        f"<SEQN>{seqn}</SEQN><DTTM>20261130090000</DTTM><TYPE>FLOP</TYPE><STYP>{styp}</STYP>"
        f"</META><FLOP><FLID>{flid}</FLID>{body}</FLOP></MSG>"
    )


@pytest.fixture
def two_stores(fresh_pg: str) -> Iterator[tuple[PgStore, PgStore]]:
    first, second = PgStore(fresh_pg), PgStore(fresh_pg)
    yield first, second
    first.close()
    second.close()


def _apply(store: PgStore, message_id: int, raw: str) -> None:
    assert service.process_message(store, InboxRow(message_id, raw), CONFIG, now=NOW, epoch=None)


def _state(store: PgStore, flid: str) -> FlightState:
    return store.get_flights([flid])[flid]


def test_another_writer_is_seen(two_stores: tuple[PgStore, PgStore]) -> None:
    first, second = two_stores
    _apply(first, 1, _flop("STND", "F1", "<STND>S1</STND>", 1))
    _apply(second, 2, _flop("RUNW", "F1", "<RUNW>02L</RUNW>", 2))  # first's cache is now old
    _apply(first, 3, _flop("TRML", "F1", "<TRML>T2</TRML>", 3))
    state = _state(first, "F1")
    assert state.scalars == {"STND": "S1", "RUNW": "02L", "TRML": "T2"}
    assert state.version == 3
    assert first.state_cache is not None
    assert first.state_cache.misses >= 1


def test_a_deleted_row_is_seen(two_stores: tuple[PgStore, PgStore], fresh_pg: str) -> None:
    first, _ = two_stores
    _apply(first, 1, _flop("STND", "F1", "<STND>S1</STND>", 1))
    with psycopg.connect(fresh_pg, autocommit=True) as conn:  # e.g. lifecycle cleanup
        conn.execute("DELETE FROM FLIGHT_SCHD WHERE FLID = 'F1'")
    _apply(first, 2, _flop("TRML", "F1", "<TRML>T2</TRML>", 2))
    state = _state(first, "F1")
    assert state.scalars == {"TRML": "T2"}  # created anew, not merged into a ghost
    assert state.version == 1


def test_a_rolled_back_transaction_leaves_the_cache_alone(
    two_stores: tuple[PgStore, PgStore],
) -> None:
    first, _ = two_stores
    _apply(first, 1, _flop("STND", "F1", "<STND>S1</STND>", 1))
    row = InboxRow(2, _flop("RUNW", "F1", "<RUNW>02L</RUNW>", 2))

    def fail_after_save(_tx: StateTransaction, _m: Message, _p: ProcessedMessage) -> None:
        raise RuntimeError("after save")  # inside the transaction, after the save

    with pytest.raises(RuntimeError, match="after save"):
        service.process_message(first, row, CONFIG, now=NOW, epoch=None,
                                after_save=fail_after_save)  # fmt: skip
    _apply(first, 3, _flop("TRML", "F1", "<TRML>T2</TRML>", 3))
    state = _state(first, "F1")
    assert state.scalars == {"STND": "S1", "TRML": "T2"}  # RUNW never committed
    assert state.version == 2


def test_the_cache_is_used_for_unchanged_rows(two_stores: tuple[PgStore, PgStore]) -> None:
    first, _ = two_stores
    _apply(first, 1, _flop("STND", "F1", "<STND>S1</STND>", 1))
    cache = first.state_cache
    assert cache is not None
    hits = cache.hits
    _apply(first, 2, _flop("TRML", "F1", "<TRML>T2</TRML>", 2))
    assert cache.hits == hits + 1
    assert _state(first, "F1").scalars == {"STND": "S1", "TRML": "T2"}
