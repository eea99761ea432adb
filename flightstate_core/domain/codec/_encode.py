"""``encode``: a ``Message`` -> canonical SIS XML bytes.

Canonical form: UTF-8 with an XML declaration, no indentation, ``<MSG>`` then ``<META>``
(SNDR SEQN DTTM TYPE STYP) then the payload. A flight record is written as FLID, scalar
elements in catalog order, FDIV/FRET/FLAB, PORT (open, then close), collections and
documents in catalog order, PSHT/TIPT in order, then FDEL (FLOP only). CLEAR is written as
an empty element. Raw payloads (SCHS, reference data) are written as they were kept.

``decode(encode(m)) == m`` holds for every message ``decode`` can produce (the strategies
in ``flightstate_testing.strategies`` generate exactly those). A value that XML 1.0
cannot carry (a control character) raises ``ValueError``.
"""

from __future__ import annotations

import re
from typing import Final

from flightstate_core.domain.catalog import (
    COLLECTIONS,
    DOCUMENTS,
    EXCEPTIONS,
    PORT_SCALARS,
    SCALARS,
)
from flightstate_core.domain.codec._tables import COLLECTION_TABLES, SCALAR_ELEMENTS, STAND_TABLES
from flightstate_core.domain.items import DocItem, Item
from flightstate_core.domain.messages import (
    CollectionValue,
    DocumentValue,
    Envelope,
    FlightRecord,
    FlopMessage,
    Message,
    ReferenceDataMessage,
    ScheduleMessage,
    ScheduleRequest,
    ScheduleSeasonMessage,
    StandUpdate,
)
from flightstate_core.domain.values import Clear, Set

__all__ = ["encode"]

_INVALID: Final = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_TEXT: Final = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "\r": "&#13;"})
_ATTR: Final = str.maketrans(
    {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}
    | {"\r": "&#13;", "\n": "&#10;", "\t": "&#9;"}
)
_KNOWN_SCALARS: Final = frozenset(SCALARS)


def _checked(value: str) -> str:
    bad = _INVALID.search(value)
    if bad is not None:
        raise ValueError(f"character {bad.group()!r} cannot be carried by XML 1.0")
    return value


def _text(value: str) -> str:
    return _checked(value).translate(_TEXT)


def _attrs(pairs: list[tuple[str, str]]) -> str:
    return "".join(f' {name}="{_checked(value).translate(_ATTR)}"' for name, value in pairs)


def _leaf(out: list[str], tag: str, text: str) -> None:
    out.append(f"<{tag}>{_text(text)}</{tag}>")


def _op_text(op: Set | Clear) -> str:
    return op.raw if isinstance(op, Set) else ""


def _envelope(out: list[str], envelope: Envelope) -> None:
    out.append("<META>")
    for tag, value in (
        ("SNDR", envelope.sndr),
        ("SEQN", envelope.seqn),
        ("DTTM", envelope.dttm_raw),
        ("TYPE", envelope.type),
        ("STYP", envelope.styp),
    ):
        _leaf(out, tag, value)
    out.append("</META>")


def _exception(out: list[str], code: str, scalars: dict[str, Set | Clear]) -> None:
    spec = EXCEPTIONS[code]
    text_op = scalars.get(spec.text_part)
    attr_ops = [(name, scalars.get(part)) for name, part in spec.attributes.items()]
    if text_op is None and all(op is None for _, op in attr_ops):
        return
    pairs = [(name, op.raw) for name, op in attr_ops if isinstance(op, Set)]
    if not pairs and not isinstance(text_op, Set):
        out.append(f"<{code}></{code}>")  # clears every part
        return
    pairs += [(name, "") for name, op in attr_ops if isinstance(op, Clear)]
    text = text_op.raw if isinstance(text_op, Set) else ""
    out.append(f"<{code}{_attrs(pairs)}>{_text(text)}</{code}>")


def _item(out: list[str], code: str, item: Item) -> None:
    table = COLLECTION_TABLES[code]
    spec = table.spec
    pairs = [] if item.seq is None or spec.seq_attr is None else [(spec.seq_attr, item.seq)]
    pairs += [(key, value) for key, value in item.values if key in table.children.attributes]
    out.append(f"<{code}{_attrs(pairs)}>")
    for key, value in item.values:
        if key in table.children.elements:
            _leaf(out, key, value)
    if spec.text_child is not None:
        out.append(_text(item.get(spec.text_child) or ""))
    out.append(f"</{code}>")


def _collection(out: list[str], code: str, value: CollectionValue) -> None:
    if isinstance(value, Clear):
        out.append(f"<{code}></{code}>")
        return
    for item in value:
        _item(out, code, item)


def _doc_item(out: list[str], tag: str, item: DocItem) -> None:
    out.append(f"<{tag}>")
    for key, value in item.values:
        if isinstance(value, str):
            _leaf(out, key, value)
        else:
            for sub in value:
                _doc_item(out, key, sub)
    out.append(f"</{tag}>")


def _document(out: list[str], code: str, value: DocumentValue) -> None:
    if isinstance(value, Clear):
        out.append(f"<{code}></{code}>")
        return
    for item in value:
        _doc_item(out, code, item)


def _stand(out: list[str], update: StandUpdate) -> None:
    table = STAND_TABLES[update.kind]
    pairs = [] if update.seq is None or table.seq_attr is None else [(table.seq_attr, update.seq)]
    out.append(f"<{update.kind}{_attrs(pairs)}>")
    for key, op in update.values:
        _leaf(out, key, _op_text(op))
    _leaf(out, table.match, update.match)
    out.append(f"</{update.kind}>")


def _record(out: list[str], tag: str, record: FlightRecord, *, flop: bool) -> None:
    scalars = dict(record.scalars)
    unknown = set(scalars) - _KNOWN_SCALARS
    if unknown:
        raise ValueError(f"FLID {record.flid}: unknown scalar codes {sorted(unknown)}")
    out.append(f"<{tag}>")
    _leaf(out, "FLID", record.flid)
    for code in SCALAR_ELEMENTS:
        op = scalars.get(code)
        if op is not None:
            _leaf(out, code, _op_text(op))
    for code in EXCEPTIONS:
        _exception(out, code, scalars)
    for poid, code in PORT_SCALARS.items():
        port = scalars.get(code)
        if port is not None:
            out.append(f"<PORT><POID>{poid}</POID><POTM>{_text(_op_text(port))}</POTM></PORT>")
    for code in COLLECTIONS:
        if code in record.collections:
            _collection(out, code, record.collections[code])
    for code in DOCUMENTS:
        if code in record.documents:
            _document(out, code, record.documents[code])
    for update in record.stand_updates:
        _stand(out, update)
    if flop and record.delete:
        out.append("<FDEL></FDEL>")
    out.append(f"</{tag}>")


def _payload(out: list[str], message: Message) -> None:
    if isinstance(message, ScheduleMessage):
        out.append("<SCHD>")
        if message.recs is not None:
            _leaf(out, "RECS", str(message.recs))
        for record in message.records:
            _record(out, "FLTR", record, flop=False)
        out.append("</SCHD>")
    elif isinstance(message, FlopMessage):
        for block in message.blocks:
            _record(out, "FLOP", block, flop=True)
    elif isinstance(message, ReferenceDataMessage):
        if message.recs is not None:
            _leaf(out, "RECS", str(message.recs))
        out.append(message.payload_xml)
    elif isinstance(message, ScheduleSeasonMessage):
        out.append(message.payload_xml)
    elif isinstance(message, ScheduleRequest):
        out.append("<RQFD>")
        _leaf(out, "STDB", message.stdb)
        _leaf(out, "STDE", message.stde)
        out.append("</RQFD>")
    else:
        out.append("<RQRD>")
        _leaf(out, "RTYP", message.rtyp)
        out.append("</RQRD>")


def encode(message: Message) -> bytes:
    """Canonical XML (UTF-8, declaration, META then payload) of one message."""
    out: list[str] = ['<?xml version="1.0" encoding="UTF-8"?>\n<MSG>']
    _envelope(out, message.envelope)
    _payload(out, message)
    out.append("</MSG>\n")
    return "".join(out).encode("utf-8")
