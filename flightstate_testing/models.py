"""Message objects built directly, for tests and benchmarks that need no XML.

``record`` (a FLTR or FLOP block from typed values) and ``fltr`` (the same from raw SIS
texts, the way a message would carry them), ``flop`` and ``schedule`` (whole messages
with a payload digest as the codec computes one: over the payload, never META),
``envelope``, collection ``item``\\ s, and ``as_text`` for a store that reads inbox text.
Defaults: SNDR ``AODB``, SEQN ``1``, DTTM 2021-01-23 08:00 airport time.

Texts spelled out by hand (invalid ones included) are ``flightstate_testing.sis``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Final, Literal
from zoneinfo import ZoneInfo

from flightstate_core.domain.codec import encode
from flightstate_core.domain.items import Item
from flightstate_core.domain.messages import (
    CollectionValue,
    DocumentValue,
    Envelope,
    FlightRecord,
    FlopMessage,
    Message,
    ScheduleMessage,
    StandUpdate,
)
from flightstate_core.domain.values import Clear, Set

__all__ = [
    "DTTM", "as_text", "collection_items", "envelope", "flop", "fltr", "item", "payload_digest",
    "record", "schedule",
]  # fmt: skip

_ZONE: Final = ZoneInfo("Asia/Shanghai")
#: The send time (META DTTM) of every built message unless told otherwise.
DTTM: Final = datetime(2021, 1, 23, 8, 0, tzinfo=_ZONE)


def envelope(
    type_: str, styp: str, seqn: str = "1", *, sndr: str = "AODB", dttm: datetime = DTTM
) -> Envelope:
    """A META block; DTTM 2021-01-23 08:00 airport time unless given."""
    return Envelope(sndr, seqn, dttm.strftime("%Y%m%d%H%M%S"), type_, styp, dttm)


def item(seq: str | None, **values: str) -> Item:
    """A collection item (ordinal 0: the merge renumbers)."""
    return Item(0, seq, tuple(values.items()))


def collection_items(*items: Item) -> tuple[Item, ...]:
    """Items numbered 1..n as the codec produces them."""
    return tuple(Item(i, it.seq, it.values) for i, it in enumerate(items, 1))


def record(
    flid: str,
    scalars: Mapping[str, Set | Clear] | None = None,
    collections: Mapping[str, CollectionValue] | None = None,
    documents: Mapping[str, DocumentValue] | None = None,
    stand_updates: tuple[StandUpdate, ...] = (),
    *,
    delete: bool = False,
) -> FlightRecord:
    """A FLTR / FLOP block of typed values."""
    return FlightRecord(
        flid, dict(scalars or {}), dict(collections or {}), dict(documents or {}),
        stand_updates, delete,
    )  # fmt: skip


def fltr(
    flid: str,
    *,
    gates: Sequence[str] = (),
    collections: Mapping[str, CollectionValue] | None = None,
    **scalars: str | Set | Clear,
) -> FlightRecord:
    """A FLTR / FLOP block of raw scalar texts (``SODT="23JAN210535"``; a ``Set`` or
    ``CLEAR`` passes as it is), in the order given; *gates* become GTDT items 1..n."""
    lists = dict(collections or {})
    if gates:
        lists["GTDT"] = collection_items(*(item(str(n), GATE=g) for n, g in enumerate(gates, 1)))
    ops = {code: Set(raw) if isinstance(raw, str) else raw for code, raw in scalars.items()}
    return record(flid, ops, lists)


def payload_digest(*parts: object) -> str:
    """A digest standing in for the codec's (the same parts, the same digest)."""
    return hashlib.sha256(repr(parts).encode("utf-8")).hexdigest()


def flop(styp: str, *blocks: FlightRecord, seqn: str = "1", dttm: datetime = DTTM) -> FlopMessage:
    """A FLOP message (digest over its blocks, as the codec's: the payload, not META)."""
    return FlopMessage(
        envelope("FLOP", styp, seqn, dttm=dttm), blocks, payload_digest(styp, blocks)
    )


def schedule(
    styp: str,
    *records: FlightRecord,
    seqn: str = "1",
    recs: int | Literal["count"] | None = None,
    dttm: datetime = DTTM,
) -> ScheduleMessage:
    """A SCHD message (digest over its records); RECS absent unless *recs* gives it
    (``"count"``: the number of records)."""
    env = envelope("SCHD", styp, seqn, dttm=dttm)
    count = len(records) if isinstance(recs, str) else recs
    return ScheduleMessage(env, count, records, payload_digest(styp, records))


def as_text(message: Message) -> str:
    """The message as an inbox holds it: the codec's canonical XML."""
    return encode(message).decode("utf-8")
