"""The unit of work: the one place pipeline work opens a store transaction and locks it.

``locked_transaction`` is the only code that calls ``store.transaction()`` and
``tx.lock_pipeline(epoch)`` for pipeline work (the pump's messages, DEAD records, requeue,
lifecycle cleanup and the operator's edits all come through it), so a fenced ex-leader
(stale epoch: LeadershipLost) writes nothing anywhere.

Applying messages is one engine, whatever the count: a single message is a batch of one,
and recording DEAD is a batch of one with a forced decision. Why batches: applying a
message costs a handful of statements (replay check, duplicate check, flight loads,
codeshare look-up, writes); issued per message they are round trips, and round trips, not
Python, bound the rate. So a unit does each kind of read once for all its messages, decides
every message in FIFO order against an in-memory overlay of the states (message 7 sees what
message 3 changed; in-unit duplicates are caught), and writes everything once.

Each message keeps its own outcome (its own PROC_STATE row, events, backfill intent).
Failure rules, so that a failing message never takes the others with it:

- a message whose *deciding* raises unexpectedly: the messages before it are written and
  committed, and the exception is re-raised (with a note naming the message) for the
  caller to retry that message alone; retrying is safe, committed messages are replays;
- the *write* (or the after-save hook) raising: nothing of the unit commits and the
  exception propagates; the pump then goes one message at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import TypeAlias, TypeVar

from attrs import frozen

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.decision import Decision, DecisionContext, Outcome
from flightstate_core.domain.handlers import decide, needed_flids
from flightstate_core.domain.messages import Message
from flightstate_core.domain.records import InboxRow, ProcessedMessage
from flightstate_core.engine._overlay import Duplicates, FallbackDuplicates, Overlay
from flightstate_core.engine.outcome import Decoded, Undecodable, build_processed, payload_digest
from flightstate_core.ports import (
    ArchivedVersions,
    BatchTransaction,
    StateStore,
    StateTransaction,
    Transactional,
    UnitReadAhead,
)

__all__ = [
    "AfterSave",
    "Failure",
    "Work",
    "apply_locked",
    "locked_transaction",
    "noted",
    "run_unit",
]

AfterSave: TypeAlias = Callable[[StateTransaction, Message, ProcessedMessage], None]
"""Called inside the transaction after a decoded message is saved (e.g. RESP matching)."""

Tx = TypeVar("Tx", bound=StateTransaction)


@contextmanager
def locked_transaction(store: Transactional[Tx], epoch: int | None) -> Iterator[Tx]:
    """A store transaction holding PIPELINE_LOCK, fenced by *epoch* (None: no fence, e.g.
    an operator's requeue); commits when the block ends normally."""
    with store.transaction() as tx:
        tx.lock_pipeline(epoch)
        yield tx


@frozen
class Work:
    """One message of a unit: its row, its decoding, its attempt number, and ``forced``:
    a decision recorded as it is instead of deciding (DEAD with the pump's reason);
    ``requeued``: an operator's requeue (``DecisionContext.requeued``)."""

    row: InboxRow
    decoded: Decoded
    attempts: int = 1
    forced: Decision | None = None
    requeued: bool = False

    def message(self) -> Message | None:
        """The message to decide and to look up, if there is one."""
        decoded = self.decoded
        return None if self.forced is not None or isinstance(decoded, Undecodable) else decoded


# --------------------------------------------------------------------------- reads


def _prefetch(
    tx: StateTransaction, overlay: Overlay, work: Sequence[Work]
) -> tuple[set[int], Duplicates]:
    """One read of each kind for the whole unit."""
    ids = [item.row.message_id for item in work]
    messages = [(item.row, m) for item in work if (m := item.message()) is not None]
    dups: Duplicates
    if isinstance(tx, BatchTransaction):
        keys = {(m.envelope.identity_key, payload_digest(m, row)) for row, m in messages}
        if isinstance(tx, UnitReadAhead):
            named = [overlay.named(m) for _, m in messages]
            tx.read_ahead(ids, keys, sorted({f for n in named for f in n.with_masters}),
                          sorted({f for n in named for f in n.own}))  # fmt: skip
        done, dups = tx.get_procs(ids), Duplicates(tx.find_duplicates(keys))
    else:
        done = {mid for mid in ids if tx.get_proc(mid) is not None}
        dups = FallbackDuplicates(tx)
    _prefetch_closure(overlay, [m for _, m in messages])
    overlay.ensure_codeshares({flid for _, m in messages for flid in overlay.named(m).own})
    return done, dups


def _prefetch_closure(overlay: Overlay, messages: Sequence[Message]) -> None:
    """Load every flight the messages name, then their masters and listed codeshares,
    in as few reads as the links allow (usually two)."""
    wanted = {flid for m in messages for flid in overlay.named(m).with_masters}
    while wanted:
        overlay.ensure(wanted)
        known = {f: s for f, s in overlay.states.items() if s is not None}
        needed = {f for m in messages for f in needed_flids(m, known, overlay.named(m))}
        wanted = needed - set(overlay.states)


def _version_floors(tx: StateTransaction, absent: Collection[str]) -> dict[str, int]:
    """Archived versions of FLIDs absent from the current state (if the store keeps any)."""
    if not absent or not isinstance(tx, ArchivedVersions):
        return {}
    return tx.version_floors(sorted(absent))


# --------------------------------------------------------------------------- deciding


def _decision(
    item: Work, overlay: Overlay, dups: Duplicates,
    *, config: CoreConfig, now: datetime, floors: Mapping[str, int],
) -> Decision:  # fmt: skip
    if item.forced is not None:
        return item.forced
    decoded, row = item.decoded, item.row
    if isinstance(decoded, Undecodable):
        return Decision(outcome=Outcome.DEAD, reason=str(decoded.error))
    dttm = decoded.envelope.dttm
    key = (decoded.envelope.identity_key, payload_digest(decoded, row))
    if dttm is not None:  # no send time: nothing tells a re-send from a new message
        original = dups.original_of(key, dttm)
        if original is not None:
            return Decision(outcome=Outcome.DUPLICATE, reason=f"duplicate of message {original}")
    current = overlay.current_for(decoded)
    mine = {flid: floors[flid] for flid in overlay.named(decoded).own if flid in floors}
    context = DecisionContext(row.message_id, now, mine, requeued=item.requeued)
    decision = decide(current, decoded, config, context)
    if decision.outcome is Outcome.SUCCEEDED:
        dups.record(key, row.message_id, dttm)
    return decision


Failure: TypeAlias = tuple[InboxRow, Exception]
"""A message whose processing raised, and what it raised."""


def _decide_all(
    tx: StateTransaction, work: Sequence[Work], config: CoreConfig, now: datetime
) -> tuple[list[ProcessedMessage], Failure | None]:
    """Decide each message in FIFO order against the overlay, skipping replays; stop at the
    first unexpected error (returned with the outcomes decided before it)."""
    overlay = Overlay(tx)
    done, dups = _prefetch(tx, overlay, work)
    floors = _version_floors(tx, [f for f, s in overlay.states.items() if s is None])
    results: list[ProcessedMessage] = []
    for item in work:
        if item.row.message_id in done:
            continue
        try:
            decision = _decision(item, overlay, dups, config=config, now=now, floors=floors)
        except Exception as exc:
            return results, (item.row, exc)
        results.append(
            build_processed(item.row, item.decoded, decision, now=now, attempts=item.attempts)
        )
        for flid, state in (*decision.states.items(), *decision.stamped.items()):
            overlay.put(flid, state)
        done.add(item.row.message_id)
    return results, None


# --------------------------------------------------------------------------- writing


def _save(
    tx: StateTransaction,
    work: Sequence[Work],
    results: Sequence[ProcessedMessage],
    after_save: AfterSave | None,
) -> None:
    """One write for the unit, then the hook for each decided message that was saved."""
    if not results:
        return
    if isinstance(tx, BatchTransaction):
        tx.save_many(results)
    else:
        for processed in results:
            tx.save(processed)
    if after_save is None:
        return
    messages = {item.row.message_id: m for item in work if (m := item.message()) is not None}
    for processed in results:
        message = messages.get(processed.proc.message_id)
        if message is not None:
            after_save(tx, message, processed)


def noted(failure: Failure, committed: int) -> Exception:
    """The failure's exception, with a note naming the message and what did commit."""
    row, error = failure
    error.add_note(
        f"unit of work: failed at message {row.message_id}; "
        f"{committed} earlier message(s) committed"
    )
    return error


# --------------------------------------------------------------------------- entry points


def apply_locked(
    tx: StateTransaction,
    work: Sequence[Work],
    config: CoreConfig,
    *,
    now: datetime,
    after_save: AfterSave | None = None,
) -> list[ProcessedMessage]:
    """The unit's work inside a transaction the caller opened through
    ``locked_transaction`` (a requeue, or a savepoint per message). A deciding error is
    raised after the messages before it are saved, in the caller's transaction."""
    results, failure = _decide_all(tx, work, config, now)
    _save(tx, work, results, after_save)
    if failure is not None:
        raise noted(failure, len(results))
    return results


def run_unit(
    store: StateStore,
    work: Sequence[Work],
    config: CoreConfig,
    *,
    now: datetime,
    epoch: int | None,
    after_save: AfterSave | None = None,
) -> list[ProcessedMessage]:
    """Lock, decide in FIFO order, write once, commit (see the module docstring for the
    failure rules). Returns what was written; messages already processed are skipped."""
    results: list[ProcessedMessage] = []
    failure: Failure | None = None
    if work:
        with locked_transaction(store, epoch) as tx:
            results, failure = _decide_all(tx, work, config, now)
            _save(tx, work, results, after_save)
    if failure is not None:
        raise noted(failure, len(results))
    return results
