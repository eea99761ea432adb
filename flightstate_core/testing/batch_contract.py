"""The batch-transaction contract: the production write path (``BatchTransaction``).

Every unit the pump runs (``engine.processor.process_batch``, and a single message as a
unit of one) reads through ``get_procs`` and ``find_duplicates`` and writes through
``save_many`` when the transaction offers them, so this is the path every store must get
right. A subclass provides what ``StoreHooks`` asks (the same hooks as ``StoreContract``).
The tests check: which messages already have a PROC_STATE row whatever their outcome; the
SUCCEEDED (message id, DTTM) pairs per (identity key, digest); that ``save_many`` has the
effect of ``save`` of each message in order (final states, every event in order, every
PROC_STATE row, the highest cursor, every snap-log row); that a transaction reads what it
wrote; rollback at every write step; a batch refused whole, before any write, when one of
its messages was saved already or holds a state the tables cannot hold; stamps-only
flights; and the open gaps and late rows of a batch.
"""

# ruff: noqa: S101, PLR2004, PT012 - a pytest contract: assert, literal expectations; a
# raises block holds the whole transaction that must fail

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import attrs
import pytest

from flightstate_core.domain.decision import Outcome
from flightstate_core.domain.errors import FlightstateError, PermanentError
from flightstate_core.domain.items import Item
from flightstate_core.domain.records import GapRange, ProcessedMessage
from flightstate_core.ports import BatchTransaction, DuplicateKey, GapLedger
from flightstate_core.testing.samples import (
    NOW,
    InjectedFault,
    event_rows,
    flight,
    full_collections,
    processed,
)
from flightstate_core.testing.store_hooks import EMPTY, StoreHooks

__all__ = ["BatchTransactionContract"]

_KEY = ("AODB|FLOP|GTDT|7", "abc")


def _history() -> list[ProcessedMessage]:
    """Four messages: two flights created, one changed twice (collections rewritten, then
    some dropped), a DEAD message in between, the last without a cursor."""
    one = flight("F1", collections=full_collections(2))
    other = flight("F2")
    two = attrs.evolve(one, version=2, collections=full_collections(3, tag="n"))
    dropped = {k: v for k, v in two.collections.items() if k not in {"ROUT", "CHOT"}}
    three = attrs.evolve(two, version=3, collections=dropped, scalars={"FFID": "x"})
    last = processed(4, three)
    return [processed(1, one, other), processed(2, two), processed(3, status=Outcome.DEAD),
            attrs.evolve(last, cursor=None)]  # fmt: skip


def _pairs(found: dict[DuplicateKey, list[tuple[int, datetime | None]]]) -> dict[Any, Any]:
    """The answer without keys that found nothing, each key's pairs by message id."""
    return {key: sorted(pairs, key=lambda p: p[0]) for key, pairs in found.items() if pairs}


class BatchTransactionContract(StoreHooks):
    """Tests every ``BatchTransaction`` store passes (subclass and provide the hooks)."""

    def save_batch(self, store: Any, batch: Sequence[ProcessedMessage], epoch: int = 0) -> None:
        """The engine's protocol for a unit: lock, batch reads, one ``save_many``."""
        with store.transaction() as tx:
            tx.lock_pipeline(epoch)
            assert tx.get_procs([p.proc.message_id for p in batch]) == set()
            tx.load_flights(sorted({flid for p in batch for flid in p.states}))
            tx.save_many(batch)

    def test_transactions_are_batch_transactions(self, store: Any) -> None:
        with store.transaction() as tx:
            tx.lock_pipeline(0)
            assert isinstance(tx, BatchTransaction)

    def test_get_procs_names_saved_messages_whatever_their_outcome(self, store: Any) -> None:
        self.save_batch(store, [processed(1, flight("F1")), processed(2, status=Outcome.DEAD)])
        with store.transaction() as tx:
            tx.lock_pipeline(0)
            assert tx.get_procs([1, 2, 3]) == {1, 2}
            assert tx.get_procs([3, 4]) == set()
            assert tx.get_procs([]) == set()

    def test_find_duplicates_lists_the_succeeded_pairs_of_each_key(self, store: Any) -> None:
        later = NOW + timedelta(minutes=1)
        key, digest = _KEY
        self.save_batch(store, [
            processed(1, flight("F1"), identity_key=key, digest=digest),
            processed(2, flight("F2"), identity_key=key, digest=digest, dttm=later),
            processed(3, status=Outcome.DEAD, identity_key=key, digest=digest),
            processed(4, flight("F4"), identity_key=key, digest="other"),
            processed(5, flight("F5"), identity_key=key, digest=digest, dttm=None),
        ])  # fmt: skip
        with store.transaction() as tx:
            tx.lock_pipeline(0)
            found = tx.find_duplicates([_KEY, (key, "none"), ("K", digest)])
            assert _pairs(found) == {_KEY: [(1, NOW), (2, later), (5, None)]}
            assert _pairs(tx.find_duplicates([(key, "other")])) == {(key, "other"): [(4, NOW)]}
            assert tx.find_duplicates([]) == {}

    def test_save_many_is_saving_each_in_order(self, store: Any) -> None:
        batch = _history()
        self.save_batch(store, batch)
        final = batch[-1].states["F1"]
        dump = self.dump(store)
        assert dict(dump.flights) == {"F1": final, "F2": batch[0].states["F2"]}
        assert list(dump.events) == [row for p in batch for row in event_rows(p)]
        assert dict(dump.procs) == {p.proc.message_id: p.proc for p in batch}
        assert dump.cursor == 3  # the highest cursor of the batch
        assert dump.snap_log == tuple(p.snap_log for p in batch)
        self.assert_reads(store, final, batch[0].states["F2"])

    def test_a_transaction_reads_what_it_saved(self, store: Any) -> None:
        first, second = _history()[:2], _history()[2:]
        with store.transaction() as tx:
            tx.lock_pipeline(0)
            tx.save_many(first)
            assert tx.get_procs([1, 2, 3]) == {1, 2}
            assert tx.load_flights(["F1", "F2"]) == {"F1": first[1].states["F1"],
                                                     "F2": first[0].states["F2"]}  # fmt: skip
            pairs = _pairs(tx.find_duplicates([("AODB|FLOP|GTDT|2", "d2")]))
            assert pairs == {("AODB|FLOP|GTDT|2", "d2"): [(2, NOW)]}
            tx.save_many(second)
        self.assert_reads(store, second[-1].states["F1"], first[0].states["F2"])
        assert sorted(self.dump(store).procs) == [1, 2, 3, 4]

    def test_rollback_at_every_write_step(self, store: Any) -> None:
        assert self.apply(store, processed(1, flight("15", collections=full_collections(2))))
        changed = flight("15", version=2, collections=full_collections(3, tag="n"))
        third = attrs.evolve(changed, version=3)
        batch = [processed(2, changed, flight("16")), processed(3, third)]
        before = self.dump(store)
        for step in self.fault_steps(store):
            self.arm_fault(store, step)
            with pytest.raises((FlightstateError, InjectedFault)):
                self.save_batch(store, batch)
            assert self.dump(store) == before, step
        self.arm_fault(store, None)
        self.save_batch(store, batch)
        self.assert_reads(store, third, flight("16"))

    def test_a_message_saved_already_refuses_the_whole_batch(self, store: Any) -> None:
        assert self.apply(store, processed(1, flight("F1")))
        before = self.dump(store)
        with pytest.raises(FlightstateError), store.transaction() as tx:
            tx.lock_pipeline(0)
            tx.save_many([processed(2, flight("F2")), processed(1, flight("F1", version=2))])
        assert self.dump(store) == before

    def test_a_state_the_tables_cannot_hold_refuses_the_batch(self, store: Any) -> None:
        holes = flight("F2", collections={"GTDT": (Item.of(2, "1", {"GATE": "G1"}),)})
        unknown = flight("F3", scalars={"NOPE": "x"})
        for bad in (holes, unknown):
            with pytest.raises(PermanentError), store.transaction() as tx:
                tx.lock_pipeline(0)
                tx.save_many([processed(1, flight("F1")), processed(2, bad)])
            assert self.dump(store) == EMPTY

    def test_stamps_only_flights_keep_their_version_and_write_no_event(self, store: Any) -> None:
        base = flight("F1", provenance={"STND": 1})
        assert self.apply(store, processed(1, base, flight("F2")))
        raised = attrs.evolve(base, provenance={"STND": 2, "GTDT:1": 2})
        changed = flight("F2", version=2, scalars={"FFID": "y"})
        restamped = attrs.evolve(changed, provenance={"FFID": 4})
        stamps = [attrs.evolve(processed(2), stamped={"F1": raised}),
                  processed(3, changed),
                  attrs.evolve(processed(4), stamped={"F2": restamped})]  # fmt: skip
        events = len(self.dump(store).events)
        self.save_batch(store, stamps)
        self.assert_reads(store, raised, restamped)
        assert len(self.dump(store).events) == events + 2  # message 3's two events only

    def test_a_batch_stores_its_gaps_and_counts_its_late_rows(self, store: Any) -> None:
        gapless = not isinstance(store, GapLedger)  # (a flag: *store* keeps its hooks' type)
        if gapless:
            pytest.skip("this store keeps no gap ledger")
        late = processed(3, flight("F3"))
        batch = [attrs.evolve(processed(5, flight("F5")), opens_gaps=(GapRange(3, 4, NOW),)),
                 attrs.evolve(late, proc=attrs.evolve(late.proc, late=True))]  # fmt: skip
        self.save_batch(store, batch)
        assert store.inbox_gaps() == [GapRange(4, 4, NOW)]
        assert store.gap_counters() == (1, 0)
        assert self.dump(store).cursor == 5
        with store.transaction() as tx:
            tx.lock_pipeline(0)
            found = tx.get_proc(3)
        assert found is not None
        assert found.late
