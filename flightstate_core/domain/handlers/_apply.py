"""Overlay one FlightRecord onto one flight under an ``ApplyRule`` (rules R1-R3).

A carried MAFL is not applied: the core maintains a master's MAFL from the MAID links of
its codeshares (``codeshare``), and a list upstream sends may disagree with them; what it
said is noted on the decision (``codeshare.note_carried_mafl``), never used.

PSHT/TIPT (stand updates) copy their children onto every stand-plan item whose PSST
equals the block's PUST/TRST; no such item is a ProtocolError (the message is DEAD).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from flightstate_core.domain.catalog import COLLECTIONS, STAND_UPDATES
from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.errors import ProtocolError
from flightstate_core.domain.handlers._draft import Draft, with_content
from flightstate_core.domain.handlers._late import RecordOps, stamped, without_newer
from flightstate_core.domain.items import DocItem, Item
from flightstate_core.domain.merge import apply_collection
from flightstate_core.domain.messages import DocumentValue, FlightRecord, StandUpdate
from flightstate_core.domain.provenance import Kept, describe, newest
from flightstate_core.domain.rules import ApplyRule, collection_op
from flightstate_core.domain.state import FlightState
from flightstate_core.domain.values import Clear, Set

__all__ = ["MAINTAINED_DOCUMENTS", "apply_record", "late_note", "overlay"]

#: Documents the core keeps itself; a message's copy is reported, never applied.
MAINTAINED_DOCUMENTS: Final = frozenset({"MAFL"})

_PSDT_ORDER = {spec.code: index for index, spec in enumerate(COLLECTIONS["PSDT"].children)}


def _scalars(
    stored: Mapping[str, str], ops: Mapping[str, Set | Clear], rule: ApplyRule
) -> Mapping[str, str]:
    if not ops:
        return stored
    result = dict(stored)
    for code, op in ops.items():
        if isinstance(op, Set):
            result[code] = op.raw
        elif rule.honour_clear:
            result.pop(code, None)
    return result


def _collections(
    stored: Mapping[str, tuple[Item, ...]], ops: RecordOps, rule: ApplyRule
) -> Mapping[str, tuple[Item, ...]]:
    if not ops.collections and not ops.stand_updates:
        return stored
    result = dict(stored)
    for code, op in ops.collections.items():
        items = apply_collection(result.get(code), op)
        if items is None:
            result.pop(code, None)
        else:
            result[code] = items
    for update in ops.stand_updates:
        result["PSDT"] = _stand_update(result.get("PSDT", ()), update, rule)
    return result


def _documents(
    stored: Mapping[str, tuple[DocItem, ...]],
    carried: Mapping[str, DocumentValue],
    rule: ApplyRule,
) -> Mapping[str, tuple[DocItem, ...]]:
    if not carried:
        return stored
    result = dict(stored)
    for code, value in carried.items():
        if code in MAINTAINED_DOCUMENTS:
            continue
        if isinstance(value, Clear) or not value:
            if rule.honour_clear:
                result.pop(code, None)
        else:
            result[code] = value
    return result


def _updated_item(item: Item, ops: list[tuple[str, Set | Clear]], rule: ApplyRule) -> Item:
    values = dict(item.values)
    for code, op in ops:
        if isinstance(op, Set):
            values[code] = op.raw
        elif rule.honour_clear:
            values.pop(code, None)
    ordered = sorted(values.items(), key=lambda kv: _PSDT_ORDER.get(kv[0], len(_PSDT_ORDER)))
    return Item(item.ordinal, item.seq, tuple(ordered))


def _stand_update(
    items: tuple[Item, ...], update: StandUpdate, rule: ApplyRule
) -> tuple[Item, ...]:
    seq_child, _match_child, _children = STAND_UPDATES[update.kind]
    ops: list[tuple[str, Set | Clear]] = list(update.values)
    if seq_child is not None and update.seq is not None:
        ops.append((seq_child, Set(update.seq) if update.seq else Clear()))
    result: list[Item] = []
    matched = False
    for item in items:
        if item.get("PSST") == update.match:
            matched = True
            item = _updated_item(item, ops, rule)  # noqa: PLW2901 - replaced on purpose
        result.append(item)
    if not matched:
        xpath = update.xpath or f"/MSG/FLOP/{update.kind}"
        raise ProtocolError(xpath, f"no stand-plan item (PSDT) with PSST={update.match!r}")
    return tuple(result)


def _ops(record: FlightRecord, rule: ApplyRule, config: CoreConfig) -> RecordOps:
    if not record.collections:  # most FLOPs: nothing to resolve
        return RecordOps(record.scalars, {}, record.documents, record.stand_updates)
    collections = {
        code: collection_op(code, value, rule, config) for code, value in record.collections.items()
    }
    return RecordOps(record.scalars, collections, record.documents, record.stand_updates)


def apply_record(
    state: FlightState,
    record: FlightRecord,
    rule: ApplyRule,
    config: CoreConfig,
    *,
    message_id: int | None = None,
    kept: list[Kept] | None = None,
    keeps_newer: bool = True,
) -> FlightState:
    """The next content of ``state`` after ``record`` (version and audit untouched).

    With a ``message_id``, the provenance rule applies (``_late``): a key a newer message
    set or cleared is kept (added to ``kept``; not when ``keeps_newer`` is false, for a
    requeue), and the keys applied are stamped. A message at or above every stamp (the
    usual case) pays one comparison for the check."""
    ops = _ops(record, rule, config)
    provenance = state.provenance
    psdt = state.collections.get("PSDT", ())
    if keeps_newer and message_id is not None and provenance and message_id < newest(provenance):
        ops = without_newer(ops, provenance, psdt, rule, message_id, kept=kept)
    if message_id is not None:
        provenance = stamped(provenance, ops, psdt, rule, message_id)
    scalars = _scalars(state.scalars, ops.scalars, rule)
    collections = _collections(state.collections, ops, rule)
    documents = _documents(state.documents, ops.documents, rule)
    if (
        scalars is state.scalars
        and collections is state.collections
        and documents is state.documents
        and provenance is state.provenance
    ):
        return state
    return with_content(state, scalars, collections, documents, provenance)


def overlay(draft: Draft, state: FlightState, record: FlightRecord, rule: ApplyRule,
            config: CoreConfig) -> FlightState:  # fmt: skip
    """``apply_record`` for the draft's message; what it kept is noted on the decision
    ("late: FLID .. kept STND (set by message 1234)")."""
    kept: list[Kept] = []
    state = apply_record(
        state, record, rule, config,
        message_id=draft.message_id, kept=kept, keeps_newer=draft.keeps_newer,
    )  # fmt: skip
    if kept:
        draft.note(late_note(record.flid, kept))
    return state


def late_note(flid: str, kept: list[Kept]) -> str:
    """The note of what a late message left as a newer one set it."""
    return f"late: FLID {flid} kept " + ", ".join(describe(pair) for pair in kept)
