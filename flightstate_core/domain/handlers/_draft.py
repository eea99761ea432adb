"""The working set of one decision: current states plus the drafts the handlers wrote.

Handlers only ``put`` content changes (no version, no audit fields); ``finish`` turns the
drafts into final states and events once, so a flight touched by several blocks of one
message still gets exactly one version bump (spec: version +1 once per decision).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Final

import attrs

from flightstate_core.domain.items import DocItem, Item
from flightstate_core.domain.state import FlightState, FlightStatus

__all__ = ["Draft", "new_state", "with_content", "with_version"]

# attrs.evolve costs several microseconds (it introspects the class on every call); these
# two run once per changed flight, so they call the constructor directly. Only while the
# fields are exactly these: if FlightState changes, they fall back to evolve.
_FIELDS: Final = (
    "flid", "status", "version", "operation_day", "scalars", "collections", "documents",
    "last_message_id", "created_at", "updated_at", "provenance",
)  # fmt: skip
_DIRECT: Final = tuple(field.name for field in attrs.fields(FlightState)) == _FIELDS


def with_content(
    state: FlightState,
    scalars: Mapping[str, str],
    collections: Mapping[str, tuple[Item, ...]],
    documents: Mapping[str, tuple[DocItem, ...]],
    provenance: Mapping[str, int] | None = None,
) -> FlightState:
    """``state`` with other scalars, collections and documents (and provenance)."""
    if provenance is None:
        provenance = state.provenance
    if not _DIRECT or type(state) is not FlightState:
        return attrs.evolve(
            state, scalars=scalars, collections=collections, documents=documents,
            provenance=provenance,
        )  # fmt: skip
    return FlightState(
        state.flid, state.status, state.version, state.operation_day, scalars, collections,
        documents, state.last_message_id, state.created_at, state.updated_at, provenance,
    )  # fmt: skip


def with_version(
    state: FlightState,
    version: int,
    created_at: datetime | None,
    updated_at: datetime,
    last_message_id: int | None,
) -> FlightState:
    """``state`` with a new version and audit fields."""
    if not _DIRECT or type(state) is not FlightState:
        return attrs.evolve(
            state, version=version, created_at=created_at, updated_at=updated_at,
            last_message_id=last_message_id,
        )  # fmt: skip
    return FlightState(
        state.flid, state.status, version, state.operation_day, state.scalars,
        state.collections, state.documents, last_message_id, created_at, updated_at,
        state.provenance,
    )  # fmt: skip


def new_state(flid: str) -> FlightState:
    """An empty ACTIVE flight, before its first version is assigned."""
    return FlightState(flid=flid, status=FlightStatus.ACTIVE, version=0, operation_day=None)


class Draft:
    """Current states (read-only) and the next states written so far, in touch order.

    ``message_id``: the deciding message's inbox id, for per-key provenance (None: not
    tracked, as for a decision without an inbox row); ``keeps_newer``: whether what a newer
    message set is kept (not for an operator's requeue, applied as the newest message)."""

    def __init__(
        self,
        current: Mapping[str, FlightState],
        message_id: int | None = None,
        *,
        keeps_newer: bool = True,
    ) -> None:
        self.current = current
        self.message_id = message_id
        self.keeps_newer = keeps_newer
        self.work: dict[str, FlightState] = {}
        self.order: list[str] = []
        self.notes: list[str] = []

    def get(self, flid: str) -> FlightState | None:
        """The latest state of a FLID in this decision (draft, else current, else None)."""
        state = self.work.get(flid)
        return state if state is not None else self.current.get(flid)

    def put(self, state: FlightState) -> None:
        """Record the next content of a flight."""
        if state.flid not in self.work:
            self.order.append(state.flid)
        self.work[state.flid] = state

    def note(self, text: str) -> None:
        """Add a note to the decision (why something was not applied)."""
        self.notes.append(text)

    def view(self) -> Iterator[FlightState]:
        """Every state this decision can see (drafts win over current)."""
        yield from self.work.values()
        for flid, state in self.current.items():
            if flid not in self.work:
                yield state
