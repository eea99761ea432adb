"""Scalars, exception objects (FDIV/FRET/FLAB) and PORT (docs/design.md "Value semantics")."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from flightstate_core.domain.catalog import FLOP_SUBTYPES, SCALARS, ValueKind
from flightstate_core.domain.codec._tables import SCALAR_ELEMENTS
from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.values import CLEAR, Set
from flightstate_testing.sis import flop
from tests.codec.helpers import block, error, record

SHANGHAI = ZoneInfo("Asia/Shanghai")


def _valid(code: str) -> str:
    spec = SCALARS[code]
    if spec.allowed is not None:
        return sorted(spec.allowed)[0]
    return "23JAN210535" if spec.kind is ValueKind.TIME else "X 1"


@pytest.mark.parametrize("code", sorted(SCALAR_ELEMENTS))
def test_every_scalar_set_clear_absent_in_a_fltr(code: str) -> None:
    raw = _valid(code)
    got = record(f"<{code}>{raw}</{code}>").scalars[code]
    assert got == Set(raw)
    assert isinstance(got, Set)
    if SCALARS[code].kind is ValueKind.TIME:
        assert got.typed == datetime(2021, 1, 23, 5, 35, tzinfo=SHANGHAI)
    else:
        assert got.typed is None
    assert record(f"<{code}></{code}>").scalars == {code: CLEAR}
    assert record(f"<{code}/>").scalars == {code: CLEAR}
    assert code not in record("").scalars


@pytest.mark.parametrize(
    "styp",
    sorted(s for s, members in FLOP_SUBTYPES.items() if len(members) == 1 and s in SCALARS),
)
def test_every_single_scalar_flop_subtype(styp: str) -> None:
    raw = _valid(styp)
    assert block(styp, f"<{styp}>{raw}</{styp}>").scalars == {styp: Set(raw)}
    assert block(styp, f"<{styp}></{styp}>").scalars == {styp: CLEAR}


def test_raw_text_is_kept_exactly() -> None:
    scalars = record("<REMC> </REMC><FLNO>007</FLNO><FFID>ca-x</FFID>").scalars
    assert scalars == {"REMC": Set(" "), "FLNO": Set("007"), "FFID": Set("ca-x")}


def test_padt_self_closing_clears() -> None:
    assert block("PADT", "<PADT/>").scalars == {"PADT": CLEAR}


def test_time_uses_the_configured_zone_and_pivot() -> None:
    config = CoreConfig(airport_tz="Europe/Paris", century_pivot=10)
    got = block("ESTT", "<ESTT>01MAR150900</ESTT>", config).scalars["ESTT"]
    assert isinstance(got, Set)
    assert got.typed == datetime(1915, 3, 1, 9, 0, tzinfo=ZoneInfo("Europe/Paris"))


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("23jan210535", "month"),
        ("23Jan210535", "month"),
        ("23JAN212535", "hour"),
        ("32JAN210535", "no such date"),
        ("23JAN21053", "DDMONYYHHMM"),
        ("2021-01-23", "DDMONYYHHMM"),
    ],
)
def test_bad_time_names_the_element(raw: str, reason: str) -> None:
    caught = error(flop("ESTT", f"<ESTT>{raw}</ESTT>"))
    assert caught.xpath == "/MSG/FLOP[1]/ESTT"
    assert reason in caught.reason


def test_bad_enumerated_value() -> None:
    caught = error(flop("FLIN", "<FLIN>X</FLIN>"))
    assert caught.xpath == "/MSG/FLOP[1]/FLIN"
    assert "D, I, M" in caught.reason


def test_repeated_scalar_is_an_error() -> None:
    caught = error(flop("ESTT", "<ESTT>23JAN210535</ESTT><ESTT>23JAN210536</ESTT>"))
    assert caught.xpath == "/MSG/FLOP[1]/ESTT[2]"


def test_scalar_with_attribute_or_child_is_an_error() -> None:
    assert error(flop("STND", '<STND X="1">S1</STND>')).xpath == "/MSG/FLOP[1]/STND/@X"
    assert error(flop("STND", "<STND><A>1</A></STND>")).xpath == "/MSG/FLOP[1]/STND/A"


# ----------------------------------------------------------------- exception objects


def test_fdiv_full() -> None:
    got = block("FDIV", '<FDIV DDES="HKG" DDIR="TO">INCLEMENT WEATHER</FDIV>').scalars
    assert got == {
        "FDIV_TEXT": Set("INCLEMENT WEATHER"),
        "FDIV_DDES": Set("HKG"),
        "FDIV_DDIR": Set("TO"),
    }


def test_fdiv_absent_attribute_is_unchanged() -> None:
    got = block("FDIV", '<FDIV DDIR = "FROM">FOG</FDIV>').scalars
    assert got == {"FDIV_TEXT": Set("FOG"), "FDIV_DDIR": Set("FROM")}


def test_fret_attribute_without_text_sets_attribute_and_clears_text() -> None:
    got = block("FRET", '<FRET REID="G"></FRET>').scalars
    assert got == {"FRET_TEXT": CLEAR, "FRET_REID": Set("G")}


@pytest.mark.parametrize("element", ["<FLAB></FLAB>", '<FLAB ARES=""></FLAB>', "<FLAB/>"])
def test_empty_exception_clears_every_part(element: str) -> None:
    assert block("FLAB", element).scalars == {"FLAB_TEXT": CLEAR, "FLAB_ARES": CLEAR}


def test_fdiv_empty_ddes_clears_the_whole_object() -> None:
    got = block("FDIV", '<FDIV DDES="" DDIR="TO">INCLEMENT WEATHER</FDIV>').scalars
    assert got == {"FDIV_TEXT": CLEAR, "FDIV_DDES": CLEAR, "FDIV_DDIR": CLEAR}


@pytest.mark.parametrize(
    ("element", "xpath"),
    [
        ('<FDIV DDES="HKG" DDIR="">X</FDIV>', "/MSG/FLOP[1]/FDIV/@DDIR"),
        ('<FDIV DDES="HKG" DDIR="TOO">X</FDIV>', "/MSG/FLOP[1]/FDIV/@DDIR"),
        ('<FDIV DDES="HKG" DDIR="to">X</FDIV>', "/MSG/FLOP[1]/FDIV/@DDIR"),
        ('<FDIV DDES="HKG" WHY="x">X</FDIV>', "/MSG/FLOP[1]/FDIV/@WHY"),
        ("<FDIV>X<B/></FDIV>", "/MSG/FLOP[1]/FDIV/B"),
    ],
)
def test_fdiv_errors(element: str, xpath: str) -> None:
    assert error(flop("FDIV", element)).xpath == xpath


def test_fret_empty_enumerated_attribute_while_set_is_an_error() -> None:
    assert error(flop("FRET", '<FRET REID="">DOOR</FRET>')).xpath == "/MSG/FLOP[1]/FRET/@REID"
    assert error(flop("FRET", '<FRET REID="X">DOOR</FRET>')).xpath == "/MSG/FLOP[1]/FRET/@REID"
    assert error(flop("FLAB", '<FLAB ARES="A">X</FLAB>')).xpath == "/MSG/FLOP[1]/FLAB/@ARES"


def test_repeated_exception_element() -> None:
    caught = error(flop("FRET", '<FRET REID="G">A</FRET><FRET REID="A">B</FRET>'))
    assert caught.xpath == "/MSG/FLOP[1]/FRET[2]"


# ----------------------------------------------------------------------------- PORT


def test_port_open_and_close() -> None:
    got = block("PORT", "<PORT><POTM>10AUG181855</POTM><POID>O</POID></PORT>").scalars
    assert got == {"PORT_OPEN": Set("10AUG181855")}
    port = got["PORT_OPEN"]
    assert isinstance(port, Set)
    assert port.typed == datetime(2018, 8, 10, 18, 55, tzinfo=SHANGHAI)
    both = (
        "<PORT><POID>O</POID><POTM></POTM></PORT>"
        "<PORT><POID>C</POID><POTM>10AUG181900</POTM></PORT>"
    )
    assert block("PORT", both).scalars == {"PORT_OPEN": CLEAR, "PORT_CLOSE": Set("10AUG181900")}


@pytest.mark.parametrize(
    ("element", "xpath", "reason"),
    [
        ("<PORT><POTM>10AUG181855</POTM></PORT>", "/MSG/FLOP[1]/PORT[1]/POID", "missing"),
        (
            "<PORT><POID>X</POID><POTM>10AUG181855</POTM></PORT>",
            "/MSG/FLOP[1]/PORT[1]/POID",
            "unknown",
        ),
        (
            "<PORT><POID></POID><POTM>10AUG181855</POTM></PORT>",
            "/MSG/FLOP[1]/PORT[1]/POID",
            "unknown",
        ),
        ("<PORT><POID>O</POID></PORT>", "/MSG/FLOP[1]/PORT[1]/POTM", "missing"),
        (
            "<PORT><POID>O</POID><POTM>10AUG182555</POTM></PORT>",
            "/MSG/FLOP[1]/PORT[1]/POTM",
            "hour",
        ),
        ("<PORT><POID>O</POID><POTM/><X/></PORT>", "/MSG/FLOP[1]/PORT[1]/X", "unknown"),
        ('<PORT A="1"><POID>O</POID><POTM/></PORT>', "/MSG/FLOP[1]/PORT[1]/@A", "unknown"),
        (
            "<PORT><POID>O</POID><POTM/></PORT><PORT><POID>O</POID><POTM/></PORT>",
            "/MSG/FLOP[1]/PORT[2]",
            "repeated",
        ),
    ],
)
def test_port_errors(element: str, xpath: str, reason: str) -> None:
    caught = error(flop("PORT", element))
    assert caught.xpath == xpath
    assert reason in caught.reason
