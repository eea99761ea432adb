"""Decoding shortcuts for focused codec tests; the texts come from ``flightstate_testing.sis``."""

from __future__ import annotations

import pytest

from flightstate_core.domain.codec import decode
from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.errors import ProtocolError
from flightstate_core.domain.messages import FlightRecord, FlopMessage, Message, ScheduleMessage
from flightstate_testing.sis import flop, fltr, schd


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
