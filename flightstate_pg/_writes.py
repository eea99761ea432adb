"""PostgreSQL's executor of the core write plan: pipelined (one round trip) for a message,
COPY for a package or a batch.

What is written is decided by ``flightstate_core.domain.write_plan`` (final states, validation,
which detail tables change per FLID, the intent check, the cursor, the gap rows, and the
order of the steps, ``WRITE_STEPS``); this module turns the plan into statements. Multi-row
steps use ``executemany`` (no per-item statement), or binary COPY for a package or a batch
(PROC_STATE too: a batch of 500 messages is 500 rows), with main and detail rows built
while COPY streams them. PROC_STATE is a plain INSERT (or COPY): saving a message id twice
is refused by its primary key, so a replay can never add a version or an event
(docs/design.md, "One message, one transaction"). Oracle's twin is ``flightstate_oracle._writes``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import nullcontext
from typing import Any, Final

import psycopg
from attrs import frozen

from flightstate_core.domain.records import GapRange, ProcessedMessage
from flightstate_core.domain.state import FlightState
from flightstate_core.domain.write_plan import (
    WRITE_STEPS,
    DetailChange,
    WritePlan,
    gaps_to_write,
    late_ids,
    payload_text,
    plan_writes,
    run_steps,
    snap_texts,
    stamp_texts,
)
from flightstate_pg._copy import CopyTarget, copy_rows
from flightstate_pg._rows import TypedValues, detail_rows, main_row
from flightstate_pg._schema import DETAILS, MAIN, PROC_COLUMNS

__all__ = ["BULK_FLIGHTS", "WRITE_STEPS", "FaultHook", "write_many", "write_processed"]

Conn = psycopg.Connection[Any]
Cursor = psycopg.Cursor[Any]
#: Called between write steps with the step name and the connection (tests inject faults).
FaultHook = Callable[[str, Conn], None]

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
_GAPS_SELECT: Final = (
    "SELECT LOW_ID, HIGH_ID, FIRST_SEEN_AT FROM INBOX_GAP WHERE INBOX_NAME = %s "
    "ORDER BY LOW_ID FOR UPDATE"
)
_GAPS_DELETE: Final = "DELETE FROM INBOX_GAP WHERE INBOX_NAME = %s"
_GAP_INSERT: Final = (
    "INSERT INTO INBOX_GAP (INBOX_NAME, LOW_ID, HIGH_ID, FIRST_SEEN_AT) VALUES (%s, %s, %s, %s)"
)
#: A re-send raised stamps without changing content: PROVENANCE alone, no version, no
#: UPDATED_AT ("Late rows and provenance" in docs/design.md). One statement for all the
#: batch's re-sent flights (each FLID once: the plan's final states), not one per flight.
_STAMPS_UPDATE: Final = (
    "UPDATE FLIGHT_SCHD AS f SET PROVENANCE = s.text "
    "FROM unnest(%s::text[], %s::text[]) AS s(flid, text) WHERE f.FLID = s.flid"
)
_LATE_MARK: Final = "UPDATE PROC_STATE SET LATE = true WHERE MESSAGE_ID = ANY(%s)"
_LATE_COUNT: Final = "UPDATE INBOX_CURSOR SET LATE_ROWS = LATE_ROWS + %s WHERE INBOX_NAME = %s"
_DETAIL_SQL: Final = {detail.table.name: detail for detail in DETAILS}


def _many(cursor: Cursor, query: str, rows: Sequence[Sequence[Any]]) -> None:
    if len(rows) == 1:
        cursor.execute(query, rows[0])
    elif rows:
        cursor.executemany(query, rows)


def _proc_row(processed: ProcessedMessage) -> list[Any]:
    """PROC_STATE parameters with the backfill intent (checked by the plan)."""
    proc, intent = processed.proc, processed.backfill
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
            event.topic, event.key, payload_text(message_id, event.payload),
            event.flid, event.state_version, event.kind.value, message_id,
        ]
        for event in processed.events
    ]  # fmt: skip


def _detail_rows_of(change: DetailChange, typed: TypedValues) -> Iterator[list[Any]]:
    table = change.table
    for state in change.writes:
        yield from detail_rows(state, table, typed)


@frozen
class _Steps:
    """The statements of one planned save on one cursor (``run_steps`` calls them in
    order). ``bulk``: COPY instead of the pipeline's ``executemany``."""

    _cursor: Cursor
    _plan: WritePlan
    _typed: TypedValues
    _inbox_name: str
    _events: list[list[Any]]
    _bulk: bool

    def _rows_out(self, insert: str, copy: CopyTarget, rows: Sequence[Sequence[Any]]) -> None:
        if self._bulk and len(rows) > 1:
            copy_rows(self._cursor, copy, rows)
        else:
            _many(self._cursor, insert, rows)

    def flights(self) -> None:
        cursor, states, typed = self._cursor, self._plan.states, self._typed
        rows = (main_row(state, typed) for state in states)
        if self._bulk and len(states) > 1:
            cursor.execute(MAIN.stage_create)
            cursor.execute("DELETE FROM FS_MAIN_STAGE")
            copy_rows(cursor, MAIN.stage_copy, rows)
            cursor.execute(MAIN.stage_upsert)
        else:  # same connection and pipeline, no client-side parse (``upsert_numbered``)
            _many(psycopg.RawCursor(cursor.connection), MAIN.upsert_numbered, list(rows))
        if self._plan.stamps:
            stamps = stamp_texts(self._plan)
            cursor.execute(_STAMPS_UPDATE, ([flid for flid, _ in stamps], [t for _, t in stamps]))

    def details(self, table: str) -> None:
        change, detail = self._plan.details[table], _DETAIL_SQL[table]
        if change.deletes:
            self._cursor.execute(detail.delete, (change.deletes,))
        rows = _detail_rows_of(change, self._typed)
        first = next(rows, None)  # a flight whose collections there became empty has none
        if first is None:
            return
        if self._bulk and len(change.writes) > 1:
            copy_rows(self._cursor, detail.copy, itertools.chain((first,), rows))
        else:
            _many(self._cursor, detail.insert, [first, *rows])

    def events(self) -> None:
        self._rows_out(_EVENT_INSERT, _EVENT_COPY, self._events)

    def procs(self) -> None:
        self._rows_out(_PROC_INSERT, _PROC_COPY, [_proc_row(p) for p in self._plan.batch])

    def cursor(self, last_message_id: int) -> None:
        self._cursor.execute(_CURSOR_UPSERT, (self._inbox_name, last_message_id))

    def snap_log(self) -> None:
        for processed in self._plan.batch:
            snap = processed.snap_log
            if snap is not None:
                flids, days = snap_texts(snap)
                self._cursor.execute(
                    _SNAP_INSERT, (snap.message_id, snap.styp, snap.record_count, flids, days)
                )


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


def write_many(
    conn: Conn,
    batch: Sequence[ProcessedMessage],
    *,
    known: Mapping[str, FlightState | None],
    typed: TypedValues,
    hook: FaultHook | None,
    inbox_name: str,
) -> None:
    """Write several processed messages at once, with the effect of writing each in order
    (``write_plan.plan_writes`` on top of ``known``, the states as stored before the batch).

    Small batches go out in one pipeline (one round trip); once there are
    ``BULK_FLIGHTS`` flights or many rows, COPY (main rows through a temp stage table and
    an INSERT ... ON CONFLICT), which pipeline mode cannot carry.
    """
    plan = plan_writes(batch, known)
    events = [row for processed in batch for row in _event_rows(processed)]
    bulk = len(plan.states) >= BULK_FLIGHTS or len(events) >= BULK_ROWS
    with nullcontext() if bulk else conn.pipeline():
        steps = _Steps(conn.cursor(), plan, typed, inbox_name, events, bulk)
        run_steps(steps, plan.cursor, _after(hook, conn))
    if plan.touches_gaps:
        _write_gaps(conn, batch, inbox_name)


def _after(hook: FaultHook | None, conn: Conn) -> Callable[[str], None]:
    if hook is None:
        return lambda _step: None
    return lambda step: hook(step, conn)


def _write_gaps(conn: Conn, batch: Sequence[ProcessedMessage], inbox_name: str) -> None:
    """The inbox's open gaps once *batch* is saved, PROC_STATE.LATE of its late messages
    and the late-row count. Rare (only a batch that goes past a gap or applies a late row)
    and small, so the gap rows are replaced as a whole; the hot path is unchanged."""
    rows = conn.execute(_GAPS_SELECT, (inbox_name,)).fetchall()
    after = gaps_to_write([GapRange(int(low), int(high), seen) for low, high, seen in rows], batch)
    if after is not None:
        with conn.cursor() as cursor:
            cursor.execute(_GAPS_DELETE, (inbox_name,))
            _many(cursor, _GAP_INSERT, [(inbox_name, g.low, g.high, g.first_seen) for g in after])
    late = late_ids(batch)
    if late:
        conn.execute(_LATE_MARK, (late,))
        conn.execute(_LATE_COUNT, (len(late), inbox_name))
