"""The unit of work over the memory store: the one locked transaction, requeue through the
``DeadMessages`` capability, and the after-save hook through ``ScheduleResponses``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

import pytest

from flightstate_core.domain.decision import Outcome
from flightstate_core.domain.errors import LeadershipLost
from flightstate_core.domain.records import InboxRow, ProcessedMessage
from flightstate_core.domain.values import Set
from flightstate_core.engine.processor import ServiceProcessor, process_message, record_dead
from flightstate_core.engine.requests import schedule_response_hook
from flightstate_core.engine.requeue import RequeueRefused, requeue_dead
from flightstate_core.engine.unit_of_work import Work, apply_locked, locked_transaction
from flightstate_core.memory import MemoryStore, MemoryTransaction
from flightstate_core.ports import (
    DeadClaim,
    DeadMessages,
    ResponseLog,
    ScheduleRequestRecord,
    ScheduleResponses,
    Window,
)
from flightstate_testing import sis
from flightstate_testing.models import flop, record, schedule

from .helpers import CONFIG, NOW

RAW_STND = sis.flop("STND", "<STND>S1</STND>", "9", seqn="7", dttm="20261130090000")


def test_locked_transaction_fences_a_stale_epoch() -> None:
    store = MemoryStore()
    store.try_acquire("a", 10)
    store.release("a")
    store.try_acquire("b", 10)  # epoch 2
    with pytest.raises(LeadershipLost), locked_transaction(store, 1):
        pytest.fail("the body must not run")
    with locked_transaction(store, 2) as tx:
        assert tx.get_proc(1) is None


def test_apply_locked_runs_inside_the_callers_transaction() -> None:
    store = MemoryStore()
    message = flop("STND", record("9", {"STND": Set("1")}))
    with locked_transaction(store, None) as tx:
        (done,) = apply_locked(tx, [Work(InboxRow(3, "<x/>", NOW), message)], CONFIG, now=NOW)
        assert done.proc.status is Outcome.SUCCEEDED
    assert store.flights()["9"].scalars == {"STND": "1"}
    assert store.inbox_cursor() == 3


def test_record_dead_is_a_forced_decision_without_hook() -> None:
    calls: list[int] = []

    def hook(_tx: object, _message: object, processed: ProcessedMessage) -> None:
        calls.append(processed.proc.message_id)

    processor = ServiceProcessor(MemoryStore(), CONFIG, clock=lambda: NOW, after_save=hook)
    dead = processor.record_dead(InboxRow(4, RAW_STND, NOW), "boom x3", None, 3)
    assert dead is not None
    assert dead.proc.status is Outcome.DEAD
    assert dead.proc.reason == "boom x3"
    assert dead.proc.identity_key == "AODB|FLOP|STND|7"  # META kept for the DEAD record
    assert not dead.states
    assert calls == []


def _dead(store: MemoryStore, mid: int) -> None:
    assert record_dead(store, InboxRow(mid, RAW_STND, NOW), "stand unknown", CONFIG,
                       now=NOW, epoch=None, attempts=2) is not None  # fmt: skip


def test_requeue_applies_a_dead_message_once_more() -> None:
    store = MemoryStore()
    _dead(store, 5)
    done = requeue_dead(store, InboxRow(5, RAW_STND, NOW), CONFIG, now=NOW)
    assert done.claim == DeadClaim(5, "stand unknown", 2)
    assert done.processed.proc.status is Outcome.SUCCEEDED
    assert done.processed.proc.attempts == 3
    assert store.flights()["9"].scalars == {"STND": "S1"}
    with pytest.raises(RequeueRefused, match="message 5 is SUCCEEDED, not DEAD"):
        requeue_dead(store, InboxRow(5, RAW_STND, NOW), CONFIG, now=NOW)


def test_requeue_refuses_a_message_without_outcome() -> None:
    store = MemoryStore()
    with pytest.raises(RequeueRefused, match="message 6 has no outcome yet, not DEAD"):
        requeue_dead(store, InboxRow(6, RAW_STND, NOW), CONFIG, now=NOW)
    assert store.proc(6) is None


def test_a_failed_requeue_keeps_the_dead_row() -> None:
    store = MemoryStore()
    _dead(store, 7)

    def broken(*_args: object) -> None:
        raise RuntimeError("hook failed")

    with pytest.raises(RuntimeError, match="hook failed"):
        requeue_dead(store, InboxRow(7, RAW_STND, NOW), CONFIG, now=NOW, after_save=broken)
    proc = store.proc(7)
    assert proc is not None
    assert proc.status is Outcome.DEAD  # the claim rolled back with the rest
    assert "9" not in store.flights()


class _PlainStore:
    """A store whose transactions have only the required methods (no capabilities)."""

    def __init__(self) -> None:
        self.inner = MemoryStore()

    @contextmanager
    def transaction(self) -> Iterator[_Plain]:
        with self.inner.transaction() as tx:
            yield _Plain(tx)


class _Plain:
    def __init__(self, tx: MemoryTransaction) -> None:
        self.savepoint, self.lock_pipeline = tx.savepoint, tx.lock_pipeline
        self.get_proc, self.find_duplicate = tx.get_proc, tx.find_duplicate
        self.load_flights, self.load_codeshares, self.save = (
            tx.load_flights, tx.load_codeshares, tx.save,
        )  # fmt: skip


def test_requeue_needs_the_capability() -> None:
    with pytest.raises(RequeueRefused, match="cannot requeue"):
        requeue_dead(_PlainStore(), InboxRow(1, RAW_STND, NOW), CONFIG, now=NOW)
    with MemoryStore().transaction() as tx:
        assert isinstance(tx, DeadMessages)


class _Log:
    """A ``ResponseLog`` without open requests that records what it logs (unsolicited)."""

    def __init__(self) -> None:
        self.entries: list[tuple[int, int | None, Window, datetime | None]] = []

    def logged(self, message_id: int) -> tuple[bool, int | None]:
        return any(entry[0] == message_id for entry in self.entries), None

    def open_requests(self, as_of: datetime | None) -> list[ScheduleRequestRecord]:
        return []

    def log(self, message_id: int, request_id: int | None, window: Window,
            now: datetime | None) -> bool:  # fmt: skip
        self.entries.append((message_id, request_id, window, now))
        return True

    def answer(self, request_id: int, message_id: int, now: datetime | None) -> None:
        raise AssertionError("no request is open")


class _Matching(MemoryTransaction):
    """A memory transaction that also keeps schedule requests."""

    log = _Log()

    def response_log(self) -> ResponseLog:
        return self.log


def test_the_hook_matches_applied_responses_on_a_capable_transaction() -> None:
    store = MemoryStore()
    hook = schedule_response_hook(CONFIG)
    answer = schedule("RESP", record("9", {"SODT": Set("30NOV260900")}))
    done = process_message(store, InboxRow(8, "<x/>", NOW), CONFIG, now=NOW, epoch=None,
                           decoded=answer)  # fmt: skip
    dead = record_dead(store, InboxRow(9, "<x/>", NOW), "x", CONFIG, now=NOW, epoch=None,
                       attempts=1, decoded=answer)  # fmt: skip
    assert done is not None
    assert dead is not None
    with store.transaction() as plain:
        assert not isinstance(plain, ScheduleResponses)
        hook(plain, answer, done)  # no capability: nothing, and no error
        tx = _Matching(store, plain.tables)
        tx.log = _Log()
        assert isinstance(tx, ScheduleResponses)
        hook(tx, answer, dead)  # a DEAD RESP delivered nothing
        hook(tx, flop("STND", record("9", {"STND": Set("1")})), done)  # not a RESP
        hook(tx, answer, done)
        assert [(mid, request, now) for mid, request, _, now in tx.log.entries] == [
            (8, None, NOW)  # logged unsolicited: no request was open
        ]
