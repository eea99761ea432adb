"""Small builders of SIS XML text for focused codec tests."""

from __future__ import annotations

import pytest

from flightstate_core.domain.codec import decode
from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.errors import ProtocolError
from flightstate_core.domain.messages import FlightRecord, FlopMessage, Message, ScheduleMessage

DECL = '<?xml version="1.0" encoding="UTF-8"?>\n'


def meta(type_: str, styp: str, seqn: str = "1243", dttm: str = "20211010090311") -> str:
    """A META block."""
    return (
        f"<META><SNDR>AODB</SNDR><SEQN>{seqn}</SEQN><DTTM>{dttm}</DTTM>"
        f"<TYPE>{type_}</TYPE><STYP>{styp}</STYP></META>"
    )


def msg(type_: str, styp: str, payload: str) -> str:
    """A whole message: declaration, MSG, META, payload."""
    return f"{DECL}<MSG>{meta(type_, styp)}{payload}</MSG>"


def flop(styp: str, body: str, flid: str = "15") -> str:
    """A FLOP message with one block ``<FLID>flid</FLID>body``."""
    return msg("FLOP", styp, f"<FLOP><FLID>{flid}</FLID>{body}</FLOP>")


def fltr(body: str, flid: str = "15") -> str:
    """One schedule FLTR."""
    return f"<FLTR><FLID>{flid}</FLID>{body}</FLTR>"


def schd(styp: str, *fltrs: str, recs: int | str | None = "count") -> str:
    """A SCHD message; RECS defaults to the FLTR count (None: no RECS)."""
    count = len(fltrs) if recs == "count" else recs
    recs_xml = "" if count is None else f"<RECS>{count}</RECS>"
    return msg("SCHD", styp, f"<SCHD>{recs_xml}{''.join(fltrs)}</SCHD>")


def block(styp: str, body: str, config: CoreConfig | None = None) -> FlightRecord:
    """The single decoded FLOP block."""
    message = decode(flop(styp, body), config)
    assert isinstance(message, FlopMessage)
    assert len(message.blocks) == 1
    return message.blocks[0]


def record(body: str) -> FlightRecord:
    """The single decoded FLTR of a SCHD DNLD."""
    message = decode(schd("DNLD", fltr(body)))
    assert isinstance(message, ScheduleMessage)
    return message.records[0]


def error(raw: str | bytes, config: CoreConfig | None = None) -> ProtocolError:
    """The ProtocolError that decoding ``raw`` raises."""
    with pytest.raises(ProtocolError) as caught:
        decode(raw, config)
    return caught.value


def decoded(raw: str | bytes) -> Message:
    """Decode with the default configuration."""
    return decode(raw)
