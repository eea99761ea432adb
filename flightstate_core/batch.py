"""Batch processing: many inbox messages, one transaction, batch-level reads, one write.

Why: applying a message costs a handful of statements (replay check, duplicate check,
flight loads, codeshare look-up, writes). Issued per message they are round trips, and
round trips, not Python, bound the rate. Here a batch does each kind of read once for all
its messages, decides every message in FIFO order against an in-memory overlay of the
states (so message 7 sees what message 3 changed), and writes everything once.

Each message keeps its own outcome (its own PROC_STATE row, events, backfill intent).
Failure rules, so that a failing message never takes the others with it:

- a message whose *deciding* raises unexpectedly: the messages before it are written and
  committed, and the exception is re-raised for the caller to retry that message alone;
- the *write* raising (a store error, or a row the store refuses): nothing of the batch
  commits and the exception propagates; the caller (the pump) then goes one message at a
  time, so only the offending message is affected.

Duplicates and replays inside one batch are seen too: the overlay records each SUCCEEDED
message's identity key and digest as it goes.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

from flightstate_core import service
from flightstate_core.config import CoreConfig
from flightstate_core.decision import Decision, DecisionContext, Outcome
from flightstate_core.handlers import NamedFlids, decide, named_flids, needed_flids
from flightstate_core.messages import Message
from flightstate_core.ports import StateStore, StateTransaction
from flightstate_core.records import InboxRow, ProcessedMessage
from flightstate_core.service import AfterSave, Decoded, Undecodable, build_processed
from flightstate_core.state import FlightState

__all__ = ["BatchTransaction", "DuplicateKey", "process_batch"]

DuplicateKey = tuple[str, str]  # (identity_key, payload digest)


@runtime_checkable
class BatchTransaction(StateTransaction, Protocol):
    """Optional batch reads and one batch write; a store without them still works."""

    def get_procs(self, message_ids: Collection[int]) -> set[int]:
        """Which of these message ids already have a PROC_STATE row."""

    def find_duplicates(
        self, keys: Collection[DuplicateKey]
    ) -> dict[DuplicateKey, list[tuple[int, datetime | None]]]:
        """SUCCEEDED (message id, DTTM) pairs for each (identity_key, digest) asked."""

    def save_many(self, processed: Sequence[ProcessedMessage]) -> None:
        """Write several processed messages as one (same effect as saving each in order)."""


class _OneByOne:
    """The batch operations on a transaction that only has the per-message ones."""

    def __init__(self, tx: StateTransaction) -> None:
        self.tx = tx

    def get_procs(self, message_ids: Collection[int]) -> set[int]:
        return {mid for mid in message_ids if self.tx.get_proc(mid) is not None}

    def save_many(self, processed: Sequence[ProcessedMessage]) -> None:
        for one in processed:
            self.tx.save(one)


def _digest_of(message: Message, row: InboxRow) -> str:
    import hashlib  # noqa: PLC0415 - only for messages without a codec digest

    return message.payload_digest or hashlib.sha256(row.raw.encode("utf-8")).hexdigest()


class _Overlay:
    """Current states as this batch sees them: the store's, then the batch's own changes.

    ``by_master`` indexes codeshares by their MAID so finding a master's codeshares does
    not scan every state the batch holds.
    """

    def __init__(self, tx: StateTransaction) -> None:
        self.tx = tx
        self.states: dict[str, FlightState | None] = {}  # None: known not to exist
        self.by_master: dict[str, set[str]] = {}
        self.codeshares_asked: set[str] = set()
        # By identity of the message: the batch holds every message until it ends.
        self._named: dict[int, NamedFlids] = {}

    def named(self, message: Message) -> NamedFlids:
        """``named_flids(message)``, computed once per message."""
        found = self._named.get(id(message))
        if found is None:
            found = self._named[id(message)] = named_flids(message)
        return found

    def put(self, flid: str, state: FlightState | None) -> None:
        old = self.states.get(flid)
        if old is not None and (master := _master_of(old)) is not None:
            self.by_master.get(master, set()).discard(flid)
        self.states[flid] = state
        if state is not None and (master := _master_of(state)) is not None:
            self.by_master.setdefault(master, set()).add(flid)

    def ensure(self, flids: Iterable[str]) -> None:
        missing = sorted({flid for flid in flids if flid not in self.states})
        if missing:
            found = self.tx.load_flights(missing)
            for flid in missing:
                self.put(flid, found.get(flid))

    def ensure_codeshares(self, masters: Iterable[str]) -> None:
        missing = sorted(set(masters) - self.codeshares_asked)
        if missing:
            self.codeshares_asked.update(missing)
            for flid, state in self.tx.load_codeshares(missing).items():
                if flid not in self.states:  # the batch's own version is newer
                    self.put(flid, state)

    def current_for(self, message: Message) -> dict[str, FlightState]:
        """What ``decide`` needs: named flights, masters, and codeshares of named flights."""
        current: dict[str, FlightState] = {}
        asked: set[str] = set()
        named = self.named(message)
        while wanted := needed_flids(message, current, named) - asked:
            asked |= wanted
            self.ensure(wanted)
            current.update((f, s) for f in wanted if (s := self.states[f]) is not None)
        masters = named.own
        if masters:
            self.ensure_codeshares(masters)
            for master in masters:
                for flid in sorted(self.by_master.get(master, ())):
                    state = self.states[flid]
                    if state is not None:
                        current.setdefault(flid, state)
        return current


def _master_of(state: FlightState) -> str | None:
    master = state.scalars.get("MAID")
    return master if master is not None and master != state.flid else None


class _Duplicates:
    """Business-duplicate look-up over the store's history and this batch's successes."""

    def __init__(self, found: Mapping[DuplicateKey, list[tuple[int, datetime | None]]]) -> None:
        self.seen: dict[DuplicateKey, list[tuple[int, datetime | None]]] = {
            key: list(pairs) for key, pairs in found.items()
        }

    def original_of(self, key: DuplicateKey, dttm: datetime) -> int | None:
        """The newest earlier success that is this very message (same key, digest, DTTM)."""
        pairs = self.seen.get(key, ())
        matches = [mid for mid, sent in pairs if sent is not None and sent == dttm]
        return max(matches) if matches else None

    def record(self, key: DuplicateKey, message_id: int, dttm: datetime | None) -> None:
        self.seen.setdefault(key, []).append((message_id, dttm))


def _prefetch(
    tx: StateTransaction, overlay: _Overlay, prepared: Sequence[tuple[InboxRow, Decoded]]
) -> tuple[set[int], _Duplicates]:
    """One read of each kind for the whole batch."""
    ids = [row.message_id for row, _ in prepared]
    messages = [(row, d) for row, d in prepared if not isinstance(d, Undecodable)]
    keys = {(m.envelope.identity_key, _digest_of(m, row)) for row, m in messages}
    if isinstance(tx, BatchTransaction):
        done, found = tx.get_procs(ids), tx.find_duplicates(keys)
    else:
        done, found = _OneByOne(tx).get_procs(ids), {}
    _prefetch_closure(overlay, [m for _, m in messages])
    overlay.ensure_codeshares({flid for _, m in messages for flid in overlay.named(m).own})
    return done, _Duplicates(found) if isinstance(tx, BatchTransaction) else _FallbackDuplicates(tx)


def _prefetch_closure(overlay: _Overlay, messages: Sequence[Message]) -> None:
    """Load every flight the messages name, then their masters and listed codeshares,
    in as few reads as the links allow (usually two)."""
    wanted = {flid for m in messages for flid in overlay.named(m).with_masters}
    while wanted:
        overlay.ensure(wanted)
        known = {f: s for f, s in overlay.states.items() if s is not None}
        wanted = {
            f for m in messages for f in needed_flids(m, known, overlay.named(m))
        } - set(overlay.states)


class _FallbackDuplicates(_Duplicates):
    """Per-message duplicate queries, for a store without ``find_duplicates``."""

    def __init__(self, tx: StateTransaction) -> None:
        super().__init__({})
        self.tx = tx

    def original_of(self, key: DuplicateKey, dttm: datetime) -> int | None:
        in_batch = super().original_of(key, dttm)
        return in_batch if in_batch is not None else self.tx.find_duplicate(key[0], key[1], dttm)


def _decision(
    row: InboxRow, decoded: Decoded, overlay: _Overlay, dups: _Duplicates,
    *, config: CoreConfig, now: datetime, floors: Mapping[str, int],
) -> Decision:  # fmt: skip
    if isinstance(decoded, Undecodable):
        return Decision(outcome=Outcome.DEAD, reason=str(decoded.error))
    dttm = decoded.envelope.dttm
    key = (decoded.envelope.identity_key, _digest_of(decoded, row))
    if dttm is not None:
        original = dups.original_of(key, dttm)
        if original is not None:
            return Decision(outcome=Outcome.DUPLICATE, reason=f"duplicate of message {original}")
    current = overlay.current_for(decoded)
    mine = {flid: floors[flid] for flid in overlay.named(decoded).own if flid in floors}
    decision = decide(current, decoded, config, DecisionContext(row.message_id, now, mine))
    if decision.outcome is Outcome.SUCCEEDED:
        dups.record(key, row.message_id, dttm)
    return decision


def _save(tx: StateTransaction, processed: Sequence[ProcessedMessage]) -> None:
    if not processed:
        return
    if isinstance(tx, BatchTransaction):
        tx.save_many(processed)
    else:
        _OneByOne(tx).save_many(processed)


def process_batch(
    store: StateStore,
    rows: Sequence[InboxRow],
    config: CoreConfig,
    *,
    now: datetime,
    epoch: int | None,
    after_save: AfterSave | None = None,
) -> list[ProcessedMessage]:
    """Process rows in FIFO order in one transaction (see the module docstring for the
    failure rules). Returns what was written; rows already processed are skipped.
    ``after_save`` runs inside the transaction, after the write, for each decoded message."""
    prepared: list[tuple[InboxRow, Decoded]] = []
    failure: tuple[InboxRow, Exception] | None = None
    decode = rows.decoded_row if isinstance(rows, service.PreparedRows) else service.decode_row
    for row in rows:
        try:
            prepared.append((row, decode(row, config)))
        except Exception as exc:  # an unexpected codec failure: this row waits
            failure = (row, exc)
            break
    results: list[ProcessedMessage] = []
    if prepared:
        with store.transaction() as tx:
            tx.lock_pipeline(epoch)
            failure = _apply(tx, prepared, config, now, results) or failure
            _save(tx, results)
            if after_save is not None:
                _after_save(tx, prepared, results, after_save)
    if failure is not None:
        failed_row, error = failure
        # What did commit travels with the error, for the caller's logs and metrics.
        error.committed = results  # type: ignore[attr-defined]
        error.add_note(
            f"process_batch: failed at message {failed_row.message_id}; "
            f"{len(results)} earlier message(s) committed"
        )
        raise error
    return results


def _after_save(
    tx: StateTransaction,
    prepared: Sequence[tuple[InboxRow, Decoded]],
    results: Sequence[ProcessedMessage],
    hook: AfterSave,
) -> None:
    decoded_by_id = {row.message_id: decoded for row, decoded in prepared}
    for processed in results:
        decoded = decoded_by_id[processed.proc.message_id]
        if not isinstance(decoded, Undecodable):
            hook(tx, decoded, processed)


def _apply(
    tx: StateTransaction,
    prepared: Sequence[tuple[InboxRow, Decoded]],
    config: CoreConfig,
    now: datetime,
    results: list[ProcessedMessage],
) -> tuple[InboxRow, Exception] | None:
    """Decide each message against the overlay; stop at the first unexpected error."""
    overlay = _Overlay(tx)
    done, dups = _prefetch(tx, overlay, prepared)
    floors = service.version_floors(tx, [f for f, s in overlay.states.items() if s is None])
    for row, decoded in prepared:
        if row.message_id in done:
            continue
        try:
            decision = _decision(
                row, decoded, overlay, dups, config=config, now=now, floors=floors
            )
        except Exception as exc:
            return (row, exc)
        results.append(build_processed(row, decoded, decision, now=now, attempts=1))
        for flid, state in decision.states.items():
            overlay.put(flid, state)
        done.add(row.message_id)
    return None
