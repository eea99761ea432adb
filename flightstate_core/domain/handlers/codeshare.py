"""Codeshare rules (docs/design.md "Codeshares", docs/protocol.md §8).

A codeshare is an ACTIVE flight whose MAID names another FLID (its master). The master's
MAFL document lists its ACTIVE codeshares as ``{FLID, CSOP, CSFT}``; the core keeps it:

1. ``cascade``: a master going ACTIVE -> DELETED in this decision deletes every ACTIVE
   flight whose MAID names it, in the same decision (so no half state: master deleted,
   codeshare alive). Only MAID links count: a FLID a MAFL lists without naming the master
   by MAID is an independent flight and is never deleted with it.
2. ``maintain``: a flight whose link (master, entry) changed is removed from the old
   master's MAFL and upserted into the new master's (replacing the first entry with the
   same FLID, else appended). A master created in this decision picks up the ACTIVE
   codeshares that already name it. Only ACTIVE masters that exist are changed; a
   DELETED master keeps its details.
3. ``note_carried_mafl``: a MAFL carried in a message is not applied (``_apply``); when
   its FLIDs differ from the maintained list, the decision notes what upstream sent.
"""

from __future__ import annotations

from collections.abc import Iterable

from attrs import evolve

from flightstate_core.domain.handlers._draft import Draft
from flightstate_core.domain.items import DocItem
from flightstate_core.domain.messages import FlightRecord
from flightstate_core.domain.state import FlightState, FlightStatus
from flightstate_core.domain.values import Clear

__all__ = ["cascade", "link", "maintain", "master_of", "note_carried_mafl"]

Link = tuple[str, DocItem]


def master_of(state: FlightState) -> str | None:
    """The master FLID this flight names (not itself), whatever its status."""
    maid = state.scalars.get("MAID")
    return maid if maid and maid != state.flid else None


def link(state: FlightState | None) -> Link | None:
    """(master FLID, MAFL entry) of an ACTIVE codeshare, else None."""
    if state is None or state.is_deleted:
        return None
    master = master_of(state)
    if master is None:
        return None
    values = [("FLID", state.flid)]
    values += [(code, state.scalars[code]) for code in ("CSOP", "CSFT") if code in state.scalars]
    return master, DocItem(tuple(values))


def _maid_index(draft: Draft) -> dict[str, list[str]]:
    """Master -> the FLIDs naming it, sorted: the outcome (and the order of notes and
    events) must not depend on the order in which the store handed the states over."""
    index: dict[str, list[str]] = {}
    for state in draft.view():
        master = master_of(state)
        if master is not None:
            index.setdefault(master, []).append(state.flid)
    return {master: sorted(flids) for master, flids in index.items()}


def _deleted_masters(draft: Draft) -> list[str]:
    result = []
    for flid in draft.order:
        before = draft.current.get(flid)
        if before is not None and not before.is_deleted and draft.work[flid].is_deleted:
            result.append(flid)
    return result


def cascade(draft: Draft) -> None:
    """Rule 1."""
    masters = _deleted_masters(draft)
    if not masters:
        return
    index = _maid_index(draft)
    for master in masters:
        for flid in index.get(master, []):
            state = draft.get(flid)
            if state is None or state.is_deleted or flid == master:
                continue
            draft.put(evolve(state, status=FlightStatus.DELETED))
            draft.note(f"codeshare {flid} deleted with its master {master}")


def _set_mafl(draft: Draft, master: FlightState, entries: tuple[DocItem, ...]) -> None:
    documents = dict(master.documents)
    if entries:
        documents["MAFL"] = entries
    else:
        documents.pop("MAFL", None)
    draft.put(evolve(master, documents=documents))


def _remove(draft: Draft, master_flid: str, flid: str) -> None:
    master = draft.get(master_flid)
    if master is None or master.is_deleted:
        return
    entries = master.documents.get("MAFL", ())
    kept = tuple(item for item in entries if item.get("FLID") != flid)
    if kept != entries:
        _set_mafl(draft, master, kept)


def _upsert(draft: Draft, master_flid: str, entry: DocItem) -> None:
    master = draft.get(master_flid)
    if master is None or master.is_deleted:
        return
    entries = list(master.documents.get("MAFL", ()))
    flid = entry.get("FLID")
    for index, item in enumerate(entries):
        if item.get("FLID") == flid:
            if item == entry:
                return
            entries[index] = entry
            break
    else:
        entries.append(entry)
    _set_mafl(draft, master, tuple(entries))


def _adopt(draft: Draft, created: list[str]) -> None:
    index = _maid_index(draft)
    for master in created:
        for flid in index.get(master, ()):
            found = link(draft.get(flid))
            if found is not None:
                _upsert(draft, master, found[1])


def maintain(draft: Draft) -> None:
    """Rule 2."""
    touched = list(draft.order)
    for flid in touched:
        before = link(draft.current.get(flid))
        after = link(draft.work[flid])
        if before == after:
            continue
        if before is not None:
            _remove(draft, before[0], flid)
        if after is not None:
            _upsert(draft, after[0], after[1])
    created = [flid for flid in touched if flid not in draft.current]
    if created:
        _adopt(draft, created)


def _flids(entries: Iterable[DocItem]) -> list[str]:
    return [str(item.get("FLID") or "") for item in entries]


def note_carried_mafl(draft: Draft, records: Iterable[FlightRecord]) -> None:
    """Rule 3: note each carried MAFL whose FLIDs differ from the maintained MAFL."""
    for record in records:
        carried = record.documents.get("MAFL")
        if carried is None:
            continue
        sent = [] if isinstance(carried, Clear) else _flids(carried)
        state = draft.get(record.flid)
        kept = _flids(state.documents.get("MAFL", ())) if state is not None else []
        if sent != kept:
            draft.note(
                f"FLID {record.flid}: MAFL carried {sent} not applied; MAFL follows the "
                f"codeshares naming it by MAID {kept}"
            )
