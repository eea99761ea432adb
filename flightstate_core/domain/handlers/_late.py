"""The provenance rule on one record (docs/design.md, "Late rows and provenance").

A message older than a key's provenance (a late row, or a reconciled one) leaves that key
as it is: its op on the key becomes Unchanged and the key is reported as kept. What no
newer message touched is applied as usual. Afterwards every key the message's remaining
ops set or cleared is stamped with its id (an operator's requeue skips the first step).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple

from flightstate_core.domain.items import Item
from flightstate_core.domain.merge import CollectionOp, MergeBySeq, Replace
from flightstate_core.domain.messages import DocumentValue, StandUpdate
from flightstate_core.domain.provenance import Kept, collection_keys, item_key, stamp
from flightstate_core.domain.rules import ApplyRule
from flightstate_core.domain.values import Clear, Set, Unchanged

__all__ = ["RecordOps", "stamped", "without_newer"]

#: Documents the core keeps itself (their ops never reach the state).
_MAINTAINED = frozenset({"MAFL"})


class RecordOps(NamedTuple):
    """What one record does to one flight, collection ops already resolved (R1-R3)."""

    scalars: Mapping[str, Set | Clear]
    collections: Mapping[str, CollectionOp]
    documents: Mapping[str, DocumentValue]
    stand_updates: tuple[StandUpdate, ...]


def _effective(op: object, rule: ApplyRule) -> bool:
    """Does this scalar or document op change the key? A Clear (or an empty document,
    which clears) does only where the rule honours Clear."""
    if isinstance(op, Clear) or op == ():
        return rule.honour_clear
    return True


def _matched(items: Iterable[Item], update: StandUpdate) -> list[str]:
    """Keys of the stand-plan items a PSHT/TIPT block updates (PSST equals its match)."""
    return [item_key("PSDT", item.seq) for item in items if item.get("PSST") == update.match]


def _newer_collection(
    provenance: Mapping[str, int], code: str, op: CollectionOp, mid: int, kept: list[Kept]
) -> CollectionOp:
    """The part of a collection op no newer message touched (Unchanged if none)."""
    if isinstance(op, Unchanged):
        return op
    if not isinstance(op, MergeBySeq):  # Replace / Clear: all or nothing
        newer = [(key, at) for key, at in collection_keys(provenance, code) if at > mid]
        if newer:
            kept.append(max(newer, key=lambda pair: pair[1]))
            return Unchanged()
        return op
    whole = provenance.get(code, 0)
    items: list[Item] = []
    refused: set[str | None] = set()
    for item in op.items:
        key = item_key(code, item.seq)
        at = max(whole, provenance.get(key, 0))
        if at > mid:
            if item.seq not in refused:
                refused.add(item.seq)
                kept.append((key if provenance.get(key, 0) == at else code, at))
        else:
            items.append(item)
    if not refused:
        return op
    return MergeBySeq(tuple(items)) if items else Unchanged()


def without_newer(
    ops: RecordOps,
    provenance: Mapping[str, int],
    psdt: Iterable[Item],
    rule: ApplyRule,
    mid: int,
    *,
    kept: list[Kept] | None,
) -> RecordOps:
    """*ops* without what a message newer than *mid* set or cleared (reported in *kept*)."""
    if kept is None:
        kept = []

    def older(key: str, op: object) -> bool:
        at = provenance.get(key, 0)
        if at > mid and _effective(op, rule):
            kept.append((key, at))
            return False
        return True

    scalars = {code: op for code, op in ops.scalars.items() if older(code, op)}
    documents = {code: v for code, v in ops.documents.items() if older(code, v)}
    collections = {
        code: _newer_collection(provenance, code, op, mid, kept)
        for code, op in ops.collections.items()
    }
    updates: list[StandUpdate] = []
    stored = tuple(psdt)
    for update in ops.stand_updates:
        keys = ["PSDT", *_matched(stored, update)]
        newer = [(key, provenance[key]) for key in keys if provenance.get(key, 0) > mid]
        if newer:
            kept.append(max(newer, key=lambda pair: pair[1]))
        else:
            updates.append(update)
    return RecordOps(scalars, collections, documents, tuple(updates))


def stamped(
    provenance: Mapping[str, int],
    ops: RecordOps,
    psdt: Iterable[Item],
    rule: ApplyRule,
    mid: int,
) -> Mapping[str, int]:
    """*provenance* with every key *ops* set or cleared stamped *mid* (the same map when
    they touch nothing). A stamp never goes down: a requeued message (applied as the
    newest, whatever its id) leaves a higher stamp as it is."""
    clears = rule.honour_clear
    if clears and not (ops.documents or ops.collections or ops.stand_updates):  # most FLOPs
        return stamp(provenance, ops.scalars, mid) if ops.scalars else provenance  # its codes
    touched = [code for code, op in ops.scalars.items() if clears or not isinstance(op, Clear)]
    if not (ops.documents or ops.collections or ops.stand_updates):
        return stamp(provenance, touched, mid) if touched else provenance
    touched += [
        code
        for code, value in ops.documents.items()
        if code not in _MAINTAINED and _effective(value, rule)
    ]
    for code, op in ops.collections.items():
        if isinstance(op, MergeBySeq):
            touched += [item_key(code, item.seq) for item in op.items]
        elif isinstance(op, (Replace, Clear)):
            touched.append(code)
    if ops.stand_updates:
        stored = tuple(psdt)
        for update in ops.stand_updates:
            touched += _matched(stored, update)
    return stamp(provenance, touched, mid) if touched else provenance
