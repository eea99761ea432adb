"""Oracle's executor of the core write plan, for a ``save`` or a ``save_many`` (the caller
owns the transaction). PostgreSQL's twin is ``flightstate_pg._writes``.

What is written is decided by ``flightstate_core.domain.write_plan`` (final states, validation,
which detail tables change per FLID, the intent check, the cursor, the gap rows, and the
order of the steps, ``WRITE_STEPS``). Here ``plan_writes`` builds and checks every bind row
(byte limits too) before the first statement runs, and ``execute_plan`` runs the steps:
``flights`` (MERGE of main rows, retried on ORA-00001), ``details:<TABLE>``
(delete-then-insert per FLID), ``events`` (MSG_EVENT, ids from MSG_EVENT_SEQ), ``proc``
(plain INSERT of PROC_STATE with the backfill intent), ``cursor`` (INBOX_CURSOR, forward
only), ``snap_log``. Every step is one ``executemany`` (array DML: one round trip whatever
the number of rows), never a statement per item.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from zoneinfo import ZoneInfo

import attrs
import oracledb
from attrs import frozen

from flightstate_core.domain.errors import PermanentError
from flightstate_core.domain.gaps import late_count
from flightstate_core.domain.records import GapRange, ProcessedMessage
from flightstate_core.domain.state import FlightState
from flightstate_core.domain.write_plan import (
    WRITE_STEPS,
    DetailChange,
    gaps_to_write,
    run_steps,
    stamp_texts,
)
from flightstate_core.domain.write_plan import plan_writes as plan_of
from flightstate_oracle import _sql as sql
from flightstate_oracle._db import merge_many, query, run, run_many
from flightstate_oracle._presence import from_utc_naive, to_utc_naive
from flightstate_oracle._records import event_rows, proc_row, snap_row
from flightstate_oracle._rows import Row, detail_rows, flight_row

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


@frozen
class WritePlan:
    """Every bind row of one save, built and checked before any statement runs.

    ``details`` maps a detail table to (DELETE binds, INSERT rows); ``cursor`` is the
    highest inbox cursor of the batch (None: leave INBOX_CURSOR alone); ``touches_gaps``:
    the batch changes the inbox's open gaps.
    """

    mains: list[Row]
    details: dict[str, tuple[list[Row], list[Row]]]
    events: list[Row]
    procs: list[Row]
    cursor: int | None
    snaps: list[Row]
    touches_gaps: bool = False
    stamps: list[Row] = attrs.field(factory=list)


def _detail_binds(change: DetailChange, zone: ZoneInfo, pivot: int) -> tuple[list[Row], list[Row]]:
    """DELETE binds (one per FLID) and INSERT rows of one detail table's change."""
    rows = [row for state in change.writes for row in detail_rows(change.table, state, zone, pivot)]
    return [{"FLID": flid} for flid in change.deletes], rows


def plan_writes(
    batch: Sequence[ProcessedMessage],
    known: Mapping[str, FlightState | None],
    *,
    zone: ZoneInfo,
    pivot: int,
) -> WritePlan:
    """The rows of saving ``batch`` in order on top of ``known`` (pure; raises on bad rows)."""
    plan = plan_of(batch, known)
    return WritePlan(
        mains=[flight_row(state, zone, pivot) for state in plan.states],
        details={name: _detail_binds(change, zone, pivot) for name, change in plan.details.items()},
        events=[row for processed in batch for row in event_rows(processed)],
        procs=[proc_row(processed) for processed in batch],
        cursor=plan.cursor,
        snaps=[snap_row(p.snap_log) for p in batch if p.snap_log is not None],
        touches_gaps=plan.touches_gaps,
        stamps=[{"FLID": flid, "PROVENANCE": text} for flid, text in stamp_texts(plan)],
    )


@frozen
class _Steps:
    """The statements of one planned save (``run_steps`` calls them in order)."""

    _conn: oracledb.Connection
    _plan: WritePlan
    _inbox_name: str

    def flights(self) -> None:
        merge_many(self._conn, sql.FLIGHT_MERGE, self._plan.mains)
        run_many(self._conn, sql.FLIGHT_STAMPS, self._plan.stamps)

    def details(self, table: str) -> None:
        deletes, rows = self._plan.details[table]
        run_many(self._conn, sql.DETAIL_DELETE[table], deletes)
        run_many(self._conn, sql.DETAIL_INSERT[table], rows)

    def events(self) -> None:
        run_many(self._conn, sql.EVENT_INSERT, self._plan.events)

    def procs(self) -> None:
        run_many(self._conn, sql.PROC_INSERT, self._plan.procs)

    def cursor(self, last_message_id: int) -> None:
        cursor = {"INBOX_NAME": self._inbox_name, "LAST_MESSAGE_ID": last_message_id}
        merge_many(self._conn, sql.CURSOR_MERGE, [cursor])

    def snap_log(self) -> None:
        run_many(self._conn, sql.SNAP_INSERT, self._plan.snaps)


def execute_plan(
    conn: oracledb.Connection, plan: WritePlan, *, hook: FaultHook | None, inbox_name: str
) -> None:
    """Run the steps of ``plan`` in ``WRITE_STEPS`` order, one ``executemany`` each."""
    after: Callable[[str], None] = (
        (lambda _step: None) if hook is None else (lambda step: hook(step, conn))
    )
    run_steps(_Steps(conn, plan, inbox_name), plan.cursor, after)


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
    if plan.touches_gaps:
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
    """The inbox's open gaps once *batch* is saved (``write_plan.gaps_to_write``) and its late-row
    count, under PIPELINE_LOCK (so no one else changes them meanwhile). Rare and small: the
    rows are replaced as a whole."""
    name = {"INBOX_NAME": inbox_name}
    after = gaps_to_write(gap_rows(query(conn, sql.GAPS_SELECT, name)), batch)
    if after is not None:
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
