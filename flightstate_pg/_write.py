"""The writes of a ``save``: pipelined (one round trip) for a message, COPY for a package
or a batch.

Order (each a step the fault hook sees, so tests can fail the save between any two):
``flights`` (main-row upserts), ``details:<TABLE>`` for each detail table (delete-then-
insert per FLID, only for flights whose collections in that table changed), ``events``
(MSG_EVENT), ``proc`` (PROC_STATE with the backfill intent), ``cursor`` (INBOX_CURSOR),
``snap_log`` (SCHD_SNAP_LOG). Multi-row steps use ``executemany`` (no per-item statement),
or COPY for a package or a batch (PROC_STATE too: a batch of 500 messages is 500 rows).
PROC_STATE is a plain INSERT (or COPY): saving a message id twice is refused by its primary
key, so a replay can never add a version or an event (review F7).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import nullcontext
from typing import Any, Final

import psycopg

from flightstate_core.errors import PermanentError
from flightstate_core.gaps import gaps_after, touches_gaps
from flightstate_core.layout import DetailTable
from flightstate_core.records import GapRange, ProcessedMessage
from flightstate_core.state import FlightState
from flightstate_pg._codec import TypedValues, detail_rows, main_row, validate
from flightstate_pg._copy import CopyTarget, copy_rows
from flightstate_pg._schema import DETAILS, MAIN, PROC_COLUMNS, DetailSql

__all__ = ["BULK_FLIGHTS", "WRITE_STEPS", "FaultHook", "write_many", "write_processed"]

Conn = psycopg.Connection[Any]
Cursor = psycopg.Cursor[Any]
#: Called between write steps with the step name and the connection (tests inject faults).
FaultHook = Callable[[str, Conn], None]

WRITE_STEPS: Final = (
    "flights",
    *(f"details:{detail.table.name}" for detail in DETAILS),
    "events",
    "proc",
    "cursor",
    "snap_log",
)

_EVENT_INSERT: Final = (
    "INSERT INTO MSG_EVENT (TOPIC, EVENT_KEY, PAYLOAD, FLID, STATE_VERSION, KIND, MESSAGE_ID) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s)"
)
_EVENT_COPY: Final = CopyTarget(
    "MSG_EVENT",
    ("TOPIC", "EVENT_KEY", "PAYLOAD", "FLID", "STATE_VERSION", "KIND", "MESSAGE_ID"),
    "MSG_EVENT",
)
#: A write with at least this many flights (or event rows) uses COPY instead of a pipeline.
BULK_FLIGHTS: Final = 16
BULK_ROWS: Final = 64
_PROC_INSERT: Final = (
    f"INSERT INTO PROC_STATE ({', '.join(PROC_COLUMNS)}) "  # noqa: S608 - layout identifiers
    f"VALUES ({', '.join(['%s'] * len(PROC_COLUMNS))})"
)
_PROC_COPY: Final = CopyTarget("PROC_STATE", PROC_COLUMNS, "PROC_STATE")
_CURSOR_UPSERT: Final = (
    "INSERT INTO INBOX_CURSOR (INBOX_NAME, LAST_MESSAGE_ID, UPDATED_AT) VALUES (%s, %s, now()) "
    "ON CONFLICT (INBOX_NAME) DO UPDATE SET LAST_MESSAGE_ID = "
    "GREATEST(INBOX_CURSOR.LAST_MESSAGE_ID, EXCLUDED.LAST_MESSAGE_ID), UPDATED_AT = now()"
)
_SNAP_INSERT: Final = (
    "INSERT INTO SCHD_SNAP_LOG (MESSAGE_ID, STYP, RECORD_COUNT, FLIDS, OPERATION_DAYS) "
    "VALUES (%s, %s, %s, %s, %s)"
)
_UNKNOWN: Final = object()
_GAPS_SELECT: Final = (
    "SELECT LOW_ID, HIGH_ID, FIRST_SEEN_AT FROM INBOX_GAP WHERE INBOX_NAME = %s "
    "ORDER BY LOW_ID FOR UPDATE"
)
_GAPS_DELETE: Final = "DELETE FROM INBOX_GAP WHERE INBOX_NAME = %s"
_GAP_INSERT: Final = (
    "INSERT INTO INBOX_GAP (INBOX_NAME, LOW_ID, HIGH_ID, FIRST_SEEN_AT) VALUES (%s, %s, %s, %s)"
)
_LATE_MARK: Final = "UPDATE PROC_STATE SET LATE = true WHERE MESSAGE_ID = ANY(%s)"
_LATE_COUNT: Final = "UPDATE INBOX_CURSOR SET LATE_ROWS = LATE_ROWS + %s WHERE INBOX_NAME = %s"


def _many(cursor: Cursor, query: str, rows: Sequence[Sequence[Any]]) -> None:
    if len(rows) == 1:
        cursor.execute(query, rows[0])
    elif rows:
        cursor.executemany(query, rows)


#: Position in DETAILS of the table each collection is stored in.
_TABLE_OF: Final = {code: at for at, d in enumerate(DETAILS) for code in d.table.collections}
_ALL_TABLES: Final = range(len(DETAILS))


def _touched(before: object, state: FlightState) -> Iterable[int]:
    """Positions (in DETAILS) of the tables whose rows of this flight must be rewritten."""
    if not isinstance(before, FlightState):
        return _ALL_TABLES  # new, or not loaded in this transaction: every table
    old, new = before.collections, state.collections
    if old is new or old == new:  # the usual FLOP: no collection changed at all
        return ()
    # Every code is in _TABLE_OF: validate() has refused unknown collections.
    return {_TABLE_OF[code] for code in old.keys() | new.keys() if old.get(code) != new.get(code)}


def _detail_plan(
    states: Sequence[FlightState], known: Mapping[str, FlightState | None]
) -> list[tuple[list[str], list[FlightState]]]:
    """For each detail table (DETAILS order): FLIDs whose rows must be deleted first, and
    the states whose rows must be (re)inserted. Cheap: rows are built later, while COPY
    streams them (so Python builds rows while the server inserts the previous ones)."""
    plan: list[tuple[list[str], list[FlightState]]] = [([], []) for _ in DETAILS]
    for state in states:
        before: object = known.get(state.flid, _UNKNOWN)
        for at in _touched(before, state):
            deletes, writes = plan[at]
            table = DETAILS[at].table
            if before is _UNKNOWN:
                deletes.append(state.flid)  # not loaded in this transaction: rewrite to be safe
            elif isinstance(before, FlightState) and any(
                before.collections.get(code) for code in table.collections
            ):
                deletes.append(state.flid)
            writes.append(state)
    return plan


def _detail_rows_of(
    states: Sequence[FlightState], table: DetailTable, typed: TypedValues
) -> Iterator[list[Any]]:
    for state in states:
        yield from detail_rows(state, table, typed)


def _validated_main_rows(
    states: Sequence[FlightState], known: Mapping[str, FlightState | None], typed: TypedValues
) -> Iterator[list[Any]]:
    """Main rows, each state validated just before its row: on the COPY path a refused
    state aborts the COPY, and the transaction, before any detail row is written."""
    for state in states:
        validate(state, known.get(state.flid))
        yield main_row(state, typed)


def _proc_row(processed: ProcessedMessage) -> list[Any]:
    proc, intent = processed.proc, processed.backfill
    if intent is not None and (
        intent.message_id != proc.message_id or intent.status is not proc.status
    ):
        raise PermanentError(f"message {proc.message_id}: backfill intent disagrees with PROC")
    subsystem: list[Any] = [None] * 5
    if intent is not None:
        subsystem = [
            intent.subsystem_name, intent.subsystem_type, intent.subsystem_subtype,
            intent.subsystem_sequence, intent.subsystem_date_sent,
        ]  # fmt: skip
    return [
        proc.message_id, proc.identity_key, proc.payload_digest, proc.type, proc.styp,
        proc.status.value, proc.reason, proc.attempts, proc.received_at, proc.processed_at,
        proc.dttm, proc.backfill_status, proc.backfill_at, proc.backfill_attempts, *subsystem,
    ]  # fmt: skip


def _event_rows(processed: ProcessedMessage) -> list[list[Any]]:
    message_id = processed.proc.message_id
    return [
        [
            event.topic, event.key,
            None if event.payload is None else event.payload.decode("utf-8"),
            event.flid, event.state_version, event.kind.value, message_id,
        ]
        for event in processed.events
    ]


def _rows_out(cursor: Cursor, insert: str, copy: CopyTarget, rows: Sequence[Sequence[Any]],
              bulk: bool) -> None:  # fmt: skip
    if bulk and len(rows) > 1:
        copy_rows(cursor, copy, rows)
    else:
        _many(cursor, insert, rows)


def _write_main(
    cursor: Cursor,
    states: Sequence[FlightState],
    known: Mapping[str, FlightState | None],
    typed: TypedValues,
    bulk: bool,
) -> None:
    rows = _validated_main_rows(states, known, typed)
    if bulk and len(states) > 1:
        cursor.execute(MAIN.stage_create)
        cursor.execute("DELETE FROM FS_MAIN_STAGE")
        copy_rows(cursor, MAIN.stage_copy, rows)
        cursor.execute(MAIN.stage_upsert)
    else:
        _many(cursor, MAIN.upsert, list(rows))


def _write_details(
    cursor: Cursor,
    detail: DetailSql,
    plan: tuple[list[str], list[FlightState]],
    typed: TypedValues,
    bulk: bool,
) -> None:
    deletes, states = plan
    if deletes:
        cursor.execute(detail.delete, (deletes,))
    if bulk and len(states) > 1:
        copy_rows(cursor, detail.copy, _detail_rows_of(states, detail.table, typed))
    elif states:
        _many(cursor, detail.insert, list(_detail_rows_of(states, detail.table, typed)))


def write_processed(
    conn: Conn,
    processed: ProcessedMessage,
    *,
    known: Mapping[str, FlightState | None],
    typed: TypedValues,
    hook: FaultHook | None,
    inbox_name: str,
) -> None:
    """Write everything of one processed message (the caller owns the transaction)."""
    write_many(conn, [processed], known=known, typed=typed, hook=hook, inbox_name=inbox_name)


def _final_states(batch: Sequence[ProcessedMessage]) -> list[FlightState]:
    """The last state of each flight the batch changed (earlier versions live in events)."""
    final: dict[str, FlightState] = {}
    for processed in batch:
        final.update(processed.states)
    return list(final.values())


def _batch_rows(batch: Sequence[ProcessedMessage]) -> tuple[list[list[Any]], list[list[Any]]]:
    events: list[list[Any]] = []
    procs: list[list[Any]] = []
    for processed in batch:
        try:
            events += _event_rows(processed)
        except UnicodeDecodeError as exc:
            raise PermanentError(
                f"message {processed.proc.message_id}: payload not UTF-8"
            ) from exc
        procs.append(_proc_row(processed))
    return events, procs


def write_many(
    conn: Conn,
    batch: Sequence[ProcessedMessage],
    *,
    known: Mapping[str, FlightState | None],
    typed: TypedValues,
    hook: FaultHook | None,
    inbox_name: str,
) -> None:
    """Write several processed messages at once, with the effect of writing each in order.

    ``known`` holds the states as stored before the batch; only the final state of each
    flight is written, and only detail tables whose collections differ from ``known``.
    Small batches go out in one pipeline (one round trip); once there are
    ``BULK_FLIGHTS`` flights or many rows, COPY (main rows through a temp stage table and
    an INSERT ... ON CONFLICT), which pipeline mode cannot carry.
    """
    states = _final_states(batch)
    events, procs = _batch_rows(batch)
    step: FaultHook = hook if hook is not None else (lambda _step, _conn: None)
    bulk = len(states) >= BULK_FLIGHTS or len(events) >= BULK_ROWS
    cursor_value = max((p.cursor for p in batch if p.cursor is not None), default=None)
    with nullcontext() if bulk else conn.pipeline():
        cursor = conn.cursor()
        _write_main(cursor, states, known, typed, bulk)
        step("flights", conn)
        plan = _detail_plan(states, known)
        for detail, table_plan in zip(DETAILS, plan, strict=True):
            _write_details(cursor, detail, table_plan, typed, bulk)
            step(f"details:{detail.table.name}", conn)
        _rows_out(cursor, _EVENT_INSERT, _EVENT_COPY, events, bulk)
        step("events", conn)
        _rows_out(cursor, _PROC_INSERT, _PROC_COPY, procs, bulk)
        step("proc", conn)
        if cursor_value is not None:
            cursor.execute(_CURSOR_UPSERT, (inbox_name, cursor_value))
        step("cursor", conn)
        for processed in batch:
            _write_snap_log(cursor, processed)
        step("snap_log", conn)
    if touches_gaps(batch):
        _write_gaps(conn, batch, inbox_name)


def _write_gaps(conn: Conn, batch: Sequence[ProcessedMessage], inbox_name: str) -> None:
    """The inbox's open gaps once *batch* is saved (``gaps.gaps_after``), PROC_STATE.LATE
    of its late messages and the late-row count. Rare (only a batch that goes past a gap or
    applies a late row) and small (the open gaps are bounded), so the gap rows are replaced
    as a whole; the hot path (PROC_STATE's COPY) is unchanged."""
    rows = conn.execute(_GAPS_SELECT, (inbox_name,)).fetchall()
    current = [GapRange(int(low), int(high), seen) for low, high, seen in rows]
    after = gaps_after(current, batch)
    if after != current:
        with conn.cursor() as cursor:
            cursor.execute(_GAPS_DELETE, (inbox_name,))
            _many(cursor, _GAP_INSERT, [(inbox_name, g.low, g.high, g.first_seen) for g in after])
    late = [p.proc.message_id for p in batch if p.proc.late]
    if late:
        conn.execute(_LATE_MARK, (late,))
        conn.execute(_LATE_COUNT, (len(late), inbox_name))


def _write_snap_log(cursor: Cursor, processed: ProcessedMessage) -> None:
    snap = processed.snap_log
    if snap is None:
        return
    flids = json.dumps(list(snap.flids), ensure_ascii=False)
    days = json.dumps([day.isoformat() for day in snap.operation_days])
    cursor.execute(_SNAP_INSERT, (snap.message_id, snap.styp, snap.record_count, flids, days))
