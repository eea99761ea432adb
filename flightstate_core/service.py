"""One message, one transaction (docs/design.md "the service flow", seed §4).

1. decode outside the lock (pure; a ProtocolError makes the message DEAD);
2. ``store.transaction()``, ``tx.lock_pipeline(epoch)`` (a stale epoch raises
   LeadershipLost before anything is written);
3. ``tx.get_proc``: already processed -> ``None`` (nothing applied: replay safety);
4. business duplicate (an earlier SUCCEEDED message with the same identity_key, payload
   digest and DTTM: a re-send of this very message) -> DUPLICATE;
5. load the named flights, their masters and codeshares (``needed_flids`` until it is
   satisfied, plus ``tx.load_codeshares`` for the message's FLIDs);
6. ``decide``; 7. ``tx.save(ProcessedMessage)`` and commit.

``process_batch`` runs several messages in one transaction with batch-level reads and one
write (``flightstate_core.batch``). If one message's deciding raises, the messages before
it commit and the exception is re-raised (with a note naming the message) for the caller
to retry that message alone. Retrying is safe: committed messages are replays (``None``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Sequence
from datetime import datetime
from typing import Final, TypeAlias

from attrs import frozen

from flightstate_core.config import CoreConfig
from flightstate_core.decision import Decision, DecisionContext, Outcome
from flightstate_core.errors import ProtocolError
from flightstate_core.handlers import decide, message_flids, needed_flids
from flightstate_core.limits import ENVELOPE_TEXT_MAX_BYTES, bounded_display
from flightstate_core.messages import Envelope, Message, ScheduleMessage
from flightstate_core.ports import ArchivedVersions, StateStore, StateTransaction
from flightstate_core.records import (
    BackfillIntent,
    InboxRow,
    ProcessedMessage,
    ProcRecord,
    SnapLogEntry,
)
from flightstate_core.state import FlightState

__all__ = [
    "Decoded",
    "PreparedRows",
    "Undecodable",
    "build_processed",
    "decode_row",
    "prepare_rows",
    "process_batch",
    "process_message",
    "record_dead",
]


@frozen
class Undecodable:
    """A row whose decoding raised ``error``; ``envelope`` is its META when that parsed."""

    error: ProtocolError
    envelope: Envelope | None = None


Decoded = Message | Undecodable
"""What decoding a row gives: a Message, or why it could not be decoded."""

AfterSave: TypeAlias = Callable[[StateTransaction, Message, ProcessedMessage], None]
"""Called inside the transaction after a decoded message is saved (e.g. RESP matching)."""

MEDIUMINT_MAX: Final = 8_388_607  # cminmsgs.CMINMSGS_SUBSYSTEM_SEQUENCE is a MEDIUMINT
_SUBSYSTEM_WIDTH: Final = 4  # varchar(4) columns
_REASON_MAX: Final = 1000  # PROC_STATE.REASON stays well inside Oracle's 4000 bytes
_PACKAGE_STYPES: Final = frozenset({"DNLD", "RESP"})


def decode_row(row: InboxRow, config: CoreConfig) -> Decoded:
    """Decode one inbox row; a ProtocolError is returned as ``Undecodable``, not raised."""
    from flightstate_core.codec import decode, decode_envelope  # noqa: PLC0415 - lazy

    if row.size is not None:  # left unread by the inbox: over the limit (as the codec says)
        reason = f"message is {row.size} bytes, over the {config.max_message_bytes} limit"
        return Undecodable(ProtocolError("/", reason))
    try:
        message: Message = decode(row.raw, config)
    except ProtocolError as exc:
        try:
            envelope: Envelope | None = decode_envelope(row.raw, config)
        except ProtocolError:
            envelope = None
        return Undecodable(exc, envelope)
    return message


class PreparedRows(list[InboxRow]):
    """Inbox rows some of which are already decoded (``decoded``: message id -> the raw
    text decoded and the result). Decoding is pure and independent of any state, so the
    pump decodes the next batch on its read-ahead thread while the current one is applied;
    ``process_batch`` then uses these results instead of decoding again."""

    def __init__(self, rows: Sequence[InboxRow], decoded: dict[int, tuple[str, Decoded]]):
        super().__init__(rows)
        self.decoded = decoded

    def decoded_row(self, row: InboxRow, config: CoreConfig) -> Decoded:
        """The prepared decode of *row* if it is of this very text, else a fresh decode."""
        known = self.decoded.get(row.message_id)
        if known is not None and known[0] is row.raw:
            return known[1]
        return decode_row(row, config)


def prepare_rows(rows: Sequence[InboxRow], config: CoreConfig) -> PreparedRows:
    """Decode *rows* ahead of ``process_batch``; a row whose decoding raises unexpectedly
    is left undecoded, so that ``process_batch`` meets (and reports) the error itself."""
    decoded: dict[int, tuple[str, Decoded]] = {}
    for row in rows:
        try:
            decoded[row.message_id] = (row.raw, decode_row(row, config))
        except Exception:  # noqa: S112 - reported where the row is applied
            continue
    return PreparedRows(rows, decoded)


def _safe_envelope(row: InboxRow, config: CoreConfig) -> Envelope | None:
    """META of a row for a DEAD record, or None whatever goes wrong."""
    from flightstate_core.codec import decode_envelope  # noqa: PLC0415 - lazy

    try:
        return decode_envelope(row.raw, config)
    except Exception:
        return None


def _as_decoded(value: Message | Undecodable | ProtocolError) -> Decoded:
    return Undecodable(value) if isinstance(value, ProtocolError) else value


def _fits(text: str | None) -> str | None:
    return text if text is not None and 0 < len(text) <= _SUBSYSTEM_WIDTH else None


def _sequence(seqn: str) -> int | None:
    text = seqn.strip()
    if not (text.isascii() and text.isdigit()):
        return None
    value = int(text)
    return value if value <= MEDIUMINT_MAX else None


def _backfill(
    row: InboxRow, env: Envelope | None, status: Outcome, now: datetime
) -> BackfillIntent:
    if env is None:
        return BackfillIntent(row.message_id, status, now)
    return BackfillIntent(
        message_id=row.message_id,
        status=status,
        processed_at=now,
        subsystem_name=_fits(env.sndr),
        subsystem_type=_fits(env.type),
        subsystem_subtype=_fits(env.styp),
        subsystem_sequence=_sequence(env.seqn),
        subsystem_date_sent=env.dttm.replace(tzinfo=None) if env.dttm is not None else None,
    )


def _digest(message: Message, row: InboxRow) -> str:
    return message.payload_digest or hashlib.sha256(row.raw.encode("utf-8")).hexdigest()


def _snap_log(row: InboxRow, message: Message, decision: Decision) -> SnapLogEntry | None:
    if not isinstance(message, ScheduleMessage) or message.envelope.styp not in _PACKAGE_STYPES:
        return None
    if decision.outcome is not Outcome.SUCCEEDED:
        return None
    flids = tuple(record.flid for record in message.records)
    days = {state.operation_day for state in decision.states.values()}
    return SnapLogEntry(
        message_id=row.message_id,
        styp=message.envelope.styp,
        flids=flids,
        operation_days=tuple(sorted(day for day in days if day is not None)),
        record_count=len(message.records),
    )


def _reason(decision: Decision) -> str | None:
    """The decision's reason, else its notes (why something was not applied), bounded."""
    text = decision.reason or "; ".join(decision.notes) or None
    return text if text is None or len(text) <= _REASON_MAX else text[: _REASON_MAX - 3] + "..."


def build_processed(
    row: InboxRow,
    decoded: Decoded,
    decision: Decision,
    *,
    now: datetime,
    attempts: int,
) -> ProcessedMessage:
    """Everything one message writes: PROC_STATE, states, events, backfill, cursor, snap log."""
    message = None if isinstance(decoded, Undecodable) else decoded
    env = decoded.envelope
    proc = ProcRecord(
        message_id=row.message_id,
        identity_key=env.identity_key if env is not None else None,
        payload_digest=_digest(message, row) if message is not None else None,
        type=bounded_display(env.type, ENVELOPE_TEXT_MAX_BYTES) if env is not None else None,
        styp=bounded_display(env.styp, ENVELOPE_TEXT_MAX_BYTES) if env is not None else None,
        status=decision.outcome,
        reason=_reason(decision),
        attempts=attempts,
        received_at=row.received_at,
        processed_at=now,
        dttm=env.dttm if env is not None else None,
        late=row.late,
    )
    return ProcessedMessage(
        proc=proc,
        states=decision.states,
        events=decision.events,
        backfill=_backfill(row, env, decision.outcome, now),
        cursor=row.message_id,
        snap_log=_snap_log(row, message, decision) if message is not None else None,
        opens_gaps=row.gaps_below,
    )


def _load(tx: StateTransaction, message: Message) -> dict[str, FlightState]:
    current: dict[str, FlightState] = {}
    asked: set[str] = set()
    while True:
        wanted = needed_flids(message, current) - asked
        if not wanted:
            break
        asked |= wanted
        current.update(tx.load_flights(sorted(wanted)))
    flids = message_flids(message)
    if flids:
        for flid, state in tx.load_codeshares(flids).items():
            current.setdefault(flid, state)
    return current


def _duplicate_of(tx: StateTransaction, message: Message, row: InboxRow) -> int | None:
    dttm = message.envelope.dttm
    if dttm is None:  # no send time: nothing tells a re-send from a new message
        return None
    return tx.find_duplicate(message.envelope.identity_key, _digest(message, row), dttm)


def _decide_in_tx(
    tx: StateTransaction, row: InboxRow, decoded: Decoded, config: CoreConfig, now: datetime
) -> Decision:
    if isinstance(decoded, Undecodable):
        return Decision(outcome=Outcome.DEAD, reason=str(decoded.error))
    original = _duplicate_of(tx, decoded, row)
    if original is not None:
        return Decision(outcome=Outcome.DUPLICATE, reason=f"duplicate of message {original}")
    current = _load(tx, decoded)
    floors = version_floors(tx, message_flids(decoded) - current.keys())
    ctx = DecisionContext(message_id=row.message_id, now=now, version_floors=floors)
    return decide(current, decoded, config, ctx)


def version_floors(tx: StateTransaction, absent: Collection[str]) -> dict[str, int]:
    """Archived versions of FLIDs absent from the current state (if the store keeps any)."""
    if not absent or not isinstance(tx, ArchivedVersions):
        return {}
    return tx.version_floors(sorted(absent))


def _process_in_tx(  # noqa: PLR0917 - internal; tests/pg calls it positionally
    tx: StateTransaction,
    row: InboxRow,
    decoded: Decoded,
    config: CoreConfig,
    now: datetime,
    attempts: int,
    after_save: AfterSave | None = None,
) -> ProcessedMessage | None:
    if tx.get_proc(row.message_id) is not None:
        return None
    decision = _decide_in_tx(tx, row, decoded, config, now)
    processed = build_processed(row, decoded, decision, now=now, attempts=attempts)
    tx.save(processed)
    if after_save is not None and not isinstance(decoded, Undecodable):
        after_save(tx, decoded, processed)
    return processed


def process_message(
    store: StateStore,
    row: InboxRow,
    config: CoreConfig,
    *,
    now: datetime,
    epoch: int | None,
    attempts: int = 1,
    decoded: Message | Undecodable | ProtocolError | None = None,
    after_save: AfterSave | None = None,
) -> ProcessedMessage | None:
    """Process one inbox row in its own transaction; ``None`` if it was already processed.

    ``decoded`` skips decoding (a Message, or the ProtocolError decoding raised).
    LeadershipLost and store errors propagate (nothing committed).
    """
    subject = decode_row(row, config) if decoded is None else _as_decoded(decoded)
    with store.transaction() as tx:
        tx.lock_pipeline(epoch)
        return _process_in_tx(tx, row, subject, config, now, attempts, after_save)


def process_batch(
    store: StateStore,
    rows: Sequence[InboxRow],
    config: CoreConfig,
    *,
    now: datetime,
    epoch: int | None,
    after_save: AfterSave | None = None,
) -> list[ProcessedMessage]:
    """Process rows in FIFO order in one transaction: see ``flightstate_core.batch``.

    Returns what was written (replays are skipped). If deciding a message raises, the
    messages before it commit and the exception is re-raised for the caller to retry that
    message alone; if the batch's write raises, nothing commits.
    """
    from flightstate_core.batch import process_batch as run_batch  # noqa: PLC0415 - cycle

    return run_batch(store, rows, config, now=now, epoch=epoch, after_save=after_save)


def record_dead(
    store: StateStore,
    row: InboxRow,
    reason: str,
    config: CoreConfig,
    *,
    now: datetime,
    epoch: int | None,
    attempts: int,
    decoded: Message | Undecodable | None = None,
) -> ProcessedMessage | None:
    """Record a message DEAD with ``reason`` (the pump's "unexpected error N times").

    Nothing is applied; PROC_STATE, backfill intent and cursor are written. ``None`` if
    the message already has a PROC_STATE row.
    """
    subject = (
        decoded
        if decoded is not None
        else Undecodable(ProtocolError("/MSG", reason), _safe_envelope(row, config))
    )
    with store.transaction() as tx:
        tx.lock_pipeline(epoch)
        if tx.get_proc(row.message_id) is not None:
            return None
        decision = Decision(outcome=Outcome.DEAD, reason=reason)
        processed = build_processed(row, subject, decision, now=now, attempts=attempts)
        tx.save(processed)
        return processed
