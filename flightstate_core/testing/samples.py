"""Samples the contract suites write and compare: small flights, processed messages with
every part (states, events, PROC_STATE, backfill intent, cursor, snap log), and the rows a
store must then hold (``EventRow``, ``StoreDump``)."""

# ruff: noqa: RUF001 - CJK text on purpose

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime, timedelta
from typing import Any

import attrs
from attrs import frozen

from flightstate_core.domain.catalog import COLLECTIONS, ValueKind
from flightstate_core.domain.decision import EventKind, OutboxEvent, Outcome
from flightstate_core.domain.items import Item
from flightstate_core.domain.records import (
    BackfillIntent,
    ProcessedMessage,
    ProcRecord,
    SnapLogEntry,
)
from flightstate_core.domain.state import FlightState, FlightStatus

__all__ = [
    "CJK",
    "NOW",
    "EventRow",
    "InjectedFault",
    "StoreDump",
    "child_value",
    "event_rows",
    "flight",
    "full_collections",
    "processed",
]

NOW = datetime(2026, 11, 30, 1, 0, tzinfo=UTC)
_TIME_RAW = "23JAN210535"
CJK = "登机口变更：请旅客前往"
_CJK = CJK


@frozen
class EventRow:
    """One MSG_EVENT row as the contract compares it."""

    topic: str
    key: str
    payload: bytes | None
    flid: str
    state_version: int
    kind: str
    message_id: int | None


@frozen
class StoreDump:
    """Everything a store persisted (a subclass's ``dump`` builds it)."""

    flights: Mapping[str, FlightState]
    events: tuple[EventRow, ...]
    procs: Mapping[int, ProcRecord]
    cursor: int | None
    snap_log: tuple[SnapLogEntry, ...]


# --------------------------------------------------------------------------- samples


def child_value(kind: ValueKind, text: str) -> str:
    if kind is ValueKind.TIME:
        return _TIME_RAW
    return "0130" if kind is ValueKind.DURATION else text


def full_collections(count: int, tag: str = "") -> dict[str, tuple[Item, ...]]:
    """Every collection with ``count`` items, every child present, repeated resource codes."""
    out: dict[str, tuple[Item, ...]] = {}
    for code, spec in COLLECTIONS.items():
        items = []
        for n in range(1, count + 1):
            values = {c.code: child_value(c.kind, f"{tag}{c.code}{n % 3}") for c in spec.children}
            seq = None if spec.seq_attr is None else str(n % 7)  # repeated seqs on purpose
            items.append(Item.of(n, seq, values))
        out[code] = tuple(items)
    return out


def flight(flid: str, version: int = 1, **changes: Any) -> FlightState:
    """A small ACTIVE flight; keyword arguments replace fields."""
    base = FlightState(
        flid=flid, status=FlightStatus.ACTIVE, version=version, operation_day=date(2021, 1, 23),
        scalars={"FFID": f"CA-{flid}", "SODT": _TIME_RAW, "REMC": _CJK},
        collections={"GTDT": (Item.of(1, "1", {"GATE": "G28"}),)},
        last_message_id=version, created_at=NOW, updated_at=NOW + timedelta(minutes=version),
    )  # fmt: skip
    return attrs.evolve(base, **changes)


def processed(
    message_id: int, *states: FlightState, status: Outcome = Outcome.SUCCEEDED, **proc: Any
) -> ProcessedMessage:
    """A ProcessedMessage writing these states, a snapshot + notify event each, and the rest."""
    record = ProcRecord(
        message_id=message_id,
        identity_key=proc.pop("identity_key", f"AODB|FLOP|GTDT|{message_id}"),
        payload_digest=proc.pop("digest", f"d{message_id}"), type="FLOP", styp="GTDT",
        status=status, reason=None, attempts=1, received_at=NOW, processed_at=NOW,
        dttm=proc.pop("dttm", NOW),
    )  # fmt: skip
    events: list[OutboxEvent] = []
    for state in states:
        body = None if state.is_deleted else f'{{"flid":"{state.flid}","v":{state.version}}}'
        kind = EventKind.TOMBSTONE if body is None else EventKind.SNAPSHOT
        payload = None if body is None else body.encode()
        events.append(OutboxEvent("schd", state.flid, payload, state.flid, state.version, kind))
        events.append(OutboxEvent("msg", state.flid, f"{_CJK}{state.version}".encode(),
                                  state.flid, state.version, EventKind.NOTIFY))  # fmt: skip
    intent = BackfillIntent(message_id, status, NOW, "AODB", "FLOP", "GTDT", message_id,
                            datetime(2026, 11, 30, 9, 0))  # fmt: skip
    snap = SnapLogEntry(message_id, "DNLD", tuple(s.flid for s in states), (date(2021, 1, 23),),
                        len(states))  # fmt: skip
    return ProcessedMessage(record, {s.flid: s for s in states}, tuple(events), intent,
                            message_id, snap)  # fmt: skip


def event_rows(message: ProcessedMessage) -> list[EventRow]:
    """The MSG_EVENT rows a saved message must have produced."""
    mid = message.proc.message_id
    return [EventRow(e.topic, e.key, e.payload, e.flid, e.state_version, e.kind.value, mid)
            for e in message.events]  # fmt: skip


class InjectedFault(Exception):
    """Raised by a memory-style fault hook."""
