"""The MSG root and its META block (docs/protocol.md §1)."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from flightstate_core.domain.codec._common import (
    Element,
    check_leaf,
    check_no_text,
    check_tail,
    tag_name,
)
from flightstate_core.domain.errors import ProtocolError
from flightstate_core.domain.limits import (
    DTTM_YEARS,
    ENVELOPE_TEXT_MAX_BYTES,
    SEQN_MAX_DIGITS,
    over_limit,
)
from flightstate_core.domain.messages import Envelope

__all__ = ["META_FIELDS", "decode_envelope", "split_message"]

#: META children, all required, each exactly once.
META_FIELDS = ("SNDR", "SEQN", "DTTM", "TYPE", "STYP")
_META_SET = frozenset(META_FIELDS)
#: META fields kept as text in bounded columns (PROC_STATE.MSG_TYPE/MSG_STYP, the identity key).
_TEXT_FIELDS = ("SNDR", "TYPE", "STYP")


def split_message(root: Element) -> tuple[Element, list[Element]]:
    """(META, the payload elements in order) of a MSG root."""
    if root.tag != "MSG":
        raise ProtocolError(f"/{tag_name(root)}", "the root element must be MSG")
    check_no_text(root, "/MSG")
    meta: Element | None = None
    payload: list[Element] = []
    for child in root:
        if child.tag == "META":
            if meta is not None:
                raise ProtocolError("/MSG/META[2]", "repeated element")
            meta = child
        else:
            payload.append(child)
        check_tail(child, "/MSG")
    if meta is None:
        raise ProtocolError("/MSG/META", "missing META")
    return meta, payload


def _dttm(raw: str, zone: ZoneInfo) -> datetime:
    if len(raw) != len("yyyyMMddHHmmss") or not (raw.isascii() and raw.isdigit()):
        raise ProtocolError("/MSG/META/DTTM", f"{raw[:40]!r} is not yyyyMMddHHmmss")
    first, last = DTTM_YEARS
    if not first <= int(raw[0:4]) <= last:
        raise ProtocolError("/MSG/META/DTTM", f"{raw!r}: year outside {first}-{last}")
    try:
        return datetime(
            int(raw[0:4]), int(raw[4:6]), int(raw[6:8]),
            int(raw[8:10]), int(raw[10:12]), int(raw[12:14]), tzinfo=zone,
        )  # fmt: skip
    except ValueError as exc:
        raise ProtocolError("/MSG/META/DTTM", f"{raw!r}: {exc}") from None


def _check_sizes(found: dict[str, str]) -> None:
    """Over-long META values: rejected before they reach a column or an index. The reason
    gives the size, never the (possibly megabytes long) value itself."""
    for name in _TEXT_FIELDS:
        size = over_limit(found[name], ENVELOPE_TEXT_MAX_BYTES)
        if size is not None:
            limit = ENVELOPE_TEXT_MAX_BYTES
            raise ProtocolError(f"/MSG/META/{name}", f"{name} is {size} bytes, over {limit}")
    seqn = found["SEQN"]
    if not (seqn.isascii() and seqn.isdigit()):
        raise ProtocolError("/MSG/META/SEQN", f"{seqn[:40]!r} is not an integer")
    if len(seqn) > SEQN_MAX_DIGITS:
        reason = f"SEQN has {len(seqn)} digits, over {SEQN_MAX_DIGITS}"
        raise ProtocolError("/MSG/META/SEQN", reason)


def _bad_meta_child(child: Element, found: dict[str, str]) -> None:
    tag = tag_name(child)
    if tag not in META_FIELDS:
        raise ProtocolError(f"/MSG/META/{tag}", "unknown element")
    if tag in found:
        raise ProtocolError(f"/MSG/META/{tag}[2]", "repeated element")
    check_leaf(child, f"/MSG/META/{tag}")


def decode_envelope(meta: Element, zone: ZoneInfo) -> Envelope:
    """The envelope of a META element; every field is required and non-empty."""
    check_no_text(meta, "/MSG/META")
    found: dict[str, str] = {}
    for child in meta:
        tag = child.tag
        if tag not in _META_SET or tag in found or len(child) or child.attrib:
            _bad_meta_child(child, found)
        found[tag] = child.text or ""
        if child.tail is not None:
            check_tail(child, "/MSG/META")
    for name in META_FIELDS:
        if not found.get(name):
            reason = "empty" if name in found else "missing"
            raise ProtocolError(f"/MSG/META/{name}", f"{reason} {name}")
    _check_sizes(found)
    return Envelope(
        found["SNDR"],
        found["SEQN"],
        found["DTTM"],
        found["TYPE"],
        found["STYP"],
        dttm=_dttm(found["DTTM"], zone),
    )
