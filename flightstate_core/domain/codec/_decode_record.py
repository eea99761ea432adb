"""Decoding of one flight record: a schedule FLTR or a FLOP block.

Rules (docs/design.md "Value semantics", docs/protocol.md §4-§7), applied in one pass over the
record's children:

1. FLID exactly once, with non-blank text. A scalar element at most once: absent is
   Unchanged (not in the mapping), ``<X/>`` is CLEAR, text is ``Set(raw, typed)``.
2. FDIV/FRET/FLAB map onto their scalar parts: no text and no (or only blank) attributes
   clears every part; an attribute in ``clear_on_empty_attr`` that is ``""`` clears every
   part; otherwise the text part is Set/CLEAR and each attribute present is Set, and an
   enumerated attribute that is ``""`` is a protocol error (a diversion needs a direction).
3. PORT: POID O/C picks PORT_OPEN/PORT_CLOSE, POTM is its value (empty clears it); a
   missing or unknown POID, or a missing POTM, is a protocol error.
4. A FLOP block may carry FLID, FFID and the elements of its subtype only, at least one
   of the latter; FDEL marks the record deleted.
5. Anything not in the catalog (element or attribute), stray text, a repeated scalar, a bad
   time or a value outside ``allowed`` is a protocol error naming the element.
"""

from __future__ import annotations

from collections.abc import Collection

from flightstate_core.domain.catalog import EXCEPTIONS, PORT_SCALARS, SCALARS, ValueKind
from flightstate_core.domain.codec._common import (
    Element,
    ValueCache,
    attributes,
    check_leaf,
    check_no_text,
    check_tail,
    first_attribute,
    tag_name,
)
from flightstate_core.domain.codec._decode_items import (
    decode_collection,
    decode_document,
    decode_stand_update,
)
from flightstate_core.domain.codec._tables import ELEMENT_KINDS, SCALAR_ELEMENTS, ElementKind
from flightstate_core.domain.errors import ProtocolError
from flightstate_core.domain.limits import FLID_MAX_BYTES, INDEXED_SCALARS, over_limit
from flightstate_core.domain.messages import (
    CollectionValue,
    DocumentValue,
    FlightRecord,
    StandUpdate,
)
from flightstate_core.domain.values import CLEAR, Clear, Set

__all__ = ["RecordDecoder"]

Scalars = dict[str, Set | Clear]

#: Element tag -> the same text as one shared object: a record's scalars dict is keyed by
#: it, so a 1,600-flight package keeps one string per tag instead of 40,000.
_CANONICAL_TAGS: dict[str, str] = {tag: tag for tag in ELEMENT_KINDS}

_SCALAR = ElementKind.SCALAR
_COLLECTION = ElementKind.COLLECTION
_LISTED = frozenset({ElementKind.COLLECTION, ElementKind.DOCUMENT})


class _Record:
    """What the loop over one record's children has gathered so far."""

    __slots__ = ("delete", "flid", "lists", "scalars", "stands")

    def __init__(self, *, delete: bool) -> None:
        self.scalars: Scalars = {}
        self.lists: dict[str, list[Element]] = {}
        self.stands: list[StandUpdate] = []
        self.flid: str | None = None
        self.delete = delete


class RecordDecoder:
    """Decodes the records of one message (shares one value cache across them)."""

    __slots__ = ("_values",)

    def __init__(self, values: ValueCache) -> None:
        self._values = values

    def record(
        self,
        block: Element,
        path: str,
        allowed: Collection[str],
        members: frozenset[str] | None = None,
        *,
        delete: bool = False,
    ) -> FlightRecord:
        """One FLTR (``members`` None) or FLOP block (``members``: its subtype's elements)."""
        # Longer than our usual function on purpose: this loop runs once per element of a
        # 2,000-flight package, so the scalar case is inlined and error paths are calls.
        check_no_text(block, path)
        acc = _Record(delete=delete)
        scalars = acc.scalars
        lists = acc.lists
        carried = members is None
        kinds = ELEMENT_KINDS
        canonical = _CANONICAL_TAGS
        known = self._values.by_code
        for element in block:
            # lxml makes a new str for every ``.tag``; the shared one keys the record's dict
            tag = canonical.get(element.tag)
            if tag is None or tag not in allowed:
                raise self._unexpected(element, path, members)
            kind = kinds[tag]
            if kind == _SCALAR:
                if tag in scalars or len(element) or element.attrib:
                    _bad_scalar(element, tag, path, scalars)
                text = element.text
                if text is None:
                    scalars[tag] = CLEAR
                else:
                    seen = known.get(tag)
                    found = seen.get(text) if seen is not None else None
                    scalars[tag] = found if found is not None else self._scalar(text, tag, path)
            elif kind in _LISTED:
                lists.setdefault(tag, []).append(element)
            else:
                self._other(element, kind, path, acc)
            if not carried and tag in members:  # type: ignore[operator]
                carried = True
            tail = element.tail
            if tail is not None and not tail.isspace():
                check_tail(element, path)
        if acc.flid is None:
            raise ProtocolError(f"{path}/FLID", "missing FLID")
        if not carried:
            raise _missing_member(path, members)
        collections, documents = self._lists(lists, path)
        return FlightRecord(
            acc.flid,
            scalars,
            collections,
            documents,
            tuple(acc.stands),
            delete=acc.delete,
            xpath=path,
        )

    def _lists(
        self, lists: dict[str, list[Element]], path: str
    ) -> tuple[dict[str, CollectionValue], dict[str, DocumentValue]]:
        collections: dict[str, CollectionValue] = {}
        documents: dict[str, DocumentValue] = {}
        for tag, elements in lists.items():
            if ELEMENT_KINDS[tag] == _COLLECTION:
                collections[tag] = decode_collection(self._values, tag, elements, path)
            else:
                documents[tag] = decode_document(self._values, tag, elements, path)
        return collections, documents

    def _other(self, element: Element, kind: int, path: str, acc: _Record) -> None:
        tag = tag_name(element)
        if kind == ElementKind.FLID:
            acc.flid = self._flid(element, path, acc.flid)
        elif kind == ElementKind.EXCEPTION:
            self._exception(element, tag, path, acc.scalars)
        elif kind == ElementKind.PORT:
            self._port(element, path, acc.scalars)
        elif kind == ElementKind.STAND:
            index = sum(1 for update in acc.stands if update.kind == tag) + 1
            acc.stands.append(decode_stand_update(self._values, tag, element, index, path))
        else:  # FDEL
            if acc.delete:
                raise ProtocolError(f"{path}/FDEL[2]", "repeated element")
            check_leaf(element, f"{path}/FDEL")
            check_no_text(element, f"{path}/FDEL")
            acc.delete = True

    def _scalar(self, text: str, tag: str, path: str) -> Set:
        kind, allowed = SCALAR_ELEMENTS[tag]
        limit = INDEXED_SCALARS.get(tag)
        if limit is not None:
            _check_size(text, limit, f"{path}/{tag}", tag)
        try:
            return self._values.scalar(tag, text, kind, allowed)
        except ValueError as exc:
            raise ProtocolError(f"{path}/{tag}", str(exc)) from None

    def _flid(self, element: Element, path: str, previous: str | None) -> str:
        if previous is not None:
            raise ProtocolError(f"{path}/FLID[2]", "repeated element")
        check_leaf(element, f"{path}/FLID")
        text = element.text
        if text is None or not text.strip():
            raise ProtocolError(f"{path}/FLID", "FLID is empty")
        _check_size(text, FLID_MAX_BYTES, f"{path}/FLID", "FLID")
        return text

    def _exception(self, element: Element, tag: str, path: str, scalars: Scalars) -> None:
        spec = EXCEPTIONS[tag]
        here = f"{path}/{tag}"
        if spec.text_part in scalars:
            raise ProtocolError(f"{here}[2]", "repeated element")
        if len(element):
            raise ProtocolError(f"{here}/{tag_name(element[0])}", "unexpected child element")
        attrs = attributes(element)
        for name in attrs:
            if name not in spec.attributes:
                raise ProtocolError(f"{here}/@{name}", "unknown attribute")
        text = element.text or ""
        blank = not text and not any(attrs.values())
        if blank or any(attrs.get(name) == "" for name in spec.clear_on_empty_attr):
            for part in (spec.text_part, *spec.attributes.values()):
                scalars[part] = CLEAR
            return
        scalars[spec.text_part] = Set(text) if text else CLEAR
        for name, raw in attrs.items():
            part = spec.attributes[name]
            part_spec = SCALARS[part]
            if raw == "" and part_spec.allowed is not None:
                raise ProtocolError(f"{here}/@{name}", f"{name} is empty while {tag} is set")
            try:
                scalars[part] = (
                    self._values.value(raw, part_spec.kind, part_spec.allowed) if raw else CLEAR
                )
            except ValueError as exc:
                raise ProtocolError(f"{here}/@{name}", str(exc)) from None

    def _port(self, element: Element, path: str, scalars: Scalars) -> None:
        index = 1 + sum(1 for code in PORT_SCALARS.values() if code in scalars)
        here = f"{path}/PORT[{index}]"
        if element.attrib:
            raise ProtocolError(f"{here}/@{first_attribute(element)}", "unknown attribute")
        check_no_text(element, here)
        found: dict[str, str] = {}
        for child in element:
            tag = tag_name(child)
            if tag not in ("POID", "POTM"):
                raise ProtocolError(f"{here}/{tag}", "unknown element")
            if tag in found:
                raise ProtocolError(f"{here}/{tag}[2]", "repeated element")
            check_leaf(child, f"{here}/{tag}")
            check_tail(child, here)
            found[tag] = child.text or ""
        target = PORT_SCALARS.get(found.get("POID", ""))
        if target is None:
            reason = "unknown POID" if "POID" in found else "missing POID"
            raise ProtocolError(f"{here}/POID", f"{reason}: must be one of O, C")
        if "POTM" not in found:
            raise ProtocolError(f"{here}/POTM", "missing POTM")
        if target in scalars:
            raise ProtocolError(here, f"repeated PORT with POID {found['POID']}")
        potm = found["POTM"]
        try:
            scalars[target] = self._values.value(potm, ValueKind.TIME, None) if potm else CLEAR
        except ValueError as exc:
            raise ProtocolError(f"{here}/POTM", str(exc)) from None

    @staticmethod
    def _unexpected(element: Element, path: str, members: frozenset[str] | None) -> ProtocolError:
        tag = tag_name(element)
        if members is not None and tag in ELEMENT_KINDS:
            return ProtocolError(f"{path}/{tag}", "element not allowed by this FLOP subtype")
        return ProtocolError(f"{path}/{tag}", "unknown element")


def _check_size(text: str, limit: int, here: str, tag: str) -> None:
    """A value stored in a key or an indexed column must fit it (``domain.limits``)."""
    size = over_limit(text, limit)
    if size is not None:
        raise ProtocolError(here, f"{tag} is {size} bytes, over {limit}")


def _bad_scalar(element: Element, tag: str, path: str, scalars: Scalars) -> None:
    if tag in scalars:
        raise ProtocolError(f"{path}/{tag}[2]", "repeated element")
    check_leaf(element, f"{path}/{tag}")


def _missing_member(path: str, members: frozenset[str] | None) -> ProtocolError:
    names = sorted(members or ())
    where = names[0] if len(names) == 1 else "(" + "|".join(names) + ")"
    return ProtocolError(f"{path}/{where}", f"FLOP subtype carries none of {', '.join(names)}")
