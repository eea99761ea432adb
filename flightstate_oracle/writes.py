"""The writes of a ``save`` or a ``save_many`` (the caller owns the transaction).

Order, each a step the fault hook sees (same names as flightstate_pg): ``flights`` (MERGE
of main rows, retried on ORA-00001), ``details:<TABLE>`` (delete-then-insert per FLID, only
for flights whose collections in that table changed), ``events`` (MSG_EVENT, ids from
MSG_EVENT_SEQ), ``proc`` (plain INSERT of PROC_STATE with the backfill intent), ``cursor``
(INBOX_CURSOR, forward only), ``snap_log``.

Why a plan: every row is built and checked (byte limits, normal form) by the pure
``plan_writes`` before the first statement runs, and a batch has the same effect as saving
its messages one by one (as ``flightstate_pg._write.write_many``): only the final state of
each flight is written, detail tables are compared with the states as loaded before the
batch (``known``), events, PROC_STATE rows and snap-log rows are written for every message,
and the cursor moves to the highest cursor of the batch. Every step is one ``executemany``
(array DML: one round trip whatever the number of rows), never a statement per item.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final
from zoneinfo import ZoneInfo

import oracledb
from attrs import frozen

from flightstate_core.errors import PermanentError
from flightstate_core.gaps import gaps_after, late_count, touches_gaps
from flightstate_core.layout import DETAIL_TABLES, DetailTable
from flightstate_core.records import GapRange, ProcessedMessage
from flightstate_core.state import FlightState
from flightstate_oracle import sql
from flightstate_oracle.db import merge_many, query, run, run_many
from flightstate_oracle.presence import from_utc_naive, to_utc_naive
from flightstate_oracle.records import event_rows, proc_row, snap_row
from flightstate_oracle.rows import Row, detail_rows, flight_row, validate_state

__all__ = [
    "WRITE_STEPS",
    "FaultHook",
    "WritePlan",
    "execute_plan",
    "plan_writes",
    "write_many",
    "write_processed",
]

#: Called between write steps with the step name and the connection (tests inject faults).
FaultHook = Callable[[str, oracledb.Connection], None]

WRITE_STEPS: Final = (
    "flights",
    *(f"details:{name}" for name in DETAIL_TABLES),
    "events",
    "proc",
    "cursor",
    "snap_log",
)
_UNKNOWN: Final = object()


@frozen
class WritePlan:
    """Every bind row of one save, built and checked before any statement runs.

    ``details`` maps a detail table to (DELETE binds, INSERT rows); ``cursor`` is the
    highest inbox cursor of the batch (None: leave INBOX_CURSOR alone).
    """

    mains: list[Row]
    details: dict[str, tuple[list[Row], list[Row]]]
    events: list[Row]
    procs: list[Row]
    cursor: int | None
    snaps: list[Row]


def _table_changes(
    detail: DetailTable,
    states: Sequence[FlightState],
    known: Mapping[str, FlightState | None],
    zone: ZoneInfo,
    pivot: int,
) -> tuple[list[Row], list[Row]]:
    """DELETE binds (one per FLID) and INSERT rows for one detail table."""
    deletes: list[Row] = []
    rows: list[Row] = []
    for state in states:
        before: object = known.get(state.flid, _UNKNOWN)
        new = [state.collections.get(code) for code in detail.collections]
        if isinstance(before, FlightState):
            old = [before.collections.get(code) for code in detail.collections]
            if old == new:
                continue
            if any(old):
                deletes.append({"FLID": state.flid})
        elif before is _UNKNOWN:
            deletes.append({"FLID": state.flid})  # not loaded in this transaction: rewrite
        rows += detail_rows(detail, state, zone, pivot)
    return deletes, rows


def _final_states(batch: Sequence[ProcessedMessage]) -> list[FlightState]:
    """The last state of each flight the batch changed (earlier versions live in events)."""
    final: dict[str, FlightState] = {}
    for processed in batch:
        final.update(processed.states)
    return list(final.values())


def plan_writes(
    batch: Sequence[ProcessedMessage],
    known: Mapping[str, FlightState | None],
    *,
    zone: ZoneInfo,
    pivot: int,
) -> WritePlan:
    """The rows of saving ``batch`` in order on top of ``known`` (pure; raises on bad rows)."""
    states = _final_states(batch)
    for state in states:
        validate_state(state)
    return WritePlan(
        mains=[flight_row(state, zone, pivot) for state in states],
        details={
            name: _table_changes(detail, states, known, zone, pivot)
            for name, detail in DETAIL_TABLES.items()
        },
        events=[row for processed in batch for row in event_rows(processed)],
        procs=[proc_row(processed) for processed in batch],
        cursor=max((p.cursor for p in batch if p.cursor is not None), default=None),
        snaps=[snap_row(p.snap_log) for p in batch if p.snap_log is not None],
    )


def execute_plan(
    conn: oracledb.Connection, plan: WritePlan, *, hook: FaultHook | None, inbox_name: str
) -> None:
    """Run the steps of ``plan`` in ``WRITE_STEPS`` order, one ``executemany`` each."""
    step: FaultHook = hook if hook is not None else (lambda _step, _conn: None)
    merge_many(conn, sql.FLIGHT_MERGE, plan.mains)
    step("flights", conn)
    for name, (deletes, rows) in plan.details.items():
        run_many(conn, sql.DETAIL_DELETE[name], deletes)
        run_many(conn, sql.DETAIL_INSERT[name], rows)
        step(f"details:{name}", conn)
    run_many(conn, sql.EVENT_INSERT, plan.events)
    step("events", conn)
    run_many(conn, sql.PROC_INSERT, plan.procs)
    step("proc", conn)
    if plan.cursor is not None:
        cursor = {"INBOX_NAME": inbox_name, "LAST_MESSAGE_ID": plan.cursor}
        merge_many(conn, sql.CURSOR_MERGE, [cursor])
    step("cursor", conn)
    run_many(conn, sql.SNAP_INSERT, plan.snaps)
    step("snap_log", conn)


def write_many(
    conn: oracledb.Connection,
    batch: Sequence[ProcessedMessage],
    known: Mapping[str, FlightState | None],
    *,
    zone: ZoneInfo,
    pivot: int,
    hook: FaultHook | None,
    inbox_name: str,
) -> None:
    """Write several processed messages with the effect of writing each in order."""
    if not batch:
        return
    plan = plan_writes(batch, known, zone=zone, pivot=pivot)
    execute_plan(conn, plan, hook=hook, inbox_name=inbox_name)
    if touches_gaps(batch):
        write_gaps(conn, batch, inbox_name)


def gap_rows(rows: Sequence[Mapping[str, object]]) -> list[GapRange]:
    """GapRange values of INBOX_GAP rows (FIRST_SEEN_AT read as UTC)."""
    gaps = []
    for row in rows:
        seen = from_utc_naive(row["FIRST_SEEN_AT"])
        if seen is None:
            raise PermanentError("INBOX_GAP.FIRST_SEEN_AT is NULL")
        gaps.append(GapRange(int(str(row["LOW_ID"])), int(str(row["HIGH_ID"])), seen))
    return gaps


def write_gaps(
    conn: oracledb.Connection, batch: Sequence[ProcessedMessage], inbox_name: str
) -> None:
    """The inbox's open gaps once *batch* is saved (``gaps.gaps_after``) and its late-row
    count, under PIPELINE_LOCK (so no one else changes them meanwhile). Rare and small: the
    rows are replaced as a whole."""
    name = {"INBOX_NAME": inbox_name}
    current = gap_rows(query(conn, sql.GAPS_SELECT, name))
    after = gaps_after(current, batch)
    if after != current:
        run(conn, sql.GAPS_DELETE, name)
        run_many(conn, sql.GAP_INSERT, [
            {**name, "LOW_ID": g.low, "HIGH_ID": g.high,
             "FIRST_SEEN_AT": to_utc_naive(g.first_seen)} for g in after
        ])  # fmt: skip
    late = late_count(batch)
    if late:
        run(conn, sql.LATE_COUNT, {**name, "LATE": late})


def write_processed(
    conn: oracledb.Connection,
    processed: ProcessedMessage,
    known: Mapping[str, FlightState | None],
    *,
    zone: ZoneInfo,
    pivot: int,
    hook: FaultHook | None,
    inbox_name: str,
) -> None:
    """Write everything of one processed message."""
    write_many(conn, [processed], known, zone=zone, pivot=pivot, hook=hook, inbox_name=inbox_name)
