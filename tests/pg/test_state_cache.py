"""The writer's cache of committed states (flightstate_pg/_cache.py) is never stale: other
writers, deleted rows and rolled-back transactions are all seen inside the lock."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import psycopg
import pytest

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.messages import Message
from flightstate_core.domain.records import InboxRow, ProcessedMessage
from flightstate_core.domain.state import FlightState
from flightstate_core.engine import service
from flightstate_core.ports import StateTransaction
from flightstate_pg import PgStore
from flightstate_testing.sis import flop

pytestmark = pytest.mark.pg

CONFIG = CoreConfig()
NOW = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
SENT = "20261130090000"  # every message's DTTM


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
    _apply(first, 1, flop("STND", "<STND>S1</STND>", "F1", seqn="1", dttm=SENT))
    _apply(
        second, 2, flop("RUNW", "<RUNW>02L</RUNW>", "F1", seqn="2", dttm=SENT)
    )  # first's cache is now old
    _apply(first, 3, flop("TRML", "<TRML>T2</TRML>", "F1", seqn="3", dttm=SENT))
    state = _state(first, "F1")
    assert state.scalars == {"STND": "S1", "RUNW": "02L", "TRML": "T2"}
    assert state.version == 3
    assert first.state_cache is not None
    assert first.state_cache.misses >= 1


def test_a_deleted_row_is_seen(two_stores: tuple[PgStore, PgStore], fresh_pg: str) -> None:
    first, _ = two_stores
    _apply(first, 1, flop("STND", "<STND>S1</STND>", "F1", seqn="1", dttm=SENT))
    with psycopg.connect(fresh_pg, autocommit=True) as conn:  # e.g. lifecycle cleanup
        conn.execute("DELETE FROM FLIGHT_SCHD WHERE FLID = 'F1'")
    _apply(first, 2, flop("TRML", "<TRML>T2</TRML>", "F1", seqn="2", dttm=SENT))
    state = _state(first, "F1")
    assert state.scalars == {"TRML": "T2"}  # created anew, not merged into a ghost
    assert state.version == 1


def test_a_rolled_back_transaction_leaves_the_cache_alone(
    two_stores: tuple[PgStore, PgStore],
) -> None:
    first, _ = two_stores
    _apply(first, 1, flop("STND", "<STND>S1</STND>", "F1", seqn="1", dttm=SENT))
    row = InboxRow(2, flop("RUNW", "<RUNW>02L</RUNW>", "F1", seqn="2", dttm=SENT))

    def fail_after_save(_tx: StateTransaction, _m: Message, _p: ProcessedMessage) -> None:
        raise RuntimeError("after save")  # inside the transaction, after the save

    with pytest.raises(RuntimeError, match="after save"):
        service.process_message(first, row, CONFIG, now=NOW, epoch=None,
                                after_save=fail_after_save)  # fmt: skip
    _apply(first, 3, flop("TRML", "<TRML>T2</TRML>", "F1", seqn="3", dttm=SENT))
    state = _state(first, "F1")
    assert state.scalars == {"STND": "S1", "TRML": "T2"}  # RUNW never committed
    assert state.version == 2


def test_the_cache_is_used_for_unchanged_rows(two_stores: tuple[PgStore, PgStore]) -> None:
    first, _ = two_stores
    _apply(first, 1, flop("STND", "<STND>S1</STND>", "F1", seqn="1", dttm=SENT))
    cache = first.state_cache
    assert cache is not None
    hits = cache.hits
    _apply(first, 2, flop("TRML", "<TRML>T2</TRML>", "F1", seqn="2", dttm=SENT))
    assert cache.hits == hits + 1
    assert _state(first, "F1").scalars == {"STND": "S1", "TRML": "T2"}


def _fetches(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The FLIDs of every full read (all eleven tables) the writer makes from now on."""
    from flightstate_pg import transaction  # noqa: PLC0415 - the module whose call is counted

    calls: list[list[str]] = []
    real = transaction.fetch_states

    def counted(conn: psycopg.Connection[object], where: tuple[str, str],
                keys: list[str]) -> dict[str, FlightState]:  # fmt: skip
        calls.append(list(keys))
        return real(conn, where, keys)

    monkeypatch.setattr(transaction, "fetch_states", counted)
    return calls


def test_flights_that_do_not_exist_cost_only_the_stamp_read(
    two_stores: tuple[PgStore, PgStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    first, _ = two_stores
    fetches = _fetches(monkeypatch)
    with first.transaction() as tx:
        tx.lock_pipeline(None)
        assert tx.load_flights(["NEW1", "NEW2"]) == {}
        assert tx.load_flights(["NEW2"]) == {}  # known absent inside the transaction
    assert fetches == []


def test_the_probe_reads_only_the_flights_it_cannot_take_from_the_cache(
    two_stores: tuple[PgStore, PgStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """F1 cached and current, F2 written by another store (not in this cache), F3 cached
    but changed since by the other store, F4 absent: only F2 and F3 are read in full."""
    first, second = two_stores
    _apply(first, 1, flop("STND", "<STND>S1</STND>", "F1", seqn="1", dttm=SENT))
    _apply(first, 2, flop("STND", "<STND>S3</STND>", "F3", seqn="2", dttm=SENT))
    _apply(second, 3, flop("RUNW", "<RUNW>02L</RUNW>", "F2", seqn="3", dttm=SENT))
    _apply(second, 4, flop("RUNW", "<RUNW>20R</RUNW>", "F3", seqn="4", dttm=SENT))
    fetches = _fetches(monkeypatch)
    with first.transaction() as tx:
        tx.lock_pipeline(None)
        loaded = tx.load_flights(["F1", "F2", "F3", "F4"])
    assert fetches == [["F2", "F3"]]
    assert loaded == first.get_flights(["F1", "F2", "F3", "F4"])
    assert loaded["F3"].scalars == {"STND": "S3", "RUNW": "20R"}
    assert set(loaded) == {"F1", "F2", "F3"}


def test_a_large_load_reads_in_full_without_probing(
    two_stores: tuple[PgStore, PgStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A package's load (over ``_PROBE_AT_MOST`` flights, most of which exist) skips the
    stamp probe: absent flights are simply not found by the full read."""
    from flightstate_pg.transaction import _PROBE_AT_MOST  # noqa: PLC0415

    first, _ = two_stores
    _apply(first, 1, flop("STND", "<STND>S1</STND>", "F1", seqn="1", dttm=SENT))
    wanted = ["F1", *(f"N{n}" for n in range(_PROBE_AT_MOST + 1))]
    fetches = _fetches(monkeypatch)
    with first.transaction() as tx:
        tx.lock_pipeline(None)
        loaded = tx.load_flights(wanted)
    assert list(loaded) == ["F1"]
    assert fetches == [wanted[1:]]  # F1 came from the cache (validated by its stamp)
