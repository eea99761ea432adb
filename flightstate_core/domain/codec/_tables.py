"""Lookup tables precomputed from ``catalog`` so the decoder does one dict hit per element.

Why a separate module: the catalog is written for people (specs with tuples of children);
the decoder wants flat dicts keyed by element tag. Everything here is derived, nothing is
new policy.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from attrs import frozen

from flightstate_core.domain.catalog import (
    COLLECTIONS,
    DOCUMENTS,
    EXCEPTIONS,
    FLTR_ELEMENTS,
    SCALARS,
    STAND_UPDATES,
    ChildSpec,
    CollectionSpec,
    ValueKind,
)
from flightstate_core.domain.limits import INDEXED_CHILDREN

__all__ = [
    "COLLECTION_TABLES",
    "DOCUMENT_TABLES",
    "ELEMENT_KINDS",
    "FLTR_ALLOWED",
    "SCALAR_ELEMENTS",
    "STAND_TABLES",
    "ChildTable",
    "CollectionTable",
    "DocumentTable",
    "ElementKind",
    "StandTable",
]


class ElementKind:
    """What an element directly under a FLTR / FLOP block is (small ints, cheap to compare)."""

    FLID: Final = 0
    SCALAR: Final = 1
    EXCEPTION: Final = 2
    PORT: Final = 3
    COLLECTION: Final = 4
    DOCUMENT: Final = 5
    STAND: Final = 6
    FDEL: Final = 7


@frozen
class ChildTable:
    """Children of an item: element children by tag, attribute children by name, order."""

    elements: Mapping[str, ChildSpec]
    attributes: Mapping[str, ChildSpec]
    order: tuple[str, ...]  # catalog order of every child code
    #: children whose text must be validated -> their kind (None: enumerated, always check)
    checked: Mapping[str, ValueKind | None] = MappingProxyType({})
    #: children stored in an indexed column -> their byte limit (``flightstate_core.domain.limits``)
    bounded: Mapping[str, int] = MappingProxyType({})


@frozen
class CollectionTable:
    """A collection spec flattened for the decoder."""

    spec: CollectionSpec
    children: ChildTable


@frozen
class DocumentTable:
    """A document: its own children plus nested repeated groups (VIPT)."""

    children: ChildTable
    nested: Mapping[str, ChildTable]
    order: tuple[str, ...]  # simple children, then nested groups, in catalog order


@frozen
class StandTable:
    """PSHT / TIPT: optional seq attribute, the match child, and the copied children."""

    seq_attr: str | None
    match: str
    children: Mapping[str, ChildSpec]
    order: tuple[str, ...]


def _child_table(
    children: tuple[ChildSpec, ...],
    order: tuple[str, ...] | None = None,
    bounded: Mapping[str, int] | None = None,
) -> ChildTable:
    return ChildTable(
        elements=MappingProxyType({c.code: c for c in children if not c.attribute}),
        attributes=MappingProxyType({c.code: c for c in children if c.attribute}),
        order=order if order is not None else tuple(c.code for c in children),
        checked=MappingProxyType(
            {
                c.code: None if c.allowed is not None else c.kind
                for c in children
                if c.kind is not ValueKind.TEXT or c.allowed is not None
            }
        ),
        bounded=MappingProxyType(dict(bounded or {})),
    )


def _collection_table(spec: CollectionSpec) -> CollectionTable:
    children = tuple(c for c in spec.children if c.code != spec.text_child)
    order = tuple(c.code for c in spec.children)
    bounded = INDEXED_CHILDREN.get(spec.code)
    return CollectionTable(spec, _child_table(children, order, bounded))


#: Element scalars (not exception parts, not PORT_*): tag -> (kind, allowed values).
SCALAR_ELEMENTS: Final[Mapping[str, tuple[ValueKind, frozenset[str] | None]]] = MappingProxyType(
    {
        code: (spec.kind, spec.allowed)
        for code, spec in SCALARS.items()
        if not code.startswith(("FDIV_", "FRET_", "FLAB_", "PORT_"))
    }
)

COLLECTION_TABLES: Final[Mapping[str, CollectionTable]] = MappingProxyType(
    {code: _collection_table(spec) for code, spec in COLLECTIONS.items()}
)

DOCUMENT_TABLES: Final[Mapping[str, DocumentTable]] = MappingProxyType(
    {
        code: DocumentTable(
            children=_child_table(spec.children),
            nested=MappingProxyType({k: _child_table(v) for k, v in spec.nested.items()}),
            order=tuple(c.code for c in spec.children) + tuple(spec.nested),
        )
        for code, spec in DOCUMENTS.items()
    }
)

STAND_TABLES: Final[Mapping[str, StandTable]] = MappingProxyType(
    {
        code: StandTable(
            seq_attr, match, MappingProxyType({c.code: c for c in children}),
            tuple(c.code for c in children),
        )
        for code, (seq_attr, match, children) in STAND_UPDATES.items()
    }
)  # fmt: skip


def _element_kinds() -> dict[str, int]:
    kinds: dict[str, int] = {"FLID": ElementKind.FLID, "FDEL": ElementKind.FDEL}
    kinds.update(dict.fromkeys(SCALAR_ELEMENTS, ElementKind.SCALAR))
    kinds.update(dict.fromkeys(EXCEPTIONS, ElementKind.EXCEPTION))
    kinds["PORT"] = ElementKind.PORT
    kinds.update(dict.fromkeys(COLLECTIONS, ElementKind.COLLECTION))
    kinds.update(dict.fromkeys(DOCUMENTS, ElementKind.DOCUMENT))
    kinds.update(dict.fromkeys(STAND_UPDATES, ElementKind.STAND))
    return kinds


#: Every element tag a flight record may contain -> its kind.
ELEMENT_KINDS: Final[Mapping[str, int]] = MappingProxyType(_element_kinds())

#: Elements a schedule FLTR may carry (FLID included).
FLTR_ALLOWED: Final[frozenset[str]] = FLTR_ELEMENTS | {"FLID"}
