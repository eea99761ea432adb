"""Message structure: envelope, FLOP blocks and subtypes, SCHD packages, SCHS, reference
data, requests."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from flightstate_core.domain.codec import decode, decode_envelope, encode
from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.messages import (
    Envelope,
    FlopMessage,
    ReferenceDataMessage,
    ReferenceRequest,
    ScheduleMessage,
    ScheduleRequest,
    ScheduleSeasonMessage,
)
from flightstate_core.domain.values import CLEAR, Set
from flightstate_testing.sis import DECLARATION, flop, fltr, meta, schd
from flightstate_testing.sis import message as msg
from tests.codec.helpers import block, error

# ------------------------------------------------------------------------- envelope


def test_envelope_fields_identity_and_aware_dttm() -> None:
    message = decode(flop("ESTT", "<ESTT/>"))
    assert message.envelope == Envelope("AODB", "1243", "20211010090311", "FLOP", "ESTT")
    assert message.envelope.identity_key == "AODB|FLOP|ESTT|1243"
    assert message.envelope.dttm == datetime(
        2021, 10, 10, 9, 3, 11, tzinfo=ZoneInfo("Asia/Shanghai")
    )
    paris = decode(flop("ESTT", "<ESTT/>"), CoreConfig(airport_tz="Europe/Paris")).envelope
    assert paris.dttm is not None
    assert paris.dttm.tzinfo == ZoneInfo("Europe/Paris")


@pytest.mark.parametrize(
    ("raw", "xpath"),
    [
        (msg("NOPE", "X", ""), "/MSG/META/TYPE"),
        (msg("FLOP", "NOPE", "<FLOP><FLID>1</FLID></FLOP>"), "/MSG/META/STYP"),
        (msg("SCHD", "NOPE", "<SCHD/>"), "/MSG/META/STYP"),
        (msg("FLOP", "ESTT", "", seqn="12a"), "/MSG/META/SEQN"),
        (msg("FLOP", "ESTT", "", seqn=""), "/MSG/META/SEQN"),
        (
            msg("FLOP", "ESTT", "", dttm="20211310090311"),
            "/MSG/META/DTTM",
        ),
        (msg("FLOP", "ESTT", "", dttm="2021101009031"), "/MSG/META/DTTM"),
        (f"{DECLARATION}<MSG><META><SNDR>AODB</SNDR></META></MSG>", "/MSG/META/SEQN"),
        (f"{DECLARATION}<MSG><META><SNDR>A</SNDR><X/></META></MSG>", "/MSG/META/X"),
        (f"{DECLARATION}<MSG><META><SNDR>A</SNDR><SNDR>B</SNDR></META></MSG>", "/MSG/META/SNDR[2]"),
        (f"{DECLARATION}<MSG><FLOP/></MSG>", "/MSG/META"),
        (f"{DECLARATION}<MESSAGE/>", "/MESSAGE"),
        (f"{DECLARATION}<MSG>{meta('FLOP', 'ESTT')}{meta('FLOP', 'ESTT')}</MSG>", "/MSG/META[2]"),
    ],
)
def test_envelope_errors(raw: str, xpath: str) -> None:
    assert error(raw).xpath == xpath


def test_decode_envelope_of_a_broken_payload() -> None:
    raw = flop("TOBT", "")
    assert error(raw).xpath == "/MSG/FLOP[1]/TOBT"
    assert decode_envelope(raw).identity_key == "AODB|FLOP|TOBT|1243"


# ---------------------------------------------------------------------------- FLOP


def test_flop_ffid_is_a_scalar_and_fdel_deletes() -> None:
    got = block("FDEL", "<FFID>CA-1</FFID><FDEL></FDEL>")
    assert got.delete
    assert got.scalars == {"FFID": Set("CA-1")}
    assert block("ACFT", "<FFID/><ACFT>733</ACFT>").scalars == {
        "FFID": CLEAR,
        "ACFT": Set("733"),
    }


def test_several_flop_blocks() -> None:
    raw = msg(
        "FLOP",
        "STND",
        "<FLOP><FLID>15</FLID><STND>1</STND></FLOP><FLOP><FLID>16</FLID><STND/></FLOP>",
    )
    message = decode(raw)
    assert isinstance(message, FlopMessage)
    assert [(b.flid, b.scalars, b.xpath) for b in message.blocks] == [
        ("15", {"STND": Set("1")}, "/MSG/FLOP[1]"),
        ("16", {"STND": CLEAR}, "/MSG/FLOP[2]"),
    ]
    bad = raw.replace("<STND/>", "<ESTT/>")
    assert error(bad).xpath == "/MSG/FLOP[2]/ESTT"


@pytest.mark.parametrize(
    ("raw", "xpath", "reason"),
    [
        (flop("ESTT", "<ESTT/><STND>1</STND>"), "/MSG/FLOP[1]/STND", "not allowed"),
        (flop("ESTT", "<ESTT/><NOPE>1</NOPE>"), "/MSG/FLOP[1]/NOPE", "unknown"),
        (flop("TOBT", "<FFID>X</FFID>"), "/MSG/FLOP[1]/TOBT", "none of"),
        (flop("EXSS", "<FFID>X</FFID>"), "/MSG/FLOP[1]/(EXSC|EXSR)", "none of"),
        (msg("FLOP", "ESTT", "<FLOP><ESTT/></FLOP>"), "/MSG/FLOP[1]/FLID", "missing"),
        (flop("ESTT", "<ESTT/>", flid=""), "/MSG/FLOP[1]/FLID", "empty"),
        (flop("ESTT", "<ESTT/>", flid="  "), "/MSG/FLOP[1]/FLID", "empty"),
        (flop("ESTT", "<ESTT/><FLID>16</FLID>"), "/MSG/FLOP[1]/FLID[2]", "repeated"),
        (flop("FDEL", "<FDEL>now</FDEL>"), "/MSG/FLOP[1]/FDEL", "unexpected text"),
        (flop("FDEL", "<FDEL/><FDEL/>"), "/MSG/FLOP[1]/FDEL[2]", "repeated"),
        (flop("ESTT", "<ESTT/>stray"), "/MSG/FLOP[1]", "unexpected text"),
        (msg("FLOP", "ESTT", ""), "/MSG/FLOP", "missing"),
        (msg("FLOP", "ESTT", "<SCHD/>"), "/MSG/SCHD", "unexpected"),
        (flop("ESTT", '<ESTT xmlns="urn:x"/>'), "/MSG/FLOP[1]/{urn:x}ESTT", "unknown"),
    ],
)
def test_flop_structure_errors(raw: str, xpath: str, reason: str) -> None:
    caught = error(raw)
    assert caught.xpath == xpath
    assert reason in caught.reason


# ---------------------------------------------------------------------------- SCHD


def test_schd_records_recs_and_delete() -> None:
    raw = schd("DNLD", fltr("<ALCD>YG</ALCD>"), fltr("<SODT>23JAN210325</SODT>", flid="16"))
    message = decode(raw)
    assert isinstance(message, ScheduleMessage)
    assert message.recs == 2
    assert [r.flid for r in message.records] == ["15", "16"]
    assert [r.xpath for r in message.records] == ["/MSG/SCHD/FLTR[1]", "/MSG/SCHD/FLTR[2]"]
    assert not any(r.delete for r in message.records)
    deleted = decode(schd("DEL", fltr(""), fltr("", flid="16"), recs=None))
    assert isinstance(deleted, ScheduleMessage)
    assert deleted.recs is None
    assert [(r.flid, r.delete) for r in deleted.records] == [("15", True), ("16", True)]


@pytest.mark.parametrize(
    ("raw", "xpath", "reason"),
    [
        (schd("DNLD", fltr(""), recs=2), "/MSG/SCHD/RECS", "RECS says 2 but 1"),
        (schd("DNLD", fltr(""), recs="one"), "/MSG/SCHD/RECS", "not a count"),
        (schd("DNLD", fltr(""), recs=""), "/MSG/SCHD/RECS", "not a count"),
        (
            schd("UPD", fltr(""), fltr("<FOO>1</FOO>", flid="16")),
            "/MSG/SCHD/FLTR[2]/FOO",
            "unknown",
        ),
        (schd("DNLD", fltr('<ACFT Y="1">733</ACFT>')), "/MSG/SCHD/FLTR[1]/ACFT/@Y", "unexpected"),
        (schd("DEL", fltr("<FDEL/>")), "/MSG/SCHD/FLTR[1]/FDEL", "unknown"),
        (schd("DNLD", fltr("<PSHT><PUST>1</PUST></PSHT>")), "/MSG/SCHD/FLTR[1]/PSHT", "unknown"),
        (schd("ADD", "<FLTR><ALCD>YG</ALCD></FLTR>"), "/MSG/SCHD/FLTR[1]/FLID", "missing"),
        (msg("SCHD", "DNLD", "<SCHD><RECS>0</RECS><RECS>0</RECS></SCHD>"), "/MSG/SCHD/RECS[2]", ""),
        (msg("SCHD", "DNLD", "<SCHD><FLOP/></SCHD>"), "/MSG/SCHD/FLOP", "unexpected"),
        (msg("SCHD", "DNLD", "<SCHD/><SCHD/>"), "/MSG/SCHD", "one SCHD"),
    ],
)
def test_schd_errors(raw: str, xpath: str, reason: str) -> None:
    caught = error(raw)
    assert caught.xpath == xpath
    assert reason in caught.reason


# ------------------------------------------------------- SCHS, reference data, requests


def test_schs_and_reference_data_keep_their_payload() -> None:
    season = decode(msg("SCHS", "DNLD", "<SCHS><SNAM>Winter</SNAM><RECS>9</RECS></SCHS>"))
    assert isinstance(season, ScheduleSeasonMessage)
    assert season.payload_xml == "<SCHS><SNAM>Winter</SNAM><RECS>9</RECS></SCHS>"
    raw = msg("AIRL", "ADD", '<RECS>2</RECS><AIRL><ITOP>UA</ITOP><TRML MVIN=""/></AIRL><AIRL/>')
    reference = decode(raw)
    assert isinstance(reference, ReferenceDataMessage)
    assert reference.recs == 2
    assert reference.payload_xml == '<AIRL><ITOP>UA</ITOP><TRML MVIN=""/></AIRL><AIRL/>'
    # reference data is not ours to validate: a RECS mismatch is noted, never raised
    mismatch = decode(raw.replace("<RECS>2", "<RECS>3"))
    assert isinstance(mismatch, ReferenceDataMessage)
    assert mismatch.recs == 3
    assert mismatch.recs_note == "/MSG/RECS: RECS says 3 but 2 AIRL records present"
    assert reference.recs_note == ""
    no_recs = decode(msg("CITY", "DEL", "<CITY><CODE>PEK</CODE></CITY>"))
    assert isinstance(no_recs, ReferenceDataMessage)
    assert no_recs.recs is None


@pytest.mark.parametrize("recs", [">1", " 2 ", "two", "<N>2</N>", ""])
def test_reference_data_with_a_recs_that_is_no_count_round_trips(recs: str) -> None:
    """No count to re-encode it from (found by the mutation property test): the element
    stays in the payload as received, so the re-encoded message decodes to the same note."""
    raw = msg("AIRL", "ADD", f"<RECS>{recs}</RECS><AIRL><ITOP>UA</ITOP></AIRL>")
    message = decode(raw.replace("<RECS>>1", "<RECS>&gt;1"))
    assert isinstance(message, ReferenceDataMessage)
    assert message.recs is None
    assert message.recs_note.startswith("/MSG/RECS")
    assert message.payload_xml.startswith("<RECS")
    assert decode(encode(message)) == message


def test_requests_round_trip() -> None:
    envelope = Envelope("FSTA", "7", "20211010090311", "RQFD", "NONE")
    request = ScheduleRequest(envelope, "23JAN210000", "24JAN210000")
    raw = encode(request)
    assert b"<RQFD><STDB>23JAN210000</STDB><STDE>24JAN210000</STDE></RQFD>" in raw
    assert decode(raw) == request
    reference = ReferenceRequest(Envelope("FSTA", "8", "20211010090311", "RQRD", "AIRL"), "AIRL")
    assert decode(encode(reference)) == reference


@pytest.mark.parametrize(
    ("raw", "xpath"),
    [
        (msg("RQFD", "NONE", "<RQFD><STDB>23JAN210000</STDB></RQFD>"), "/MSG/RQFD/STDE"),
        (msg("RQFD", "NONE", "<RQFD><STDB>x</STDB><STDE>x</STDE></RQFD>"), "/MSG/RQFD/STDB"),
        (msg("RQFD", "DNLD", "<RQFD/>"), "/MSG/META/STYP"),
        (msg("RQRD", "AIRL", "<RQRD><RTYP>CITY</RTYP></RQRD>"), "/MSG/RQRD/RTYP"),
        (msg("RQRD", "AIRL", "<RQRD><RTYP>AIRL</RTYP><X/></RQRD>"), "/MSG/RQRD/X"),
    ],
)
def test_request_errors(raw: str, xpath: str) -> None:
    assert error(raw).xpath == xpath
