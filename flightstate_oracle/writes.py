"""The writes of one ``save`` (the caller owns the transaction).

Order, each a step the fault hook sees (same names as flightstate_pg): ``flights`` (MERGE
of main rows, retried on ORA-00001), ``details:<TABLE>`` (delete-then-insert per FLID, only
for flights whose collections in that table changed), ``events`` (MSG_EVENT, ids from
MSG_EVENT_SEQ), ``proc`` (plain INSERT of PROC_STATE with the backfill intent), ``cursor``
(INBOX_CURSOR, forward only), ``snap_log``. Every row is built and checked (byte limits,
normal form) before the first statement runs. Multi-row steps use ``executemany``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final
from zoneinfo import ZoneInfo

import oracledb

from flightstate_core.layout import DETAIL_TABLES, DetailTable
from flightstate_core.records import ProcessedMessage
from flightstate_core.state import FlightState
from flightstate_oracle import sql
from flightstate_oracle.db import merge_many, run, run_many
from flightstate_oracle.records import event_rows, proc_row, snap_row
from flightstate_oracle.rows import Row, detail_rows, flight_row, validate_state

__all__ = ["WRITE_STEPS", "FaultHook", "write_processed"]

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
    states = list(processed.states.values())
    for state in states:
        validate_state(state)
    mains = [flight_row(state, zone, pivot) for state in states]
    plan = {
        name: _table_changes(detail, states, known, zone, pivot)
        for name, detail in DETAIL_TABLES.items()
    }
    events = event_rows(processed)
    proc = proc_row(processed)
    snap = None if processed.snap_log is None else snap_row(processed.snap_log)
    step: FaultHook = hook if hook is not None else (lambda _step, _conn: None)

    merge_many(conn, sql.FLIGHT_MERGE, mains)
    step("flights", conn)
    for name, (deletes, rows) in plan.items():
        run_many(conn, sql.DETAIL_DELETE[name], deletes)
        run_many(conn, sql.DETAIL_INSERT[name], rows)
        step(f"details:{name}", conn)
    run_many(conn, sql.EVENT_INSERT, events)
    step("events", conn)
    run(conn, sql.PROC_INSERT, proc)
    step("proc", conn)
    if processed.cursor is not None:
        cursor = {"INBOX_NAME": inbox_name, "LAST_MESSAGE_ID": processed.cursor}
        merge_many(conn, sql.CURSOR_MERGE, [cursor])
    step("cursor", conn)
    if snap is not None:
        run(conn, sql.SNAP_INSERT, snap)
    step("snap_log", conn)
