"""From an inbox row to what it writes: decoding (pure) and the outcome's records.

Decoding never raises a ProtocolError (``Undecodable`` carries it, and the META when that
parsed), so the pump can decode ahead on another thread (``PreparedRows``) and a message
that cannot be decoded still becomes a DEAD outcome. ``build_processed`` turns a row, its
decoding and the decision into everything one message writes: PROC_STATE, states, events,
backfill intent, cursor and snap log. The unit of work (``flightstate_core.engine.unit_of_work``)
is the only caller inside the core; nothing here touches a store.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime
from typing import Final

from attrs import frozen

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.decision import Decision, Outcome
from flightstate_core.domain.errors import ProtocolError
from flightstate_core.domain.limits import ENVELOPE_TEXT_MAX_BYTES, bounded_display
from flightstate_core.domain.messages import Envelope, Message, ScheduleMessage
from flightstate_core.domain.records import (
    BackfillIntent,
    InboxRow,
    ProcessedMessage,
    ProcRecord,
    SnapLogEntry,
)

__all__ = [
    "MEDIUMINT_MAX",
    "Decoded",
    "PreparedRows",
    "Undecodable",
    "as_decoded",
    "build_processed",
    "decode_row",
    "join_prepared",
    "payload_digest",
    "prepare_rows",
    "safe_envelope",
]


@frozen
class Undecodable:
    """A row whose decoding raised ``error``; ``envelope`` is its META when that parsed."""

    error: ProtocolError
    envelope: Envelope | None = None


Decoded = Message | Undecodable
"""What decoding a row gives: a Message, or why it could not be decoded."""

MEDIUMINT_MAX: Final = 8_388_607  # cminmsgs.CMINMSGS_SUBSYSTEM_SEQUENCE is a MEDIUMINT
_SUBSYSTEM_WIDTH: Final = 4  # varchar(4) columns
_REASON_MAX: Final = 1000  # PROC_STATE.REASON stays well inside Oracle's 4000 bytes
_PACKAGE_STYPES: Final = frozenset({"DNLD", "RESP"})


def decode_row(row: InboxRow, config: CoreConfig) -> Decoded:
    """Decode one inbox row; a ProtocolError is returned as ``Undecodable``, not raised."""
    from flightstate_core.domain.codec import decode, decode_envelope  # noqa: PLC0415 - lazy

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


def join_prepared(chunks: Sequence[Sequence[InboxRow]]) -> Sequence[InboxRow]:
    """The rows of *chunks* in order, one ``PreparedRows`` carrying every chunk's decodes
    (a chunk that is not ``PreparedRows`` adds its rows undecoded: ``process_batch``
    decodes those itself). The read-ahead prepares what it gathers chunk by chunk."""
    if len(chunks) == 1:
        return chunks[0]
    rows: list[InboxRow] = []
    decoded: dict[int, tuple[str, Decoded]] = {}
    for chunk in chunks:
        rows.extend(chunk)
        if isinstance(chunk, PreparedRows):
            decoded.update(chunk.decoded)
    return PreparedRows(rows, decoded)


def safe_envelope(row: InboxRow, config: CoreConfig) -> Envelope | None:
    """META of a row for a DEAD record, or None whatever goes wrong."""
    from flightstate_core.domain.codec import decode_envelope  # noqa: PLC0415 - lazy

    try:
        return decode_envelope(row.raw, config)
    except Exception:
        return None


def as_decoded(value: Message | Undecodable | ProtocolError) -> Decoded:
    """What a caller passes as already decoded, as a ``Decoded`` (an error: Undecodable)."""
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


def payload_digest(message: Message, row: InboxRow) -> str:
    """The digest duplicates are judged by: the codec's, else SHA-256 of the raw text."""
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
        payload_digest=payload_digest(message, row) if message is not None else None,
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
        stamped=decision.stamped,
    )
