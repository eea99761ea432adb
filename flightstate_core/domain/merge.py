"""The merge algebra: how one carried value combines with what is stored.

Scalars use the three ops of ``values`` (Unchanged / Clear / Set). Collections use four:

1. ``UNCHANGED`` keeps the stored items.
2. ``CLEAR`` removes the collection (normal form: an absent code, never an empty tuple).
3. ``Replace(items)``: the message's list becomes the whole collection, order and
   duplicates kept.
4. ``MergeBySeq(items)``: stored items whose seq the message names are replaced by the
   message's items with that seq, at the position of the first stored item with that seq
   (further message items with the same seq follow it); other stored items stay; message
   items with new seqs are appended, grouped by seq in order of first appearance. ``None``
   (absent attribute) is a seq value like any other. Nothing is ever de-duplicated.

Every result is renumbered 1..n. Why grouping on append: it makes MergeBySeq idempotent
(merging the same message twice gives the same list), which replays rely on.
"""

from __future__ import annotations

from typing import Union

from attrs import frozen

from flightstate_core.domain.items import Item
from flightstate_core.domain.values import Clear, ScalarOp, Set, Unchanged

__all__ = [
    "CollectionOp",
    "MergeBySeq",
    "Replace",
    "apply_collection",
    "apply_scalar",
    "merge_by_seq",
    "renumber",
]

Items = tuple[Item, ...]


@frozen
class Replace:
    """The carried list becomes the whole collection."""

    items: Items


@frozen
class MergeBySeq:
    """Operation records: replace the items whose seq the message names, append new seqs."""

    items: Items


CollectionOp = Union[Unchanged, Clear, Replace, MergeBySeq]  # noqa: UP007 - runtime alias


def apply_scalar(current: str | None, op: ScalarOp) -> str | None:
    """Next raw value of a scalar (``None`` = absent)."""
    if isinstance(op, Set):
        return op.raw
    if isinstance(op, Clear):
        return None
    return current


def renumber(items: Items) -> Items:
    """The same items with ordinals 1..n (items already in place are reused)."""
    return tuple(item.renumbered(index) for index, item in enumerate(items, 1))


def merge_by_seq(stored: Items, incoming: Items) -> Items:
    """Rule 4 of the module docstring (not renumbered)."""
    groups: dict[str | None, list[Item]] = {}
    for item in incoming:
        groups.setdefault(item.seq, []).append(item)
    result: list[Item] = []
    emitted: set[str | None] = set()
    for item in stored:
        group = groups.get(item.seq)
        if group is None:
            result.append(item)
        elif item.seq not in emitted:
            emitted.add(item.seq)
            result.extend(group)
    for seq, group in groups.items():
        if seq not in emitted:
            result.extend(group)
    return tuple(result)


def apply_collection(current: Items | None, op: CollectionOp) -> Items | None:
    """Next items of a collection in normal form (``None`` = absent, never ``()``)."""
    if isinstance(op, Unchanged):
        return current
    if isinstance(op, Clear):
        return None
    result = op.items if isinstance(op, Replace) else merge_by_seq(current or (), op.items)
    return renumber(result) if result else None
