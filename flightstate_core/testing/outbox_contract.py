"""The outbox contract: one pytest class every ``Outbox`` adapter subclasses in a few lines.

A subclass provides the ``outbox_harness`` fixture: an ``OutboxHarness`` whose ``store``
and ``outbox`` share one empty, migrated database (watermark 0, no events). Events are
written the way the pump writes them, through ``store.transaction()`` and ``save``, so the
tests check what the dispatcher relies on end to end: commit (EVENT_ID) order and the
fields of each row, paging after a read-ahead id, a rollback leaving no event, a watermark
that only moves forward, ``mark_dispatched`` stopping at the first row not given, purges
only at or below the watermark (oldest first, bounded, by creation time), the backlog
figures, and parked events (recorded once, listed until a later ``schd`` of their flight
is delivered).
"""

# ruff: noqa: S101, PLR2004, PT012 - a pytest contract: assert, literal expectations; a
# raises block holds the whole transaction that must roll back

from __future__ import annotations

import threading
from datetime import UTC, datetime
from typing import Protocol

import pytest

from flightstate_core.domain.outbox import ParkedEvent
from flightstate_core.ports import Outbox, StateStore
from flightstate_core.testing.store_contract import EventRow, event_rows, flight, processed

__all__ = ["OutboxContract", "OutboxHarness"]

_AT = datetime(2026, 11, 30, 2, 0, tzinfo=UTC)
#: Cut-offs on either side of any creation time a test store can give its rows.
_LONG_AGO = datetime(2000, 1, 1, tzinfo=UTC)
_FAR_AHEAD = datetime(2100, 1, 1, tzinfo=UTC)


class OutboxHarness(Protocol):
    """What a backend's test gives the contract."""

    store: StateStore
    outbox: Outbox


def commit(harness: OutboxHarness, message_id: int, *flids: str) -> list[EventRow]:
    """One pump-like transaction saving a message that changes *flids* (two events each:
    a ``schd`` snapshot and a ``msg`` notification); the rows it must have written."""
    message = processed(message_id, *(flight(flid, version=message_id) for flid in flids))
    with harness.store.transaction() as tx:
        tx.lock_pipeline(None)
        tx.save(message)
    return event_rows(message)


def _parked(
    event_id: int, flid: str, topic: str = "schd", size: int = 3_339_043, reason: str = "too large"
) -> ParkedEvent:
    return ParkedEvent(event_id, flid, topic, 7, size, reason)


def _ids(outbox: Outbox, limit: int = 1000, after: int = 0) -> list[int]:
    return [record.event_id for record in outbox.fetch_undelivered(limit, after)]


class OutboxContract:
    """Tests every outbox adapter passes (subclass and provide ``outbox_harness``)."""

    def test_empty_outbox(self, outbox_harness: OutboxHarness) -> None:
        outbox = outbox_harness.outbox
        assert outbox.fetch_undelivered(10) == []
        assert list(outbox.fetch_rows(10)) == []
        assert outbox.watermark() == 0
        backlog = outbox.backlog()
        assert (backlog.count, backlog.oldest_age_s, backlog.watermark) == (0, None, 0)
        assert isinstance(outbox.concurrent_marks, bool)

    def test_rows_come_in_commit_order_with_their_fields(
        self, outbox_harness: OutboxHarness
    ) -> None:
        expected = commit(outbox_harness, 1, "B", "A") + commit(outbox_harness, 2, "C")
        records = outbox_harness.outbox.fetch_undelivered(100)
        got = [(r.topic, r.key, r.payload, r.flid, r.state_version, r.message_id)
               for r in records]  # fmt: skip
        assert got == [(e.topic, e.key, e.payload, e.flid, e.state_version, e.message_id)
                       for e in expected]  # fmt: skip
        ids = [r.event_id for r in records]
        assert ids == sorted(set(ids))  # strictly increasing: id order is commit order
        assert all(r.created_at.tzinfo is not None for r in records)

    def test_fetch_rows_matches_fetch_undelivered(self, outbox_harness: OutboxHarness) -> None:
        commit(outbox_harness, 1, "A", "B")
        outbox = outbox_harness.outbox
        first = outbox.fetch_undelivered(3)
        rows = list(outbox.fetch_rows(3))
        fields = ("event_id", "topic", "key", "payload", "state_version", "message_id")
        assert [tuple(getattr(r, f) for f in fields) for r in rows] == [
            tuple(getattr(r, f) for f in fields) for r in first
        ]
        after = [r.event_id for r in outbox.fetch_rows(10, first[1].event_id)]
        assert after == [r.event_id for r in first[2:]] + _ids(outbox, 10, first[2].event_id)

    def test_limit_and_read_ahead_page_in_order(self, outbox_harness: OutboxHarness) -> None:
        for message_id in range(1, 6):
            commit(outbox_harness, message_id, f"F{message_id}")
        outbox = outbox_harness.outbox
        every = _ids(outbox)
        assert len(every) == 10
        assert _ids(outbox, 4) == every[:4]
        assert _ids(outbox, 4, every[3]) == every[4:8]
        assert _ids(outbox, 100, every[-1]) == []

    def test_a_rolled_back_transaction_leaves_no_event(self, outbox_harness: OutboxHarness) -> None:
        kept = commit(outbox_harness, 1, "A")
        message = processed(2, flight("B", version=2))
        with pytest.raises(RuntimeError), outbox_harness.store.transaction() as tx:
            tx.lock_pipeline(None)
            tx.save(message)
            raise RuntimeError("the pump fails after writing")
        assert [r.key for r in outbox_harness.outbox.fetch_undelivered(10)] == [e.key for e in kept]
        assert outbox_harness.outbox.backlog().count == len(kept)

    def test_advance_moves_the_watermark_forward_only(self, outbox_harness: OutboxHarness) -> None:
        commit(outbox_harness, 1, "A", "B", "C")
        outbox = outbox_harness.outbox
        ids = _ids(outbox)
        outbox.advance(ids[2], _AT)
        assert outbox.watermark() == ids[2]
        assert _ids(outbox) == ids[3:]
        assert _ids(outbox, 100, ids[0]) == ids[3:]  # a read-ahead id below it changes nothing
        outbox.advance(ids[0], _AT)  # never back
        assert outbox.watermark() == ids[2]
        assert _ids(outbox) == ids[3:]
        outbox.advance(ids[-1], _AT)
        assert outbox.fetch_undelivered(10) == []
        assert outbox.backlog().count == 0

    def test_mark_dispatched_stops_at_the_first_row_not_given(
        self, outbox_harness: OutboxHarness
    ) -> None:
        commit(outbox_harness, 1, "A", "B", "C", "D")
        outbox = outbox_harness.outbox
        ids = _ids(outbox)  # 8 rows
        outbox.mark_dispatched([ids[0], ids[1], ids[3], ids[4]], _AT)  # ids[2] missing
        assert outbox.watermark() == ids[1]
        assert _ids(outbox) == ids[2:]  # ids[3], ids[4] are read and sent again
        outbox.mark_dispatched([ids[2]], _AT)
        assert outbox.watermark() == ids[2]
        outbox.mark_dispatched([ids[5], ids[3], ids[4], ids[0]], _AT)  # any order, old ids
        assert outbox.watermark() == ids[5]
        outbox.mark_dispatched([ids[7]], _AT)  # ids[6] not given: nothing moves
        assert outbox.watermark() == ids[5]
        outbox.mark_dispatched([], _AT)
        assert _ids(outbox) == ids[6:]

    def test_purge_deletes_only_delivered_rows_oldest_first(
        self, outbox_harness: OutboxHarness
    ) -> None:
        commit(outbox_harness, 1, "A", "B")
        commit(outbox_harness, 2, "C")
        outbox = outbox_harness.outbox
        ids = _ids(outbox)  # 6 rows
        assert outbox.purge_dispatched(_FAR_AHEAD, 100) == 0  # nothing delivered yet
        outbox.advance(ids[3], _AT)
        assert outbox.purge_dispatched(_LONG_AGO, 100) == 0  # all created after the cut-off
        assert outbox.purge_dispatched(_FAR_AHEAD, 1) == 1  # bounded
        assert outbox.purge_dispatched(_FAR_AHEAD, 100) == 3  # the rest at/below the mark
        assert outbox.purge_dispatched(_FAR_AHEAD, 100) == 0
        assert _ids(outbox) == ids[4:]  # undelivered rows survive every purge
        assert outbox.watermark() == ids[3]
        later = commit(outbox_harness, 3, "D")
        fresh = _ids(outbox)
        assert fresh[:2] == ids[4:]
        assert len(fresh) == 2 + len(later)
        assert min(fresh[2:]) > ids[-1]  # ids are never reused after a purge

    def test_backlog_counts_rows_above_the_watermark(self, outbox_harness: OutboxHarness) -> None:
        commit(outbox_harness, 1, "A", "B", "C")
        outbox = outbox_harness.outbox
        ids = _ids(outbox)
        backlog = outbox.backlog()
        assert (backlog.count, backlog.watermark) == (6, 0)
        assert backlog.oldest_age_s is not None
        assert backlog.oldest_age_s >= 0
        outbox.advance(ids[1], _AT)
        backlog = outbox.backlog()
        assert (backlog.count, backlog.watermark) == (4, ids[1])
        outbox.advance(ids[-1], _AT)
        backlog = outbox.backlog()
        assert (backlog.count, backlog.oldest_age_s, backlog.watermark) == (0, None, ids[-1])

    def test_concurrent_marks_allow_reads_while_the_watermark_moves(
        self, outbox_harness: OutboxHarness
    ) -> None:
        """With ``concurrent_marks`` the dispatcher reads ahead and counts on worker
        threads while it advances: every call keeps its meaning under that overlap."""
        outbox = outbox_harness.outbox
        if not outbox.concurrent_marks:
            pytest.skip("this outbox is used from one thread at a time")
        for message_id in range(1, 11):
            commit(outbox_harness, message_id, f"F{message_id}")
        ids = _ids(outbox)
        errors: list[BaseException] = []

        def read() -> None:
            try:
                for _ in range(20):
                    got = _ids(outbox, 5, ids[9])
                    assert got == ids[10:15]
                    assert outbox.backlog().count <= len(ids)
            except BaseException as exc:  # reported by the main thread
                errors.append(exc)

        reader = threading.Thread(target=read)
        reader.start()
        for event_id in ids[:10]:
            outbox.advance(event_id, _AT)
        reader.join(timeout=60)
        assert not reader.is_alive()
        assert errors == []
        assert outbox.watermark() == ids[9]

    def test_park_records_each_event_once_and_lists_the_unresolved(
        self, outbox_harness: OutboxHarness
    ) -> None:
        outbox = outbox_harness.outbox
        assert (outbox.parked(10), outbox.parked_count()) == ([], 0)
        reason = "MSG_SIZE_TOO_LARGE: 3339043 bytes over the 1000000-byte limit 航班"
        outbox.park([_parked(12, "F2", reason=reason), _parked(5, "F1", "msg", 77)], _AT)
        outbox.park([_parked(12, "F2", reason="again")], _AT)  # a retried window: kept as is
        listed = outbox.parked(10)
        assert [(p.event_id, p.flid, p.topic, p.state_version, p.size_bytes, p.reason)
                for p in listed] == [(5, "F1", "msg", 7, 77, "too large"),
                                     (12, "F2", "schd", 7, 3_339_043, reason)]  # fmt: skip
        assert all(p.parked_at == _AT for p in listed)
        assert [p.event_id for p in outbox.parked(1)] == [5]
        assert outbox.parked_count() == 2
        assert outbox.watermark() == 0  # parking alone moves nothing: the caller advances

    def test_a_later_delivery_of_the_flight_resolves_its_parked_events(
        self, outbox_harness: OutboxHarness
    ) -> None:
        outbox = outbox_harness.outbox
        outbox.park([_parked(3, "F1"), _parked(4, "F1", "msg", 90), _parked(8, "F1"),
                     _parked(5, "F2")], _AT)  # fmt: skip
        assert outbox.resolve_parked([], _AT) == 0
        assert outbox.resolve_parked([("F3", 100)], _AT) == 0  # another flight
        assert outbox.resolve_parked([("F1", 6)], _AT) == 2  # below 6 only: 3 and 4
        assert [p.event_id for p in outbox.parked(10)] == [5, 8]
        assert outbox.resolve_parked([("F1", 6)], _AT) == 0  # resolved once
        assert outbox.resolve_parked([("F2", 9), ("F1", 9)], _AT) == 2
        assert (outbox.parked(10), outbox.parked_count()) == ([], 0)
        outbox.park([_parked(8, "F1")], _AT)  # already parked (and resolved): not reopened
        assert outbox.parked_count() == 0
