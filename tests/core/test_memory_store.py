"""The in-memory reference store: transactions, savepoints, outbox, backfill queue."""

from __future__ import annotations

from datetime import timedelta

import pytest

from flightstate_core.domain.decision import EventKind, OutboxEvent, Outcome
from flightstate_core.domain.errors import PermanentError
from flightstate_core.domain.records import BackfillIntent, ProcessedMessage, ProcRecord
from flightstate_core.memory import MemoryInbox, MemoryStore

from .helpers import NOW, flight


def processed(mid: int, *flids: str) -> ProcessedMessage:
    proc = ProcRecord(
        mid, f"K|{mid}", "d", "FLOP", "STND", Outcome.SUCCEEDED, None, 1, NOW, NOW, dttm=NOW
    )
    states = {f: flight(f, version=mid) for f in flids}
    events = tuple(OutboxEvent("schd", f, b"{}", f, mid, EventKind.SNAPSHOT) for f in flids)
    return ProcessedMessage(
        proc, states, events, BackfillIntent(mid, Outcome.SUCCEEDED, NOW), cursor=mid
    )


def test_exception_rolls_back_the_transaction() -> None:
    store = MemoryStore()
    with pytest.raises(ValueError, match="x"), store.transaction() as tx:  # noqa: PT012 - write then fail
        tx.save(processed(1, "A"))
        raise ValueError("x")
    assert store.flights() == {}
    assert store.proc(1) is None
    assert store.events() == []


def test_savepoint_rolls_back_only_its_writes() -> None:
    store = MemoryStore()
    with store.transaction() as tx:
        tx.save(processed(1, "A"))
        with pytest.raises(ValueError, match="y"), tx.savepoint():  # noqa: PT012 - write then fail
            tx.save(processed(2, "B"))
            raise ValueError("y")
        tx.save(processed(3, "C"))
        assert tx.get_cursor() == 3
    assert sorted(store.flights()) == ["A", "C"]
    assert store.proc(2) is None
    assert [e.event_id for e in store.events()] == [1, 2]
    assert store.inbox_cursor() == 3


def test_save_twice_is_an_error() -> None:
    store = MemoryStore()
    with store.transaction() as tx:
        tx.save(processed(1, "A"))
        with pytest.raises(PermanentError):
            tx.save(processed(1, "B"))


def test_duplicate_search_and_codeshare_loading() -> None:
    store = MemoryStore()
    with store.transaction() as tx:
        tx.save(processed(1))
    with store.transaction() as tx:
        # the same message is the same key, digest and DTTM: no window either way
        assert tx.find_duplicate("K|1", "d", NOW) == 1
        assert tx.find_duplicate("K|1", "d", NOW + timedelta(seconds=1)) is None
        assert tx.find_duplicate("K|1", "d", NOW - timedelta(hours=1)) is None
        assert tx.find_duplicate("K|1", "other", NOW) is None
        tx.tables.flights.update({"C": flight("C", MAID="M"), "S": flight("S", MAID="S")})
        assert set(tx.load_codeshares(["M", "S"])) == {"C"}
        assert set(tx.load_flights(["C", "Q"])) == {"C"}


def test_outbox_and_backfill_queue() -> None:
    store = MemoryStore()
    with store.transaction() as tx:
        tx.save(processed(1, "A", "B"))
        tx.save(processed(2, "C"))
    assert [e.key for e in store.fetch_undelivered(10)] == ["A", "B", "C"]
    store.mark_dispatched([1, 2], NOW)
    assert [e.key for e in store.fetch_undelivered(10)] == ["C"]
    assert store.purge_dispatched(NOW + timedelta(seconds=1), 1) == 1
    assert len(store.events()) == 2
    assert [i.message_id for i in store.pending_backfills(10)] == [1, 2]
    store.record_backfill_failure([1], "down")
    store.mark_backfilled([2], NOW)
    assert [i.message_id for i in store.pending_backfills(10)] == [1]
    proc = store.proc(1)
    assert proc is not None
    assert proc.backfill_attempts == 1
    assert proc.status is Outcome.SUCCEEDED


def test_reader_and_inbox() -> None:
    store = MemoryStore()
    with store.transaction() as tx:
        tx.save(processed(1, "B", "A"))
    assert [s.flid for s in store.iter_flights()] == ["A", "B"]
    assert set(store.get_flights(["A", "Z"])) == {"A"}
    inbox = MemoryInbox()
    first, second = inbox.append("<a/>"), inbox.append("<b/>")
    assert inbox.read_after(first.message_id, 10) == [second]
    inbox.backfill([BackfillIntent(1, Outcome.DEAD, NOW)])
    assert inbox.backfilled[1].status is Outcome.DEAD


def test_lease_epochs() -> None:
    store = MemoryStore()
    assert store.try_acquire("a", 10) == 1
    assert store.try_acquire("a", 10) == 1
    assert store.try_acquire("b", 10) is None
    store.release("a")
    assert store.try_acquire("b", 10) == 2
