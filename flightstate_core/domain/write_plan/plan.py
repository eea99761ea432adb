"""What saving a batch writes, decided once for every store (pure), and the order of it.

A batch has the effect of saving its messages one by one: only the final state of each
flight is written (earlier versions live in its events), each detail table is rewritten
only for the flights whose collections in it differ from the states as loaded before the
batch (``known``), every message keeps its events, PROC_STATE row and snap-log row, and
the inbox cursor moves to the highest cursor of the batch. Everything is checked by
``plan_writes`` before the first statement runs; a store builds its rows from the plan
(PostgreSQL while COPY streams them, Oracle up front) and ``run_steps`` runs its steps in
``WRITE_STEPS`` order, calling back after each (tests fail the save between any two).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final, Protocol

from attrs import frozen

from flightstate_core.domain.errors import PermanentError
from flightstate_core.domain.gaps import gaps_after, touches_gaps
from flightstate_core.domain.layout import DETAIL_TABLES, DetailTable
from flightstate_core.domain.provenance import encode_raised
from flightstate_core.domain.records import GapRange, ProcessedMessage, SnapLogEntry
from flightstate_core.domain.state import FlightState
from flightstate_core.domain.write_plan.validation import validate

__all__ = [
    "WRITE_STEPS",
    "DetailChange",
    "StepWriter",
    "WritePlan",
    "check_intent",
    "final_states",
    "gaps_to_write",
    "late_ids",
    "payload_text",
    "plan_writes",
    "run_steps",
    "snap_texts",
    "stamp_texts",
]

_DETAIL_STEPS: Final = tuple(f"details:{name}" for name in DETAIL_TABLES)
#: The steps of a save, in the order every store runs them.
WRITE_STEPS: Final = ("flights", *_DETAIL_STEPS, "events", "proc", "cursor", "snap_log")

_UNKNOWN: Final = object()
_TABLES: Final = tuple(DETAIL_TABLES.values())
#: Position in ``_TABLES`` of the table each collection is stored in.
_TABLE_OF: Final = {code: at for at, table in enumerate(_TABLES) for code in table.collections}
_ALL_TABLES: Final = range(len(_TABLES))


@frozen
class DetailChange:
    """One detail table's rewrite: the FLIDs whose rows are deleted first, and the states
    whose rows are (re)inserted (rows are built by the store, from these states)."""

    table: DetailTable
    deletes: list[str]
    writes: list[FlightState]


@frozen
class WritePlan:
    """Everything a save decides before it writes (``details`` in ``DETAIL_TABLES`` order,
    keyed by table name; ``cursor`` None: leave INBOX_CURSOR alone; ``stamps``: flights
    the batch did not change whose PROVENANCE alone is written, "Late rows and provenance"
    in docs/design.md)."""

    batch: Sequence[ProcessedMessage]
    states: list[FlightState]
    details: Mapping[str, DetailChange]
    cursor: int | None
    touches_gaps: bool
    stamps: Sequence[FlightState] = ()


def _finals(batch: Iterable[ProcessedMessage]) -> tuple[list[FlightState], list[FlightState]]:
    """The last state of each flight the batch changed, and the last of each flight whose
    stamps alone it raised (a flight changed anywhere in the batch is written in full, with
    the stamps raised after its change)."""
    final: dict[str, FlightState] = {}
    changed: set[str] = set()
    for processed in batch:
        final.update(processed.states)
        changed.update(processed.states)
        if processed.stamped:
            final.update(processed.stamped)
    states = [state for flid, state in final.items() if flid in changed]
    if len(states) == len(final):
        return states, []
    return states, [state for flid, state in final.items() if flid not in changed]


def final_states(batch: Iterable[ProcessedMessage]) -> list[FlightState]:
    """The last state of each flight the batch changed (earlier versions live in events)."""
    return _finals(batch)[0]


def stamp_texts(plan: WritePlan) -> list[tuple[str, str | None]]:
    """(FLID, PROVENANCE text) of each stamps-only flight of a plan (a text whose length
    differs from the one it replaces: ``provenance.encode_raised``)."""
    return [(state.flid, encode_raised(state.provenance)) for state in plan.stamps]


def check_intent(processed: ProcessedMessage) -> None:
    """The backfill intent is written into the message's PROC_STATE row: it must be for
    that message and carry its outcome."""
    proc, intent = processed.proc, processed.backfill
    if intent is not None and (
        intent.message_id != proc.message_id or intent.status is not proc.status
    ):
        raise PermanentError(f"message {proc.message_id}: backfill intent disagrees with PROC")


def payload_text(message_id: int, payload: bytes | None) -> str | None:
    """An event payload as the UTF-8 text the outbox column holds (None: tombstone)."""
    if payload is None:
        return None
    try:
        return payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PermanentError(f"message {message_id}: payload not UTF-8") from exc


def snap_texts(snap: SnapLogEntry) -> tuple[str, str]:
    """SCHD_SNAP_LOG's FLIDS and OPERATION_DAYS texts (JSON arrays; FLIDs unescaped)."""
    flids = json.dumps(list(snap.flids), ensure_ascii=False)
    return flids, json.dumps([day.isoformat() for day in snap.operation_days])


def _changed_tables(before: object, state: FlightState) -> Iterable[int]:
    """Positions of the tables whose rows of this flight must be rewritten."""
    if before is None:  # known not to exist, so no rows: only the tables it now has rows in
        return {_TABLE_OF[code] for code, items in state.collections.items() if items}
    if not isinstance(before, FlightState):
        return _ALL_TABLES  # not loaded in this transaction: rewrite every table to be safe
    old, new = before.collections, state.collections
    if old is new or old == new:  # the usual FLOP: no collection changed at all
        return ()
    # Every code is in _TABLE_OF: validate() has refused unknown collections.
    return {_TABLE_OF[code] for code in old.keys() | new.keys() if old.get(code) != new.get(code)}


def _detail_changes(
    states: Sequence[FlightState], known: Mapping[str, FlightState | None]
) -> dict[str, DetailChange]:
    changes = [DetailChange(table, [], []) for table in _TABLES]
    for state in states:
        before: object = known.get(state.flid, _UNKNOWN)
        for at in _changed_tables(before, state):
            change = changes[at]
            if before is _UNKNOWN or (
                isinstance(before, FlightState)
                and any(before.collections.get(code) for code in change.table.collections)
            ):
                change.deletes.append(state.flid)  # unknown: not loaded here, rewrite to be safe
            change.writes.append(state)
    return {change.table.name: change for change in changes}


def plan_writes(
    batch: Sequence[ProcessedMessage], known: Mapping[str, FlightState | None]
) -> WritePlan:
    """The plan of saving ``batch`` in order on top of ``known`` (the states as stored
    before it; None: known not to exist). Raises ``PermanentError`` on anything the
    tables cannot hold, before any statement."""
    states, stamps = _finals(batch)
    for state in states:
        validate(state, known.get(state.flid))
    for processed in batch:
        check_intent(processed)
    return WritePlan(
        batch=batch,
        states=states,
        details=_detail_changes(states, known),
        cursor=max((p.cursor for p in batch if p.cursor is not None), default=None),
        touches_gaps=touches_gaps(batch),
        stamps=stamps,
    )


def gaps_to_write(
    current: list[GapRange], batch: Sequence[ProcessedMessage]
) -> list[GapRange] | None:
    """The inbox's open gaps once ``batch`` is saved, None when they stay as they are
    (rare and small: a store replaces its gap rows as a whole)."""
    after = gaps_after(current, batch)
    return None if after == current else after


def late_ids(batch: Iterable[ProcessedMessage]) -> list[int]:
    """Message ids of the late rows in ``batch`` (their PROC_STATE rows are marked LATE)."""
    return [p.proc.message_id for p in batch if p.proc.late]


class StepWriter(Protocol):
    """A store's statements for one planned save (the store holds the rows)."""

    def flights(self) -> None:
        """Upsert the main row of every final state, then write the PROVENANCE of each
        stamps-only flight (one UPDATE each; ``stamp_texts``)."""

    def details(self, table: str) -> None:
        """Delete-then-insert the rows of the flights whose collections in ``table`` changed."""

    def events(self) -> None:
        """Insert every message's MSG_EVENT rows."""

    def procs(self) -> None:
        """Insert every message's PROC_STATE row (with its backfill intent)."""

    def cursor(self, last_message_id: int) -> None:
        """Move INBOX_CURSOR forward to ``last_message_id`` (never back)."""

    def snap_log(self) -> None:
        """Insert the SCHD_SNAP_LOG row of every message that has one."""


def run_steps(writer: StepWriter, cursor: int | None, after: Callable[[str], None]) -> None:
    """Run a save's steps in ``WRITE_STEPS`` order, calling ``after`` with each step name."""
    writer.flights()
    after("flights")
    for table, step in zip(DETAIL_TABLES, _DETAIL_STEPS, strict=True):
        writer.details(table)
        after(step)
    writer.events()
    after("events")
    writer.procs()
    after("proc")
    if cursor is not None:
        writer.cursor(cursor)
    after("cursor")
    writer.snap_log()
    after("snap_log")
