"""Driver-free parts of the operator functions and of the inbox adapters.

Why here: ``flightstate_pg`` and ``flightstate_oracle`` expose the same operator functions
(``republish``, ``flight_history``), and the PostgreSQL and MySQL inboxes write the same
backfill values; an Oracle site must not import ``flightstate_pg`` (psycopg), so what they
share lives in the core and each backend keeps only its SQL and its row decoding.

- ``republish``: a DELETED flight still in the current state is republished as a tombstone
  (null payload); every other flight as its full wire state, at its current version.
- ``flight_history``: one entry per ``schd`` event of the flight (``source`` ``event``, or
  ``cleanup`` for a lifecycle removal), plus one per SCHD_SNAP_LOG package that carried it
  and left no event (``snap_log``); cleanup entries sort after the messages of the life
  they end.
- Inbox columns carry no zone: aware times are written as airport-local wall time in whole
  seconds, naive ones read back are taken as that zone.
- ``received_instant``: DATE_RECEIVED is stamped by the inbox's own clock, whose zone need
  not be the airport's (docs/design.md, "Operator view"): read with the server's current
  time, it becomes an instant on this host's clock; only a configured inbox zone is
  trusted instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime, tzinfo
from typing import Any, Final, TypeAlias, TypeVar

from attrs import frozen

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.records import BackfillIntent, ProcRecord
from flightstate_core.domain.state import FlightState
from flightstate_core.domain.wire import wire
from flightstate_core.engine.unit_of_work import locked_transaction
from flightstate_core.ports import StateTransaction, Transactional

__all__ = [
    "REPUBLISH_KIND",
    "EventRow",
    "HistoryProc",
    "SnapRow",
    "backfill_values",
    "event_entry",
    "flid_batches",
    "flight_history_of",
    "history_order",
    "local_aware",
    "local_naive",
    "notice_about",
    "received_instant",
    "republish_flights",
    "republish_payload",
    "snap_entry",
]

#: MSG_EVENT.KIND of a republished ``schd`` record (MESSAGE_ID NULL, no ``msg``).
REPUBLISH_KIND: Final = "REPUBLISH"

Tx = TypeVar("Tx", bound=StateTransaction)

# --------------------------------------------------------------------------- republish


def republish_payload(state: FlightState, config: CoreConfig) -> str | None:
    """The ``schd`` payload that republishes ``state``: None (tombstone) when DELETED."""
    return None if state.is_deleted else wire(state, config).decode("utf-8")


def flid_batches(
    keys: Iterable[str] | None, size: int, page: Callable[[str | None, int], list[str]]
) -> Iterator[list[str]]:
    """Batches of at most ``size`` FLIDs: ``keys`` deduplicated in FLID order, or (None)
    every current flight through ``page(after, size)`` (the FLIDs after ``after``, None
    for the first page, in FLID order; one short transaction each)."""
    if keys is not None:
        ordered = sorted(set(keys))
        for start in range(0, len(ordered), size):
            yield ordered[start : start + size]
        return
    after: str | None = None
    while True:
        found = page(after, size)
        if not found:
            return
        yield found
        after = found[-1]


def republish_flights(
    store: Transactional[Tx],
    flids: Iterable[str] | None,
    *,
    batch: int,
    epoch: int | None,
    page: Callable[[str | None, int], list[str]],
    write: Callable[[Tx, list[FlightState]], None],
) -> int:
    """A backend's ``republish``: per batch of FLIDs (``flid_batches``), one transaction
    holding PIPELINE_LOCK fenced by ``epoch`` loads the current states (unknown FLIDs are
    skipped) and ``write(tx, states)`` inserts their records. Returns how many."""
    written = 0
    for keys in flid_batches(flids, batch, page):
        with locked_transaction(store, epoch) as tx:
            states = tx.load_flights(keys)
            found = [states[k] for k in keys if k in states]
            if found:
                write(tx, found)
        written += len(found)
    return written


# --------------------------------------------------------------------------- history


@frozen
class HistoryProc:
    """The PROC_STATE columns a history entry shows."""

    type: str | None
    styp: str | None
    status: str | None
    dttm: datetime | None
    processed_at: datetime | None
    reason: str | None = None

    @classmethod
    def of(cls, record: ProcRecord) -> HistoryProc:
        """The columns of a whole PROC_STATE record."""
        return cls(record.type, record.styp, record.status.value, record.dttm,
                   record.processed_at, record.reason)  # fmt: skip

    @property
    def late_notes(self) -> str | None:
        """What a late message kept as newer messages set it (docs/design.md, "Late rows
        and provenance"): the ``late:`` notes of its reason, else None."""
        if not self.reason or "late: " not in self.reason:
            return None
        return "; ".join(p for p in self.reason.split("; ") if p.startswith("late: ")) or None


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def notice_about(body: Mapping[str, Any], flid: str) -> bool:
    """Whether a ``msg`` body is about ``flid``: its own, or its master's naming it as
    ``codeshare``."""
    return body.get("codeshare") == flid or (body["flid"] == flid and "codeshare" not in body)


def event_entry(  # noqa: PLR0917 - the columns of one MSG_EVENT row, in order
    message_id: int | None,
    version: int,
    kind: str,
    created_at: datetime | None,
    body: Mapping[str, Any] | None,
    proc: HistoryProc | None,
) -> dict[str, Any]:
    """The history entry of one ``schd`` SNAPSHOT/TOMBSTONE event of the flight, with its
    ``msg`` body (None: purged or never written) and its message's PROC_STATE."""
    change = "DELETED" if kind == "TOMBSTONE" else ("CREATED" if version == 1 else "UPDATED")
    entry = {
        "messageId": message_id,
        "type": proc.type if proc else (body or {}).get("type"),
        "styp": proc.styp if proc else (body or {}).get("styp"),
        "status": proc.status if proc else None,
        "dttm": _iso(proc.dttm) if proc else None,
        "processedAt": _iso(proc.processed_at if proc else created_at),
        "stateVersion": version,
        "change": change,
        "changed": body["changed"] if body is not None else None,
        "source": "event" if message_id is not None else "cleanup",
    }
    kept = proc.late_notes if proc else None
    if kept is not None:
        entry["kept"] = kept
    return entry


def snap_entry(
    message_id: int, styp: object, created_at: datetime | None, proc: HistoryProc | None
) -> dict[str, Any]:
    """The history entry of a schedule package that carried the flight but left no event."""
    return {
        "messageId": message_id, "type": "SCHD", "styp": styp,
        "status": proc.status if proc else None,
        "dttm": _iso(proc.dttm) if proc else None,
        "processedAt": _iso(proc.processed_at if proc else created_at),
        "stateVersion": None, "change": None, "changed": None, "source": "snap_log",
    }  # fmt: skip


def history_order(entry: Mapping[str, Any]) -> tuple[int, int, int]:
    """Sort key of history entries: by message id; cleanup ends a life, after its messages."""
    message_id = entry["messageId"]
    if message_id is None:
        return (1, 0, entry["stateVersion"] or 0)
    return (0, message_id, entry["stateVersion"] or 0)


#: A ``schd`` SNAPSHOT/TOMBSTONE event of the flight: MESSAGE_ID (None: cleanup),
#: STATE_VERSION, KIND, CREATED_AT; in EVENT_ID order.
EventRow: TypeAlias = tuple[int | None, int, str, datetime | None]
#: A SCHD_SNAP_LOG package that carried the flight: MESSAGE_ID, STYP, CREATED_AT.
SnapRow: TypeAlias = tuple[int, object, datetime | None]


def flight_history_of(
    *,
    events: Sequence[EventRow],
    notices: Callable[[list[int]], Mapping[int | None, Mapping[str, Any]]],
    procs: Callable[[list[int]], Mapping[int, HistoryProc]],
    snaps: Sequence[SnapRow],
) -> list[dict[str, Any]]:
    """A backend's ``flight_history`` from what it read in one snapshot: the flight's
    events, ``notices(message_ids)`` (the ``msg`` bodies about it, ``notice_about``; cleanup
    ones under None), ``procs(message_ids)`` (their PROC_STATE) and the snap-log packages
    that carried it. A package whose message left an event is listed once, as the event."""
    message_ids = [mid for mid, *_ in events if mid is not None]
    bodies = notices(message_ids)
    known = procs(message_ids)
    entries = [
        event_entry(mid, version, kind, created, bodies.get(mid),
                    None if mid is None else known.get(mid))
        for mid, version, kind, created in events
    ]  # fmt: skip
    seen = set(message_ids)
    carried = [snap for snap in snaps if snap[0] not in seen]
    more = procs([mid for mid, _, _ in carried])
    entries += [snap_entry(mid, styp, created, more.get(mid)) for mid, styp, created in carried]
    return sorted(entries, key=history_order)


# --------------------------------------------------------------------------- inbox columns


def local_aware(value: object, zone: tzinfo) -> datetime | None:
    """A zone-less inbox time read back, as an aware time in ``zone`` (None if not a time)."""
    if not isinstance(value, datetime):
        return None
    return value.replace(tzinfo=zone) if value.tzinfo is None else value


def received_instant(
    value: object, zone: tzinfo | None, server_now: object, read_at: datetime
) -> datetime | None:
    """DATE_RECEIVED as an aware instant (None if not a time). With *zone* (a configured
    inbox zone) it is wall time there. Without one it is the inbox server's wall clock:
    *server_now* is that clock read by the same statement and *read_at* this host's
    clock just before it, so the row is ``server_now - value`` older than *read_at*
    (one clock for the difference whatever the server's zone; a DST change of the
    server's zone between the two shifts it by the change)."""
    if not isinstance(value, datetime):
        return None
    if value.tzinfo is not None:
        return value
    if zone is not None:
        return value.replace(tzinfo=zone)
    if not isinstance(server_now, datetime):
        return None
    return read_at - (server_now.replace(tzinfo=None) - value)


def local_naive(value: datetime | None, zone: tzinfo) -> datetime | None:
    """A time as the AODB writes it: wall time in ``zone``, no zone, whole seconds."""
    if value is None:
        return None
    if value.tzinfo is not None:
        value = value.astimezone(zone).replace(tzinfo=None)
    return value.replace(microsecond=0)


def _cut(value: str | None, size: int = 4) -> str | None:
    return None if value is None else value[:size]


def backfill_values(
    intent: BackfillIntent,
    zone: tzinfo,
    sequences: range,
    wall: Callable[[datetime | None], object] | None = None,
) -> tuple[object, ...]:
    """(DATE_PROCESSED, STATUS, SUBSYSTEM_NAME, SUBSYSTEM_SEQUENCE, SUBSYSTEM_DATE_SENT,
    SUBSYSTEM_TYPE, SUBSYSTEM_SUBTYPE, CMINMSGS_ID) of one backfill.

    The SUBSYSTEM texts are varchar(4) and are cut; a sequence outside ``sequences`` (the
    column's integer range) is NULL rather than failing the backfill forever. The two
    times are ``local_naive`` in ``zone``, or what ``wall`` makes of them (an adapter that
    binds them in another form)."""
    seq = intent.subsystem_sequence
    if seq is not None and seq not in sequences:
        seq = None
    to_wall = wall if wall is not None else (lambda value: local_naive(value, zone))
    return (
        to_wall(intent.processed_at),
        intent.status.value,
        _cut(intent.subsystem_name),
        seq,
        to_wall(intent.subsystem_date_sent),
        _cut(intent.subsystem_type),
        _cut(intent.subsystem_subtype),
        intent.message_id,
    )
