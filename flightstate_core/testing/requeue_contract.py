"""The ``DeadMessages`` contract: requeue takes back a DEAD message, and only that.

``engine.requeue.requeue_dead`` relies on it: ``claim_dead`` deletes the PROC_STATE row of
a DEAD message (and audits the requeue where the store keeps an audit) and answers what it
said; anything not DEAD (SUCCEEDED, no row at all) is refused with None and left alone; a
claim rolls back with its transaction; and the claimed message can be saved again in the
same transaction, then completed with ``requeue_done``. A subclass provides the
``StoreHooks`` (the same as ``StoreContract``'s).
"""

# ruff: noqa: S101, PLR2004, PT012 - a pytest contract: assert, literal expectations; a
# raises block holds the whole transaction that must roll back

from __future__ import annotations

from typing import Any

import attrs
import pytest

from flightstate_core.domain.decision import Outcome
from flightstate_core.domain.records import ProcessedMessage
from flightstate_core.ports import DeadMessages
from flightstate_core.testing.samples import InjectedFault, flight, processed
from flightstate_core.testing.store_hooks import StoreHooks

__all__ = ["DeadMessagesContract"]


def _dead(message_id: int, reason: str = "unexpected error 3 times", attempts: int = 3) -> Any:
    message = processed(message_id, status=Outcome.DEAD)
    return attrs.evolve(message, proc=attrs.evolve(message.proc, reason=reason,
                                                   attempts=attempts))  # fmt: skip


class DeadMessagesContract(StoreHooks):
    """Tests every ``DeadMessages`` store passes (subclass and provide the hooks)."""

    def test_transactions_take_dead_messages_back(self, store: Any) -> None:
        with store.transaction() as tx:
            tx.lock_pipeline(None)
            assert isinstance(tx, DeadMessages)

    def test_a_dead_message_is_claimed_and_applied_again(self, store: Any) -> None:
        assert self.apply(store, _dead(7, "航班 not found"))
        again: ProcessedMessage = processed(7, flight("F7"))
        with store.transaction() as tx:
            tx.lock_pipeline(None)
            claim = tx.claim_dead(7)
            assert claim is not None
            assert (claim.message_id, claim.reason, claim.attempts) == (7, "航班 not found", 3)
            assert tx.get_proc(7) is None
            tx.save(again)
            tx.requeue_done(claim, Outcome.SUCCEEDED)
        assert self.dump(store).procs[7] == again.proc
        self.assert_reads(store, flight("F7"))

    def test_anything_not_dead_is_refused_and_left_alone(self, store: Any) -> None:
        assert self.apply(store, processed(1, flight("F1")))
        before = self.dump(store)
        with store.transaction() as tx:
            tx.lock_pipeline(None)
            assert tx.claim_dead(1) is None
            assert tx.claim_dead(99) is None
        assert self.dump(store) == before

    def test_a_claim_rolls_back_with_its_transaction(self, store: Any) -> None:
        assert self.apply(store, _dead(4))
        with pytest.raises(InjectedFault), store.transaction() as tx:
            tx.lock_pipeline(None)
            assert tx.claim_dead(4) is not None
            raise InjectedFault("the requeue failed")
        found = self.dump(store).procs[4]
        assert (found.status, found.attempts) == (Outcome.DEAD, 3)
        with store.transaction() as tx:
            tx.lock_pipeline(None)
            claim = tx.claim_dead(4)
        assert claim is not None
        assert claim.attempts == 3
