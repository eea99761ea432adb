"""Per-item semantics the handlers read: data, not code branches.

Rules (numbered like h11's state table; the handlers cite them):

R1. ``APPLY_RULES[family]`` says whether Clear is honoured and how carried collections
    merge: ``PACKAGE`` (DNLD/RESP) honours Clear and replaces every carried collection;
    ``SET_ONLY`` (ADFT/ADD/UPD) ignores every Clear (scalar, collection, document, stand
    update child) and merges every carried collection by seq whatever its policy (seed
    §3.3: an ADFT is never a replacement, so it sets the items it carries and keeps the
    others); ``FLOP`` honours Clear and merges by the collection policy.
R2. The collection policy is ``CoreConfig.collection_policies`` (catalog default,
    site-overridable): REPLACE -> ``Replace``, MERGE_BY_SEQ -> ``MergeBySeq``.
R3. A carried collection that is one element with no children (no seq, or seq "" ), or,
    for GTDT/CKDT, one item with seq "0" and no children, is Clear (docs/protocol.md §6).
R4. ``FLOP_RULES[styp]`` lists the record keys a FLOP block of that subtype may carry
    (scalar codes, exception parts, PORT_OPEN/PORT_CLOSE, collection, document and stand
    update codes, ``FDEL``) and the state fields they touch; derived from
    ``catalog.FLOP_SUBTYPES``. FFID may always ride along.
R5. ``SCHEDULE_FAMILIES[styp]`` maps a SCHD subtype onto its handler family.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final, Literal

from attrs import frozen

from flightstate_core.domain.catalog import (
    COLLECTIONS,
    DOCUMENTS,
    EXCEPTIONS,
    FLOP_SUBTYPES,
    PORT_SCALARS,
    SCALARS,
    SCHEDULE_STYPES,
    STAND_UPDATES,
    Policy,
)
from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.items import Item
from flightstate_core.domain.merge import CollectionOp, MergeBySeq, Replace
from flightstate_core.domain.messages import CollectionValue
from flightstate_core.domain.values import CLEAR, UNCHANGED, Clear

__all__ = [
    "APPLY_RULES",
    "FLOP",
    "FLOP_RULES",
    "PACKAGE",
    "SCHEDULE_FAMILIES",
    "SET_ONLY",
    "ApplyRule",
    "FlopRule",
    "collection_op",
    "collection_policy",
    "is_clear_items",
]

DELETE_KEY: Final = "FDEL"


@frozen
class ApplyRule:
    """R1: how a record overlays a flight."""

    name: str
    honour_clear: bool
    collections: Literal["replace", "merge", "policy"]


PACKAGE: Final = ApplyRule("package", honour_clear=True, collections="replace")
SET_ONLY: Final = ApplyRule("set_only", honour_clear=False, collections="merge")
FLOP: Final = ApplyRule("flop", honour_clear=True, collections="policy")

APPLY_RULES: Final[Mapping[str, ApplyRule]] = MappingProxyType(
    {"package": PACKAGE, "set_only": SET_ONLY, "flop": FLOP}
)

#: R5: SCHD STYP -> family ("package", "set_only", "delete").
SCHEDULE_FAMILIES: Final[Mapping[str, str]] = SCHEDULE_STYPES


@frozen
class FlopRule:
    """R4: what a FLOP block of one subtype may carry and which state fields it touches."""

    styp: str
    record_keys: frozenset[str]
    state_fields: frozenset[str]

    @property
    def deletes(self) -> bool:
        return DELETE_KEY in self.record_keys


def _element_keys(element: str) -> tuple[frozenset[str], frozenset[str]]:
    """(record keys, state fields) of one FLOP element."""
    if element in EXCEPTIONS:
        spec = EXCEPTIONS[element]
        parts = frozenset((spec.text_part, *spec.attributes.values()))
        return parts, parts
    if element == "PORT":
        ports = frozenset(PORT_SCALARS.values())
        return ports, ports
    if element in STAND_UPDATES:
        return frozenset({element}), frozenset({"PSDT"})
    if element == DELETE_KEY:
        return frozenset({element}), frozenset({"STATE"})
    if element in SCALARS or element in COLLECTIONS or element in DOCUMENTS:
        return frozenset({element}), frozenset({element})
    raise ValueError(f"catalog element {element!r} has no rule")


def _flop_rule(styp: str, elements: frozenset[str]) -> FlopRule:
    keys: set[str] = set()
    fields: set[str] = set()
    for element in elements:
        element_keys, element_fields = _element_keys(element)
        keys |= element_keys
        fields |= element_fields
    return FlopRule(styp, frozenset(keys), frozenset(fields))


#: R4, one entry per catalog FLOP subtype.
FLOP_RULES: Final[Mapping[str, FlopRule]] = MappingProxyType(
    {styp: _flop_rule(styp, elements) for styp, elements in FLOP_SUBTYPES.items()}
)


def collection_policy(code: str, config: CoreConfig) -> Policy:
    """R2: the site's policy for this collection."""
    return config.collection_policies.get(code, COLLECTIONS[code].policy)


def is_clear_items(code: str, items: tuple[Item, ...]) -> bool:
    """R3: does this carried list mean Clear?"""
    if len(items) != 1:
        return False
    item = items[0]
    if item.values:
        spec = COLLECTIONS[code]
        text = spec.text_child
        if not (text is not None and item.values == ((text, ""),)):
            return False
    if item.seq in (None, ""):
        return True
    return item.seq == "0" and COLLECTIONS[code].clear_by_seq0


def collection_op(
    code: str, value: CollectionValue, rule: ApplyRule, config: CoreConfig
) -> CollectionOp:
    """R1-R3: the merge op for one carried collection."""
    if isinstance(value, Clear) or is_clear_items(code, value):
        return CLEAR if rule.honour_clear else UNCHANGED
    if rule.collections == "replace":
        return Replace(value)
    if rule.collections == "merge":
        return MergeBySeq(value)
    if collection_policy(code, config) is Policy.MERGE_BY_SEQ:
        return MergeBySeq(value)
    return Replace(value)
