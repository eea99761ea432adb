"""Rows of PROC_STATE, MSG_EVENT and SCHD_SNAP_LOG <-> core records (pure).

PROC_STATE holds the message's outcome and, when there is one, its backfill intent
(SUBSYSTEM_* columns; the intent's status and time are STATUS and PROCESSED_AT, as in
flightstate_pg). Texts that may be ``""`` keep it through EMPTY_CODES (see ``_presence``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from flightstate_core.domain.decision import Outcome
from flightstate_core.domain.records import (
    BackfillIntent,
    OutboxRecord,
    ProcessedMessage,
    ProcRecord,
    SnapLogEntry,
)
from flightstate_core.domain.write_plan import payload_text, snap_texts
from flightstate_oracle._presence import (
    decode_text,
    encode_texts,
    from_utc_naive,
    parse_empty_codes,
    to_utc_naive,
)
from flightstate_oracle._rows import Row, check_row
from flightstate_oracle._schema import EMPTY_CODES, PROC_TEXT_COLUMNS, TABLES, utf8_len

__all__ = [
    "MAX_ERROR_BYTES",
    "event_rows",
    "intent_from_row",
    "outbox_record",
    "proc_from_row",
    "proc_row",
    "snap_row",
    "truncate_bytes",
]

MAX_ERROR_BYTES = 4000


def truncate_bytes(text: str, limit: int = MAX_ERROR_BYTES) -> str:
    """At most ``limit`` UTF-8 bytes of ``text``, cut on a character boundary."""
    if utf8_len(text) <= limit:
        return text
    return text.encode("utf-8")[:limit].decode("utf-8", "ignore")


def proc_row(processed: ProcessedMessage) -> Row:
    """Bind values of the PROC_STATE insert (with the backfill intent's columns, which the
    write plan has checked: ``write_plan.check_intent``)."""
    proc, intent = processed.proc, processed.backfill
    texts, empty = encode_texts({
        "IDENTITY_KEY": proc.identity_key, "PAYLOAD_DIGEST": proc.payload_digest,
        "MSG_TYPE": proc.type, "MSG_STYP": proc.styp, "REASON": proc.reason,
        "SUBSYSTEM_NAME": intent.subsystem_name if intent else None,
        "SUBSYSTEM_TYPE": intent.subsystem_type if intent else None,
        "SUBSYSTEM_SUBTYPE": intent.subsystem_subtype if intent else None,
    })  # fmt: skip
    row: Row = {
        "MESSAGE_ID": proc.message_id, **texts, "STATUS": proc.status.value,
        "ATTEMPTS": proc.attempts, "RECEIVED_AT": to_utc_naive(proc.received_at),
        "PROCESSED_AT": to_utc_naive(proc.processed_at), "DTTM": to_utc_naive(proc.dttm),
        "BACKFILL_STATUS": proc.backfill_status, "BACKFILL_AT": to_utc_naive(proc.backfill_at),
        "BACKFILL_ATTEMPTS": proc.backfill_attempts, "BACKFILL_ERROR": None,
        "SUBSYSTEM_SEQUENCE": intent.subsystem_sequence if intent else None,
        "SUBSYSTEM_DATE_SENT": intent.subsystem_date_sent if intent else None,
        EMPTY_CODES: empty, "LATE": 1 if proc.late else 0,
    }  # fmt: skip
    check_row(TABLES["PROC_STATE"], row)
    return row


def _texts(row: Mapping[str, object]) -> dict[str, str | None]:
    empties = parse_empty_codes(_opt_str(row.get(EMPTY_CODES)))
    return {code: decode_text(code, _opt_str(row.get(code)), empties) for code in PROC_TEXT_COLUMNS}


def proc_from_row(row: Mapping[str, object]) -> ProcRecord:
    """The ProcRecord of a PROC_STATE row (timestamps as read via SYS_EXTRACT_UTC)."""
    texts = _texts(row)
    processed_at = from_utc_naive(row["PROCESSED_AT"])
    if processed_at is None:
        raise ValueError("PROC_STATE.PROCESSED_AT is NULL")
    return ProcRecord(
        message_id=_int(row["MESSAGE_ID"]), identity_key=texts["IDENTITY_KEY"],
        payload_digest=texts["PAYLOAD_DIGEST"], type=texts["MSG_TYPE"],
        styp=texts["MSG_STYP"], status=Outcome(str(row["STATUS"])), reason=texts["REASON"],
        attempts=_int(row["ATTEMPTS"]), received_at=from_utc_naive(row.get("RECEIVED_AT")),
        processed_at=processed_at, backfill_status=str(row.get("BACKFILL_STATUS") or ""),
        backfill_at=from_utc_naive(row.get("BACKFILL_AT")),
        backfill_attempts=_int(row["BACKFILL_ATTEMPTS"]),
        dttm=from_utc_naive(row.get("DTTM")), late=_int(row.get("LATE") or 0) == 1,
    )  # fmt: skip


def intent_from_row(row: Mapping[str, object]) -> BackfillIntent:
    """The backfill intent kept in a PROC_STATE row."""
    texts = _texts(row)
    processed_at = from_utc_naive(row["PROCESSED_AT"])
    if processed_at is None:
        raise ValueError("PROC_STATE.PROCESSED_AT is NULL")
    sequence = row.get("SUBSYSTEM_SEQUENCE")
    sent = row.get("SUBSYSTEM_DATE_SENT")
    return BackfillIntent(
        _int(row["MESSAGE_ID"]), Outcome(str(row["STATUS"])), processed_at,
        texts["SUBSYSTEM_NAME"], texts["SUBSYSTEM_TYPE"], texts["SUBSYSTEM_SUBTYPE"],
        None if sequence is None else _int(sequence),
        sent if isinstance(sent, datetime) else None,
    )  # fmt: skip


def event_rows(processed: ProcessedMessage) -> list[Row]:
    """Bind values of the MSG_EVENT inserts (payload bytes as UTF-8 text)."""
    rows: list[Row] = []
    table = TABLES["MSG_EVENT"]
    for event in processed.events:
        payload = payload_text(processed.proc.message_id, event.payload)
        texts, empty = encode_texts({"EVENT_KEY": event.key, "PAYLOAD": payload})
        row: Row = {
            "TOPIC": event.topic,
            **texts,
            "FLID": event.flid,
            "STATE_VERSION": event.state_version,
            "KIND": event.kind.value,
            "MESSAGE_ID": processed.proc.message_id,
            EMPTY_CODES: empty,
        }
        check_row(table, row)
        rows.append(row)
    return rows


def outbox_record(row: Mapping[str, object]) -> OutboxRecord:
    """The OutboxRecord of a MSG_EVENT row."""
    empties = parse_empty_codes(_opt_str(row.get(EMPTY_CODES)))
    payload = decode_text("PAYLOAD", _opt_str(row.get("PAYLOAD")), empties)
    created = from_utc_naive(row["CREATED_AT"])
    if created is None:
        raise ValueError("MSG_EVENT.CREATED_AT is NULL")
    message_id = row.get("MESSAGE_ID")
    return OutboxRecord(
        event_id=_int(row["EVENT_ID"]), topic=str(row["TOPIC"]),
        key=decode_text("EVENT_KEY", _opt_str(row.get("EVENT_KEY")), empties) or "",
        payload=None if payload is None else payload.encode("utf-8"),
        flid=str(row["FLID"]), state_version=_int(row["STATE_VERSION"]),
        message_id=None if message_id is None else _int(message_id), created_at=created,
    )  # fmt: skip


def snap_row(snap: SnapLogEntry) -> Row:
    """Bind values of the SCHD_SNAP_LOG insert (FLIDs and days as JSON arrays)."""
    flids, days = snap_texts(snap)
    return {
        "MESSAGE_ID": snap.message_id, "STYP": snap.styp or None,
        "RECORD_COUNT": snap.record_count, "FLIDS": flids, "OPERATION_DAYS": days,
    }  # fmt: skip


def _opt_str(value: object) -> str | None:
    return None if value is None else str(value)


def _int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"expected a number, got {type(value).__name__}")
    return int(value)
