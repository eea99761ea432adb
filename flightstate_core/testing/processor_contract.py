"""The ``MessageProcessor`` contract: what the pump runs its rows through.

A subclass provides the ``processor_harness`` fixture: a ``ProcessorHarness`` whose
``processor`` writes to ``store`` (empty, migrated, no lease: epoch None). The tests check
what the pump relies on: ``prepare`` is pure and keeps the rows and their order; a batch is
finished in FIFO order (a later row sees what an earlier one changed) with one result per
new row, an undecodable row DEAD, never raised; rows already finished are replays (left
out of a batch's results, None for one message); the attempt number is recorded; and
``record_dead`` records DEAD with the reason, applying nothing.
"""

# ruff: noqa: S101, PLR2004 - a pytest contract: assert, literal expectations

from __future__ import annotations

from typing import Any, Protocol

from flightstate_core.domain.decision import Outcome
from flightstate_core.domain.records import InboxRow
from flightstate_core.ports import MessageProcessor, StateStore
from flightstate_testing.builders import SisBuilder

__all__ = ["ProcessorContract", "ProcessorHarness"]


class ProcessorHarness(Protocol):
    """What a backend's test gives the contract."""

    @property
    def processor(self) -> MessageProcessor: ...
    @property
    def store(self) -> Any:
        """The store it writes (a ``StateStore`` and ``FlightReader``)."""


def _rows() -> list[InboxRow]:
    """A flight added, then changed by a FLOP, then a row that is not XML."""
    sis = SisBuilder(seed=1)
    return [InboxRow(1, sis.schedule("ADD", [1])),
            InboxRow(2, sis.scalars(1, "ESTT", ESTT=sis.when(1, 5))),
            InboxRow(3, "<not xml")]  # fmt: skip


def _proc(store: StateStore, message_id: int) -> Any:
    with store.transaction() as tx:
        tx.lock_pipeline(None)
        return tx.get_proc(message_id)


class ProcessorContract:
    """Tests every ``MessageProcessor`` passes (subclass and provide ``processor_harness``)."""

    def test_prepare_is_pure_and_keeps_the_rows(self, processor_harness: ProcessorHarness) -> None:
        rows = _rows()
        prepared = processor_harness.processor.prepare(rows)
        assert [(r.message_id, r.raw) for r in prepared] == [(r.message_id, r.raw) for r in rows]
        assert _proc(processor_harness.store, 1) is None

    def test_a_batch_is_finished_in_fifo_order(self, processor_harness: ProcessorHarness) -> None:
        processor, store = processor_harness.processor, processor_harness.store
        done = processor.process_batch(processor.prepare(_rows()), None)
        assert [(d.proc.message_id, d.proc.status) for d in done] == [
            (1, Outcome.SUCCEEDED), (2, Outcome.SUCCEEDED), (3, Outcome.DEAD),
        ]  # fmt: skip
        assert store.get_flights(["1"])["1"].version == 2  # the FLOP saw the ADD
        assert [_proc(store, mid).status for mid in (1, 2, 3)] == [d.proc.status for d in done]

    def test_finished_rows_are_replays(self, processor_harness: ProcessorHarness) -> None:
        processor, rows = processor_harness.processor, _rows()
        assert len(processor.process_batch(rows[:2], None)) == 2
        again = processor.process_batch(rows, None)
        assert [d.proc.message_id for d in again] == [3]
        assert processor.process_message(rows[0], None, 1) is None
        assert processor.record_dead(rows[1], "too late", None, 1) is None

    def test_one_message_records_its_attempts(self, processor_harness: ProcessorHarness) -> None:
        done = processor_harness.processor.process_message(_rows()[0], None, 3)
        assert done is not None
        assert (done.proc.status, done.proc.attempts) == (Outcome.SUCCEEDED, 3)
        assert _proc(processor_harness.store, 1).attempts == 3

    def test_record_dead_applies_nothing(self, processor_harness: ProcessorHarness) -> None:
        processor, store = processor_harness.processor, processor_harness.store
        done = processor.record_dead(_rows()[0], "unexpected error 3 times", None, 3)
        assert done is not None
        assert (done.proc.status, done.proc.reason) == (Outcome.DEAD, "unexpected error 3 times")
        assert done.states == {}
        assert store.get_flights(["1"]) == {}
        assert _proc(store, 1).status is Outcome.DEAD
