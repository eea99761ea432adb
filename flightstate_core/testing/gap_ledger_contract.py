"""The ``GapLedger`` contract: the open inbox gaps stored with the cursor, in the message's
own transaction (docs/design.md, "Gaps"): stored only when the message that goes past them
commits, split when a late message fills one (and counted, the cursor never moving back),
and abandoned in one fenced transaction. ``StoreContract`` includes it; subclass it alone
for a store with the ``StoreHooks``."""

# ruff: noqa: S101, PLR2004, PT012 - a pytest contract: assert, literal expectations; a
# raises block holds the whole transaction that must roll back

from __future__ import annotations

from datetime import timedelta
from typing import Any

import attrs
import pytest

from flightstate_core.domain.errors import LeadershipLost
from flightstate_core.domain.records import GapRange
from flightstate_core.ports import GapLedger
from flightstate_core.testing.samples import NOW, flight, processed
from flightstate_core.testing.store_hooks import StoreHooks

__all__ = ["GapLedgerContract"]


class GapLedgerContract(StoreHooks):
    """Tests every ``GapLedger`` store passes."""

    def test_the_store_is_a_gap_ledger(self, store: Any) -> None:
        assert isinstance(store, GapLedger)

    def test_gaps_are_stored_with_the_message_that_goes_past_them(self, store: Any) -> None:
        gap = GapRange(3, 4, NOW)
        message = attrs.evolve(processed(5, flight("F5")), opens_gaps=(gap,))
        with pytest.raises(RuntimeError), store.transaction() as tx:
            tx.lock_pipeline(0)
            tx.save(message)
            raise RuntimeError("rolled back")
        assert store.inbox_gaps() == []
        assert self.apply(store, message)
        assert store.inbox_gaps() == [gap]

    def test_a_late_message_fills_its_gap_and_is_counted(self, store: Any) -> None:
        wide = GapRange(2, 4, NOW)
        assert self.apply(store, attrs.evolve(processed(5, flight("F5")), opens_gaps=(wide,)))
        late = processed(3, flight("F3"))
        assert self.apply(store, attrs.evolve(late, proc=attrs.evolve(late.proc, late=True)))
        assert store.inbox_gaps() == [GapRange(2, 2, NOW), GapRange(4, 4, NOW)]
        assert store.gap_counters() == (1, 0)
        assert self.dump(store).cursor == 5  # a late row never moves the cursor back
        with store.transaction() as tx:
            tx.lock_pipeline(0)
            found = tx.get_proc(3)
        assert found is not None
        assert found.late

    def test_abandoning_gaps_is_fenced_and_counted(self, store: Any) -> None:
        old, new = GapRange(3, 3, NOW), GapRange(6, 7, NOW + timedelta(hours=2))
        assert self.apply(store, attrs.evolve(processed(8, flight("F8")), opens_gaps=(old, new)))
        assert store.abandon_gaps(NOW + timedelta(hours=1), 0) == [old]
        assert store.inbox_gaps() == [new]
        assert store.gap_counters() == (0, 1)
        self.set_epoch(store, 5)
        with pytest.raises(LeadershipLost):
            store.abandon_gaps(NOW + timedelta(hours=3), 4)
        assert store.inbox_gaps() == [new]
