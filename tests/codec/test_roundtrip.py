"""Property tests: ``decode(encode(m)) == m`` for every kind, and a mutation fuzzer."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flightstate_core.domain.catalog import FLOP_SUBTYPES, SCHEDULE_STYPES
from flightstate_core.domain.codec import decode, encode
from flightstate_core.domain.codec._tables import ELEMENT_KINDS
from flightstate_core.domain.errors import ProtocolError
from flightstate_core.domain.messages import FlopMessage, Message, ScheduleMessage
from flightstate_core.domain.values import Set
from flightstate_testing import strategies as fs
from tests.codec.test_corpus import CORPUS_DIR

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PER_KIND = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _typed(message: Message) -> list[tuple[str, object]]:
    records = (
        message.blocks
        if isinstance(message, FlopMessage)
        else message.records
        if isinstance(message, ScheduleMessage)
        else ()
    )
    return [
        (code, op.typed)
        for record in records
        for code, op in sorted(record.scalars.items())
        if isinstance(op, Set)
    ]


def _round_trip(message: Message) -> None:
    again = decode(encode(message))
    assert again == message
    assert _typed(again) == _typed(message)
    assert again.envelope.dttm == message.envelope.dttm
    assert encode(again) == encode(message)


@SETTINGS
@given(fs.messages())
def test_every_kind_round_trips(message: Message) -> None:
    _round_trip(message)


@pytest.mark.parametrize("styp", sorted(FLOP_SUBTYPES))
@PER_KIND
@given(data=st.data())
def test_every_flop_subtype_round_trips(styp: str, data: st.DataObject) -> None:
    message = data.draw(fs.flop_messages(styp))
    assert all(block.delete == (styp == "FDEL") for block in message.blocks)
    _round_trip(message)


@pytest.mark.parametrize("styp", sorted(SCHEDULE_STYPES))
@PER_KIND
@given(data=st.data())
def test_every_schedule_subtype_round_trips(styp: str, data: st.DataObject) -> None:
    _round_trip(data.draw(fs.schedule_messages(styp)))


@PER_KIND
@given(st.one_of(fs.schedule_season_messages(), fs.reference_data_messages()))
def test_raw_payload_kinds_round_trip(message: Message) -> None:
    _round_trip(message)


@PER_KIND
@given(st.one_of(fs.schedule_requests(), fs.reference_requests()))
def test_requests_round_trip(message: Message) -> None:
    _round_trip(message)


# --------------------------------------------------------------------------- fuzzing

CORPUS = sorted(CORPUS_DIR.glob("*.xml")) if CORPUS_DIR.exists() else []
TAGS = [*sorted(ELEMENT_KINDS), "FLOP", "FLTR", "SCHD", "RECS", "META", "MSG", "POID", "POTM"]
SNIPPETS = [b"<", b">", b"</", b"/>", b'=""', b"&amp;", b"&x;", b"<!DOCTYPE a>", b"\x00", b"\xff"]
SNIPPETS += [
    b' xmlns:a="rel"',
    b"<GTDT/>",
    b'<GTDT GTNO="0"/>',
    b"<DELY/>",
    b"<FDEL/>",
    b"<FLID></FLID>",
    b"\xe4\xb8",
]


@st.composite
def _mutated(draw: st.DrawFn) -> bytes:
    if CORPUS and draw(st.booleans()):
        source = draw(st.sampled_from(CORPUS)).read_bytes()
    else:
        source = encode(draw(fs.messages()))
    data = bytearray(source)
    for _ in range(draw(st.integers(1, 4))):
        position = draw(st.integers(0, len(data)))
        operation = draw(st.sampled_from(["byte", "insert", "delete", "copy", "retag"]))
        if operation == "byte" and position < len(data):
            data[position] = draw(st.integers(0, 255))
        elif operation == "insert":
            data[position:position] = draw(st.sampled_from(SNIPPETS) | st.binary(max_size=6))
        elif operation == "delete":
            del data[position : position + draw(st.integers(1, 24))]
        elif operation == "copy":
            start = draw(st.integers(0, len(data)))
            data[position:position] = data[start : start + draw(st.integers(1, 80))]
        else:
            data = bytearray(_retag(bytes(data), draw(st.sampled_from(TAGS)), position))
    return bytes(data)


def _retag(data: bytes, tag: str, position: int) -> bytes:
    """Rename the element whose start tag follows ``position`` (and its end tag)."""
    match = re.compile(rb"<([A-Z]{3,4})[ >/]").search(data, position)
    if match is None:
        return data
    old = match.group(1)
    data = data[: match.start(1)] + tag.encode() + data[match.end(1) :]
    return data.replace(b"</" + old + b">", b"</" + tag.encode() + b">", 1)


def _decode_or_protocol_error(raw: bytes | str) -> None:
    try:
        message = decode(raw)
    except ProtocolError as exc:
        error: ProtocolError | None = exc
    else:
        error = None
        assert decode(encode(message)) == message  # whatever decodes, re-encodes faithfully
    assert error is None or error.xpath.startswith("/")


@SETTINGS
@given(_mutated())
def test_mutated_messages_decode_or_raise_protocol_error(raw: bytes) -> None:
    _decode_or_protocol_error(raw)
    _decode_or_protocol_error(raw.decode("utf-8", errors="replace"))
