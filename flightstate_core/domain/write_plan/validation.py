"""The lossless guard every store runs before it writes a state.

Why strict: the read-after-write of a saved state must equal that state exactly, so a
state that the tables cannot hold losslessly (an unknown code, children out of catalog
order, ordinals that are not 1..n, an empty collection or document, a document item
holding a code twice) is refused with ``PermanentError`` instead of being silently
reshaped (docs/design.md, "One write plan, two thin writers"). Column widths are the
store's own business (Oracle's VARCHAR2 byte limits are checked by its row builder).

Cheap on the hot path: what the store already holds was checked when it was stored (or
read back from the tables), so only the collections and documents a message changed are
walked, and of a collection only the items after a stored prefix.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import islice
from typing import Final

from flightstate_core.domain.catalog import COLLECTIONS
from flightstate_core.domain.errors import PermanentError
from flightstate_core.domain.items import DocItem, Item
from flightstate_core.domain.layout import DOCUMENT_COLUMNS, SCALAR_COLUMNS
from flightstate_core.domain.state import FlightState

__all__ = ["validate"]

_SCALAR_CODES: Final = frozenset(c.code for c in SCALAR_COLUMNS)
_DOCUMENT_CODES: Final = frozenset(DOCUMENT_COLUMNS)
_CHILD_INDEX: Final = {
    code: {child.code: index for index, child in enumerate(spec.children)}
    for code, spec in COLLECTIONS.items()
}


def validate(state: FlightState, stored: FlightState | None = None) -> None:
    """Refuse a state the tables cannot hold losslessly.

    ``stored``: the flight as this store holds it. A collection or document that is the
    very same tuple there was checked when it was stored, so only what a message changed
    is walked item by item."""
    if not _SCALAR_CODES.issuperset(state.scalars):
        unknown = sorted(set(state.scalars) - _SCALAR_CODES)
        raise PermanentError(f"{state.flid}: unknown scalar codes {unknown}")
    if not _DOCUMENT_CODES.issuperset(state.documents):
        unknown = sorted(set(state.documents) - _DOCUMENT_CODES)
        raise PermanentError(f"{state.flid}: unknown document codes {unknown}")
    kept = {} if stored is None else stored.collections
    for code, items in state.collections.items():
        before = kept.get(code)
        if before is not items:
            _validate_items(state.flid, code, items, _kept_prefix(before, items))
    kept_docs = {} if stored is None else stored.documents
    for code, doc in state.documents.items():
        if not doc:
            raise PermanentError(f"{state.flid}/{code}: empty document (absent is the form)")
        if kept_docs.get(code) is not doc:
            for position, item in enumerate(doc, 1):
                _unique_keys(f"{state.flid}/{code}[{position}]", item)


def _kept_prefix(before: Sequence[Item] | None, items: Sequence[Item]) -> int:
    """How many leading items are those already stored (an append keeps them all): they
    were checked when stored, so only the items after them are walked. Comparing the
    tuples is a C loop over mostly identical objects."""
    if not before or len(before) > len(items) or items[: len(before)] != before:
        return 0
    return len(before)


def _validate_items(flid: str, code: str, items: Sequence[Item], checked: int = 0) -> None:
    index = _CHILD_INDEX.get(code)
    if index is None:
        raise PermanentError(f"{flid}: unknown collection {code!r}")
    if not items:
        raise PermanentError(f"{flid}/{code}: empty collection (absent is the normal form)")
    for position, item in enumerate(islice(items, checked, None), checked + 1):
        if item.ordinal != position:
            raise PermanentError(f"{flid}/{code}: ordinal {item.ordinal} at position {position}")
        last = -1
        for child, _ in item.values:
            at = index.get(child)
            if at is None or at <= last:
                raise PermanentError(
                    f"{flid}/{code}[{position}]: child {child!r} unknown or out of catalog order"
                )
            last = at


def _unique_keys(path: str, item: DocItem) -> None:
    """The document rule for repeated keys (see ``documents``): each code once per item."""
    seen: set[str] = set()
    for code, value in item.values:
        if code in seen:
            raise PermanentError(
                f"{path}: key {code!r} twice (a document item holds each code once)"
            )
        seen.add(code)
        if not isinstance(value, str):
            for position, nested in enumerate(value, 1):
                _unique_keys(f"{path}/{code}[{position}]", nested)
