"""Decoding of repeated elements: collections, documents (SRVT/VIPF/MAFL), PSHT/TIPT.

Rules (docs/design.md "Value semantics", docs/protocol.md §6):

1. Every element is one item, in message order, ``ordinal`` from 1; nothing is merged,
   de-duplicated or dropped. ``seq`` is the seq attribute exactly as sent (None if absent).
2. Every child present is kept; a present-empty child is ``""``; children are stored in
   catalog order. DELY keeps its attributes as children and its text as ``DLTX``, which
   is always present (``""`` when the element has no text).
3. One empty element (no attribute, no child, no text) clears the collection/document; an
   empty element next to other elements is a protocol error (it would be silently lost).
4. GTDT/CKDT (``clear_by_seq0``): a single item with seq ``"0"`` and no children clears.
5. Unknown or repeated children, unknown attributes, stray text, child elements inside a
   value, a bad time and a value outside ``allowed`` are protocol errors naming the element.
"""

from __future__ import annotations

from flightstate_core.domain.catalog import ChildSpec
from flightstate_core.domain.codec._common import (
    Element,
    ValueCache,
    attributes,
    check_leaf,
    check_no_text,
    check_tail,
    element_path,
    first_attribute,
    tag_name,
)
from flightstate_core.domain.codec._tables import (
    COLLECTION_TABLES,
    DOCUMENT_TABLES,
    STAND_TABLES,
    ChildTable,
    CollectionTable,
)
from flightstate_core.domain.errors import ProtocolError
from flightstate_core.domain.items import DocItem, DocValue, Item
from flightstate_core.domain.limits import over_limit
from flightstate_core.domain.messages import CollectionValue, DocumentValue, StandUpdate
from flightstate_core.domain.values import CLEAR, Clear, Set

__all__ = ["decode_collection", "decode_document", "decode_stand_update"]

_EMPTY_ALONE = "an empty element clears the whole list and must be the only one"


def _child_text(
    values: ValueCache, child: Element, spec: ChildSpec | None, path: str, found: dict[str, str]
) -> None:
    """Read one value child into ``found`` (validated, not repeated, a leaf)."""
    if spec is None:
        raise ProtocolError(f"{path}/{tag_name(child)}", "unknown element")
    tag = spec.code
    if tag in found:
        raise ProtocolError(f"{path}/{tag}[2]", "repeated element")
    if len(child) or child.attrib:
        check_leaf(child, f"{path}/{tag}")
    text = child.text or ""
    try:
        values.check(text, spec.kind, spec.allowed)
    except ValueError as exc:
        raise ProtocolError(f"{path}/{tag}", str(exc)) from None
    found[tag] = text


def _item_children(
    values: ValueCache, table: ChildTable, element: Element, path: str
) -> dict[str, str]:
    text = element.text
    if text is not None and not text.isspace():
        check_no_text(element, path)
    found: dict[str, str] = {}
    elements = table.elements
    checked = table.checked
    bounded = table.bounded
    by_kind = values.by_kind
    for child in element:
        tag = child.tag
        if tag not in elements or tag in found or len(child) or child.attrib:
            _child_text(values, child, elements.get(tag), path, found)  # raises
        text = child.text or ""
        if text and tag in checked:
            kind = checked[tag]
            if kind is None or text not in by_kind[kind]:
                _check(values, text, elements[tag], path)
        if bounded and tag in bounded:
            _check_size(text, bounded[tag], path, tag)
        found[tag] = text
        tail = child.tail
        if tail is not None and not tail.isspace():
            check_tail(child, path)
    return found


def _check(values: ValueCache, text: str, spec: ChildSpec, path: str) -> None:
    try:
        values.check(text, spec.kind, spec.allowed)
    except ValueError as exc:
        raise ProtocolError(f"{path}/{spec.code}", str(exc)) from None


def _check_size(text: str, limit: int, path: str, tag: str) -> None:
    size = over_limit(text, limit)
    if size is not None:
        raise ProtocolError(f"{path}/{tag}", f"{tag} is {size} bytes, over {limit}")


def _item_attributes(
    values: ValueCache, table: CollectionTable, element: Element, path: str, found: dict[str, str]
) -> str | None:
    seq: str | None = None
    seq_attr = table.spec.seq_attr
    for name, value in attributes(element).items():
        if name == seq_attr:
            seq = value
            continue
        spec = table.children.attributes.get(name)
        if spec is None:
            raise ProtocolError(f"{path}/@{name}", "unknown attribute")
        try:
            values.check(value, spec.kind, spec.allowed)
        except ValueError as exc:
            raise ProtocolError(f"{path}/@{name}", str(exc)) from None
        found[name] = value
    return seq


def _item(
    values: ValueCache, table: CollectionTable, element: Element, ordinal: int, path: str
) -> Item | None:
    """One collection item, or None for an empty element (a clear marker)."""
    text_child = table.spec.text_child
    if text_child is None:
        found = _item_children(values, table.children, element, path)
    else:
        found = {}
        if len(element):
            raise ProtocolError(f"{path}/{tag_name(element[0])}", "unexpected child element")
        text = element.text
        if text is None and not element.attrib:
            return None
        found[text_child] = text or ""
    seq = _item_attributes(values, table, element, path, found) if element.attrib else None
    if not found and not element.attrib:
        return None
    order = table.children.order
    shared = values.shared
    pairs = tuple([shared.setdefault(pair, pair) for pair in _pairs(order, found)])
    return Item(ordinal, seq, shared.setdefault(pairs, pairs))


def _pairs(order: tuple[str, ...], found: dict[str, str]) -> list[tuple[str, str]]:
    return [(code, found[code]) for code in order if code in found]


def decode_collection(
    values: ValueCache, code: str, elements: list[Element], record_path: str
) -> CollectionValue:
    """All elements of one collection in one record -> a tuple of items, or CLEAR."""
    table = COLLECTION_TABLES[code]
    items: list[Item] = []
    for ordinal, element in enumerate(elements, 1):
        path = f"{record_path}/{code}[{ordinal}]"
        item = _item(values, table, element, ordinal, path)
        if item is None:
            if len(elements) == 1:
                return CLEAR
            raise ProtocolError(path, _EMPTY_ALONE)
        items.append(item)
    if table.spec.clear_by_seq0 and len(items) == 1 and items[0].seq == "0" and not items[0].values:
        return CLEAR
    return tuple(items)


def _doc_item(values: ValueCache, code: str, element: Element, path: str) -> DocItem | None:
    """One document entry (or a nested VIPT entry); None when the element is empty."""
    table = DOCUMENT_TABLES.get(code)
    children = table.children if table is not None else _nested_table(code)
    if element.attrib:
        raise ProtocolError(f"{path}/@{first_attribute(element)}", "unknown attribute")
    check_no_text(element, path)
    found: dict[str, DocValue] = {}
    texts: dict[str, str] = {}
    groups: dict[str, list[DocItem]] = {}
    nested = table.nested if table is not None else {}
    for child in element:
        tag = tag_name(child)
        if tag in nested:
            group = groups.setdefault(tag, [])
            sub_path = f"{path}/{tag}[{len(group) + 1}]"
            group.append(_doc_item(values, tag, child, sub_path) or DocItem(()))
        else:
            spec = children.elements.get(tag)
            if spec is None:
                raise ProtocolError(f"{path}/{tag}", "unknown element")
            _child_text(values, child, spec, path, texts)
        check_tail(child, path)
    if not texts and not groups:
        return None
    found.update(texts)
    found.update({tag: tuple(group) for tag, group in groups.items()})
    order = table.order if table is not None else children.order
    return DocItem(tuple([(key, found[key]) for key in order if key in found]))


def _nested_table(code: str) -> ChildTable:
    for table in DOCUMENT_TABLES.values():
        if code in table.nested:
            return table.nested[code]
    raise KeyError(code)


def decode_document(
    values: ValueCache, code: str, elements: list[Element], record_path: str
) -> DocumentValue:
    """All SRVT (VIPF, MAFL) elements of one record -> a tuple of entries, or CLEAR."""
    entries: list[DocItem] = []
    for index, element in enumerate(elements, 1):
        path = f"{record_path}/{code}[{index}]"
        entry = _doc_item(values, code, element, path)
        if entry is None:
            if len(elements) == 1:
                return CLEAR
            raise ProtocolError(path, _EMPTY_ALONE)
        entries.append(entry)
    return tuple(entries)


def decode_stand_update(
    values: ValueCache, code: str, element: Element, index: int, record_path: str
) -> StandUpdate:
    """A PSHT / TIPT element: its match child, its seq attribute, the values it copies."""
    table = STAND_TABLES[code]
    path = element_path(record_path, code, index)
    seq: str | None = None
    for name, value in attributes(element).items():
        if name != table.seq_attr:
            raise ProtocolError(f"{path}/@{name}", "unknown attribute")
        seq = value
    check_no_text(element, path)
    match: str | None = None
    found: dict[str, Set | Clear] = {}
    for child in element:
        tag = tag_name(child)
        check_leaf(child, f"{path}/{tag}")
        check_tail(child, path)
        if tag == table.match:
            if match is not None:
                raise ProtocolError(f"{path}/{tag}[2]", "repeated element")
            match = child.text or ""
            continue
        spec = table.children.get(tag)
        if spec is None:
            raise ProtocolError(f"{path}/{tag}", "unknown element")
        if tag in found:
            raise ProtocolError(f"{path}/{tag}[2]", "repeated element")
        text = child.text
        try:
            found[tag] = values.value(text, spec.kind, spec.allowed) if text else CLEAR
        except ValueError as exc:
            raise ProtocolError(f"{path}/{tag}", str(exc)) from None
    if match is None:
        raise ProtocolError(f"{path}/{table.match}", f"{code} needs {table.match}")
    ordered = tuple([(key, found[key]) for key in table.order if key in found])
    return StandUpdate(code, match, seq, ordered, xpath=path)
