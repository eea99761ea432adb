"""The ``CommitWatch`` contract: a dispatcher is woken by commits that wrote events.

While ``watch_commits`` runs it calls *wake* (from another thread) once it watches (events
committed before then may have been missed: the dispatcher reads once more), after each
commit that wrote outbox events, from any writer; never for a rollback or a commit without
events; and not at all once the block has ended. A subclass provides the
``outbox_harness`` fixture of ``OutboxContract``. Run it many times in a loop: it is
about threads and timing.
"""

# ruff: noqa: S101, PT012 - a pytest contract: assert; a raises block holds the whole
# transaction that must roll back

from __future__ import annotations

import threading
import time

import pytest

from flightstate_core.ports import CommitWatch
from flightstate_core.testing.outbox_contract import OutboxHarness, commit
from flightstate_core.testing.samples import InjectedFault, flight, processed

__all__ = ["CommitWatchContract"]

#: Seconds a wake-up may take to arrive.
DEADLINE_S = 10.0
#: Seconds waited to see that no wake-up comes.
QUIET_S = 1.0


class Wakes:
    """Counts ``wake`` calls (made from the watcher's thread)."""

    def __init__(self) -> None:
        self.count = 0
        self.changed = threading.Condition()

    def __call__(self) -> None:
        with self.changed:
            self.count += 1
            self.changed.notify_all()

    def beyond(self, count: int, timeout: float = DEADLINE_S) -> int:
        """The count once it is above *count*, or as it is after *timeout*."""
        with self.changed:
            self.changed.wait_for(lambda: self.count > count, timeout=timeout)
            return self.count


class CommitWatchContract:
    """Tests every ``CommitWatch`` outbox passes (subclass and provide ``outbox_harness``)."""

    def test_the_outbox_watches_commits(self, outbox_harness: OutboxHarness) -> None:
        assert isinstance(outbox_harness.outbox, CommitWatch)

    def test_a_commit_with_events_wakes_the_watcher(self, outbox_harness: OutboxHarness) -> None:
        outbox, wakes = outbox_harness.outbox, Wakes()
        assert isinstance(outbox, CommitWatch)
        with outbox.watch_commits(wakes):
            watching = wakes.beyond(0)
            assert watching >= 1, "no wake-up once watching"
            commit(outbox_harness, 1, "A")
            assert wakes.beyond(watching) > watching

    def test_a_rollback_or_a_commit_without_events_wakes_nobody(
        self, outbox_harness: OutboxHarness
    ) -> None:
        outbox, wakes = outbox_harness.outbox, Wakes()
        assert isinstance(outbox, CommitWatch)
        with outbox.watch_commits(wakes):
            watching = wakes.beyond(0)
            with pytest.raises(InjectedFault), outbox_harness.store.transaction() as tx:
                tx.lock_pipeline(None)
                tx.save(processed(1, flight("A")))
                raise InjectedFault("rolled back after the save")
            with outbox_harness.store.transaction() as tx:
                tx.lock_pipeline(None)
                tx.save(processed(2))  # PROC_STATE only: no event
            assert wakes.beyond(watching, QUIET_S) == watching

    def test_nothing_wakes_once_the_watch_ended(self, outbox_harness: OutboxHarness) -> None:
        outbox, wakes = outbox_harness.outbox, Wakes()
        assert isinstance(outbox, CommitWatch)
        with outbox.watch_commits(wakes):
            wakes.beyond(0)
        ended = wakes.count
        commit(outbox_harness, 1, "A")
        time.sleep(QUIET_S)
        assert wakes.count == ended
