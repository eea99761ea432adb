"""Requeue: apply a DEAD message once more, after its cause was fixed.

Why here and not in the pump: the pump reads strictly after INBOX_CURSOR, which is already
past the DEAD message, and the cursor never moves back (moving it back would make the pump
re-read everything after it). So a requeue is one unit of work of its own:

1. ``locked_transaction`` takes the same PIPELINE_LOCK every pump transaction takes, so a
   running pump is simply serialised with it (no epoch: the requeue does not lead);
2. the store claims the message (``DeadMessages.claim_dead``): deletes its PROC_STATE row
   *only if it is DEAD*, and audits the requeue where it keeps an audit; anything else is
   refused and rolled back;
3. the engine then sees no PROC_STATE, decides and saves the message exactly as the pump
   would (business-duplicate check included), with ``attempts`` = old + 1.

Everything commits together, so the message is applied exactly once more, or not at all.
Two concurrent requeues of one id serialise on the lock; the second finds it no longer
DEAD.
"""

from __future__ import annotations

from datetime import datetime

from attrs import frozen

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.errors import FlightstateError
from flightstate_core.domain.records import InboxRow, ProcessedMessage
from flightstate_core.engine.outcome import decode_row
from flightstate_core.engine.unit_of_work import AfterSave, Work, apply_locked, locked_transaction
from flightstate_core.ports import DeadClaim, DeadMessages, StateStore

__all__ = ["RequeueRefused", "Requeued", "requeue_dead"]


class RequeueRefused(FlightstateError):
    """The message is not DEAD (or not in the inbox): nothing was changed."""


@frozen
class Requeued:
    """What a requeue did: the claim (the old reason and attempts) and the new outcome."""

    claim: DeadClaim
    processed: ProcessedMessage


def requeue_dead(
    store: StateStore,
    row: InboxRow,
    config: CoreConfig,
    *,
    now: datetime,
    after_save: AfterSave | None = None,
) -> Requeued:
    """Re-apply DEAD message *row* in one locked transaction (see the module docstring).
    Raises RequeueRefused if it is not DEAD or the store cannot requeue."""
    decoded = decode_row(row, config)
    with locked_transaction(store, None) as tx:
        if not isinstance(tx, DeadMessages):
            raise RequeueRefused("this store cannot requeue messages")
        claim = _claim(tx, row.message_id)
        work = [Work(row, decoded, attempts=claim.attempts + 1, requeued=True)]
        done = apply_locked(tx, work, config, now=now, after_save=after_save)
        if not done:  # cannot happen: the claim deleted its PROC_STATE row
            raise RequeueRefused(f"message {row.message_id} was not re-applied")
        tx.requeue_done(claim, done[0].proc.status)
    return Requeued(claim, done[0])


def _claim(tx: DeadMessages, message_id: int) -> DeadClaim:
    claim = tx.claim_dead(message_id)
    if claim is None:
        found = tx.get_proc(message_id)
        state = "has no outcome yet" if found is None else f"is {found.status.value}"
        raise RequeueRefused(f"message {message_id} {state}, not DEAD")
    return claim
