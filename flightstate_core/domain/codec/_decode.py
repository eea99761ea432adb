"""``decode``: raw SIS XML -> a ``Message`` (or ``ProtocolError`` naming the element).

Dispatch is by META/TYPE (docs/protocol.md §3): SCHD, FLOP, SCHS, the 23 reference-data
types, and our own requests RQFD/RQRD. Anything else is a protocol error at ``/MSG/META/TYPE``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from copy import deepcopy
from types import MappingProxyType
from typing import Final

from lxml import etree

from flightstate_core.domain.catalog import (
    FLOP_SUBTYPES,
    REFERENCE_DATA_TYPES,
    SCHEDULE_STYPES,
    ValueKind,
)
from flightstate_core.domain.codec._common import (
    Element,
    ValueCache,
    check_leaf,
    check_no_text,
    check_tail,
    tag_name,
)
from flightstate_core.domain.codec._decode_envelope import decode_envelope, split_message
from flightstate_core.domain.codec._decode_record import RecordDecoder
from flightstate_core.domain.codec._digest import payload_digest
from flightstate_core.domain.codec._tables import FLTR_ALLOWED
from flightstate_core.domain.codec._xml import parse_message
from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.errors import ProtocolError
from flightstate_core.domain.messages import (
    Envelope,
    FlopMessage,
    Message,
    ReferenceDataMessage,
    ReferenceRequest,
    ScheduleMessage,
    ScheduleRequest,
    ScheduleSeasonMessage,
)

__all__ = ["decode", "decode_envelope_only"]

_DEFAULT_CONFIG: Final = CoreConfig()

#: FLOP subtype -> elements a block may carry (its members plus FLID and FFID).
_FLOP_ALLOWED: Final[Mapping[str, frozenset[str]]] = MappingProxyType(
    {styp: members | {"FLID", "FFID"} for styp, members in FLOP_SUBTYPES.items()}
)

_Decoder = Callable[[Envelope, list[Element], CoreConfig], Message]


def _values(config: CoreConfig) -> ValueCache:
    return ValueCache(config.airport_tz, config.century_pivot)


def _recs(element: Element | None, path: str, count: int, what: str) -> int | None:
    if element is None:
        return None
    check_leaf(element, path)
    text = element.text or ""
    if not (text.isascii() and text.isdigit()):
        raise ProtocolError(path, f"RECS {text!r} is not a count")
    if int(text) != count:
        raise ProtocolError(path, f"RECS says {int(text)} but {count} {what} present")
    return int(text)


def _single(payload: list[Element], tag: str) -> Element:
    for index, element in enumerate(payload):
        if element.tag != tag or index:
            raise ProtocolError(f"/MSG/{tag_name(element)}", f"expected one {tag} payload")
    if not payload:
        raise ProtocolError(f"/MSG/{tag}", f"missing {tag}")
    return payload[0]


def _schedule(envelope: Envelope, payload: list[Element], config: CoreConfig) -> Message:
    if envelope.styp not in SCHEDULE_STYPES:
        raise ProtocolError("/MSG/META/STYP", f"unknown SCHD subtype {envelope.styp!r}")
    schd = _single(payload, "SCHD")
    check_no_text(schd, "/MSG/SCHD")
    recs: Element | None = None
    fltrs: list[Element] = []
    for child in schd:
        if child.tag == "FLTR":
            fltrs.append(child)
        elif child.tag == "RECS" and recs is None:
            recs = child
        else:
            suffix = "[2]" if child.tag == "RECS" else ""
            raise ProtocolError(f"/MSG/SCHD/{tag_name(child)}{suffix}", "unexpected element")
        check_tail(child, "/MSG/SCHD")
    count = _recs(recs, "/MSG/SCHD/RECS", len(fltrs), "FLTR")
    digest = payload_digest(payload)  # before the records are decoded and their trees freed
    decoder = RecordDecoder(_values(config))
    delete = envelope.styp == "DEL"
    records = []
    for index, fltr in enumerate(fltrs, 1):
        path = f"/MSG/SCHD/FLTR[{index}]"
        records.append(decoder.record(fltr, path, FLTR_ALLOWED, delete=delete))
        # The record is now plain Python values: free its subtree, so a package's tree
        # and its decoded records do not both peak in memory.
        fltr.clear()
    return ScheduleMessage(envelope, count, tuple(records), payload_digest=digest)


def _flop(envelope: Envelope, payload: list[Element], config: CoreConfig) -> Message:
    allowed = _FLOP_ALLOWED.get(envelope.styp)
    if allowed is None:
        raise ProtocolError("/MSG/META/STYP", f"unknown FLOP subtype {envelope.styp!r}")
    members = FLOP_SUBTYPES[envelope.styp]
    if not payload:
        raise ProtocolError("/MSG/FLOP", "missing FLOP")
    decoder = RecordDecoder(_values(config))
    blocks = []
    for index, element in enumerate(payload, 1):
        if element.tag != "FLOP":
            raise ProtocolError(f"/MSG/{tag_name(element)}", "unexpected element")
        blocks.append(decoder.record(element, f"/MSG/FLOP[{index}]", allowed, members))
    return FlopMessage(envelope, tuple(blocks), payload_digest=payload_digest(payload))


def _raw_xml(elements: list[Element]) -> str:
    """The payload elements as XML text, without namespace declarations they do not use."""
    parts = []
    for element in elements:
        copy = deepcopy(element)
        etree.cleanup_namespaces(copy)
        parts.append(etree.tostring(copy, encoding="unicode", with_tail=False))
    return "".join(parts)


def _season(envelope: Envelope, payload: list[Element], config: CoreConfig) -> Message:
    digest = payload_digest(payload)
    return ScheduleSeasonMessage(envelope, _raw_xml(payload), payload_digest=digest)


def _reference(envelope: Envelope, payload: list[Element], config: CoreConfig) -> Message:
    recs = [e for e in payload if e.tag == "RECS"]
    if len(recs) > 1:
        raise ProtocolError("/MSG/RECS[2]", "repeated element")
    body = [e for e in payload if e.tag != "RECS"]
    records = sum(1 for e in body if e.tag == envelope.type)
    what = f"{envelope.type} records"
    note = ""
    try:
        count = _recs(recs[0] if recs else None, "/MSG/RECS", records, what)
    except ProtocolError as exc:  # not ours to validate: noted, the message stays IGNORED
        count, note = _declared(recs[0]), str(exc)
        if count is None:  # no count to re-encode it from: the element stays in the body
            body = [e for e in payload if e.tag != "RECS" or e is recs[0]]
    digest = payload_digest(payload)
    return ReferenceDataMessage(
        envelope, count, _raw_xml(body), payload_digest=digest, recs_note=note
    )


def _declared(element: Element) -> int | None:
    """The count a RECS element declares, if it is one."""
    text = element.text or ""
    return int(text) if text.isascii() and text.isdigit() and len(element) == 0 else None


def _request_fields(payload: list[Element], tag: str, names: tuple[str, ...]) -> dict[str, str]:
    element = _single(payload, tag)
    here = f"/MSG/{tag}"
    check_no_text(element, here)
    found: dict[str, str] = {}
    for child in element:
        name = tag_name(child)
        if name not in names:
            raise ProtocolError(f"{here}/{name}", "unknown element")
        if name in found:
            raise ProtocolError(f"{here}/{name}[2]", "repeated element")
        check_leaf(child, f"{here}/{name}")
        check_tail(child, here)
        found[name] = child.text or ""
    for name in names:
        if not found.get(name):
            raise ProtocolError(f"{here}/{name}", f"missing or empty {name}")
    return found


def _schedule_request(envelope: Envelope, payload: list[Element], config: CoreConfig) -> Message:
    if envelope.styp != "NONE":
        raise ProtocolError("/MSG/META/STYP", "an RQFD has STYP NONE")
    found = _request_fields(payload, "RQFD", ("STDB", "STDE"))
    values = _values(config)
    for name in ("STDB", "STDE"):
        try:
            values.value(found[name], ValueKind.TIME, None)
        except ValueError as exc:
            raise ProtocolError(f"/MSG/RQFD/{name}", str(exc)) from None
    digest = payload_digest(payload)
    return ScheduleRequest(envelope, found["STDB"], found["STDE"], payload_digest=digest)


def _reference_request(envelope: Envelope, payload: list[Element], config: CoreConfig) -> Message:
    rtyp = _request_fields(payload, "RQRD", ("RTYP",))["RTYP"]
    if rtyp != envelope.styp:
        raise ProtocolError("/MSG/RQRD/RTYP", f"RTYP {rtyp!r} differs from STYP {envelope.styp!r}")
    return ReferenceRequest(envelope, rtyp, payload_digest=payload_digest(payload))


_DECODERS: Final[Mapping[str, _Decoder]] = MappingProxyType(
    {
        "SCHD": _schedule,
        "FLOP": _flop,
        "SCHS": _season,
        "RQFD": _schedule_request,
        "RQRD": _reference_request,
        **dict.fromkeys(REFERENCE_DATA_TYPES, _reference),
    }
)


def decode(raw: bytes | str, config: CoreConfig | None = None) -> Message:
    """Decode one SIS message; any protocol violation raises ``ProtocolError(xpath, reason)``."""
    config = config or _DEFAULT_CONFIG
    root = parse_message(raw, config.max_message_bytes)
    meta, payload = split_message(root)
    envelope = decode_envelope(meta, config.airport_tz)
    decoder = _DECODERS.get(envelope.type)
    if decoder is None:
        raise ProtocolError("/MSG/META/TYPE", f"unknown message type {envelope.type!r}")
    return decoder(envelope, payload, config)


def decode_envelope_only(raw: bytes | str, config: CoreConfig | None = None) -> Envelope:
    """Only the envelope (for the SUBSYSTEM columns of a message whose payload is broken)."""
    config = config or _DEFAULT_CONFIG
    meta, _ = split_message(parse_message(raw, config.max_message_bytes))
    return decode_envelope(meta, config.airport_tz)
