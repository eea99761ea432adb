"""Presence encoding and type mapping (pure): "" vs absent vs Clear, byte limits, round trips.

``oracle_keeps`` applies the one Oracle rule that matters here (a zero-length text is stored
as NULL) to the bind rows, so a round trip through it shows what a real 11g gives back.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flightstate_core.domain.catalog import COLLECTIONS, SCALARS
from flightstate_core.domain.decision import EventKind, OutboxEvent, Outcome
from flightstate_core.domain.errors import PermanentError
from flightstate_core.domain.items import DocItem, Item
from flightstate_core.domain.layout import DETAIL_TABLES
from flightstate_core.domain.records import BackfillIntent, ProcessedMessage, ProcRecord
from flightstate_core.domain.state import FlightState, FlightStatus
from flightstate_oracle._documents import decode_document, encode_document
from flightstate_oracle._presence import (
    decode_text,
    encode_texts,
    from_utc_naive,
    parse_empty_codes,
    to_utc_naive,
)
from flightstate_oracle._records import (
    event_rows,
    intent_from_row,
    outbox_record,
    proc_from_row,
    proc_row,
    truncate_bytes,
)
from flightstate_oracle._rows import detail_rows, flight_from_rows, flight_row, validate_state
from flightstate_oracle._schema import TABLES, ValueTooLong, check_fits, utf8_len

ZONE = ZoneInfo("Asia/Shanghai")
NOW = datetime(2026, 11, 30, 1, 0, tzinfo=UTC)
TEXT_4000 = "航" * 1333 + "X"  # 3 * 1333 + 1 = 4000 bytes
TEXT_4001 = "航" * 1333 + "XY"


def oracle_keeps(row: Mapping[str, object]) -> dict[str, object]:
    """What Oracle stores for a bind row: "" becomes NULL, everything else as bound."""
    return {k: (None if v == "" else v) for k, v in row.items()}


def round_trip(state: FlightState) -> FlightState:
    main = oracle_keeps(flight_row(state, ZONE, 70))
    details = {name: [oracle_keeps(r) for r in detail_rows(d, state, ZONE, 70)]
               for name, d in DETAIL_TABLES.items()}  # fmt: skip
    return flight_from_rows(main, details)


def test_presence_rules() -> None:
    columns, empty = encode_texts({"GATE": "", "PGOT": None, "GTYP": " ", "SOURCE_SEQ": ""})
    assert columns == {"GATE": None, "PGOT": None, "GTYP": " ", "SOURCE_SEQ": None}
    assert empty == "GATE SOURCE_SEQ"
    empties = parse_empty_codes(empty)
    assert decode_text("GATE", None, empties) == ""  # present, empty
    assert decode_text("PGOT", None, empties) is None  # absent
    assert decode_text("GTYP", " ", empties) == " "  # whitespace kept by Oracle
    assert encode_texts({"A": "x"}) == ({"A": "x"}, None)  # nothing empty: NULL column
    with pytest.raises(ValueError, match="EMPTY_CODES"):
        decode_text("GATE", "G28", empties)  # listed but not NULL: corrupt row


def test_utc_binding() -> None:
    local = datetime(2021, 1, 23, 5, 35, tzinfo=ZONE)
    assert to_utc_naive(local) == datetime(2021, 1, 22, 21, 35)
    assert from_utc_naive(to_utc_naive(local)) == local
    assert to_utc_naive(datetime(2021, 1, 1)) == datetime(2021, 1, 1)  # naive: taken as UTC


@pytest.mark.parametrize(
    ("table", "column", "value", "fits"),
    [
        ("FLIGHT_SCHD", "REMC", TEXT_4000, True),
        ("FLIGHT_SCHD", "REMC", TEXT_4001, False),
        ("FLIGHT_DELAY", "DLTX", TEXT_4000, True),
        ("FLIGHT_DELAY", "DLTX", "航" * 1334, False),  # 4002 bytes
        ("FLIGHT_GATE", "GATE", "G" * 400, True),
        ("FLIGHT_GATE", "GATE", "航" * 134, False),  # 402 bytes, only 134 characters
        ("FLIGHT_SCHD", "SRVT", TEXT_4001 * 10, True),  # CLOB: no limit
    ],
)
def test_byte_limits(table: str, column: str, value: str, fits: bool) -> None:
    spec = TABLES[table].column(column)
    if fits:
        check_fits(table, spec, value)
        return
    with pytest.raises(ValueTooLong, match=rf"{table}\.{column}: {utf8_len(value)} bytes"):
        check_fits(table, spec, value)


def test_over_long_value_is_refused_before_sql() -> None:
    state = FlightState("15", FlightStatus.ACTIVE, 1, None, scalars={"REMC": TEXT_4001})
    with pytest.raises(PermanentError, match=r"FLIGHT_SCHD\.REMC: 4001 bytes"):
        flight_row(state, ZONE, 70)
    delay = (Item.of(1, None, {"DLTX": TEXT_4001}),)
    state = FlightState("15", FlightStatus.ACTIVE, 1, None, collections={"DELY": delay})
    with pytest.raises(PermanentError, match=r"FLIGHT_DELAY\.DLTX"):
        detail_rows(DETAIL_TABLES["FLIGHT_DELAY"], state, ZONE, 70)


def test_empty_and_absent_round_trip() -> None:
    items = (Item.of(1, "", {"GATE": ""}), Item.of(2, None, {}), Item.of(3, "0", {"GTYP": " "}))
    state = FlightState(
        "15", FlightStatus.ACTIVE, 3, date(2021, 1, 23),
        scalars={"FFID": "", "REMC": " ", "SODT": "23JAN210535", "EXSR": TEXT_4000},
        collections={"GTDT": items, "ROUT": (Item.of(1, "1", {"APCD": "PEK", "SADC": ""}),),
                     "ERUT": (Item.of(1, "1", {"APCD": ""}),),
                     "DELY": (Item.of(1, None, {"CODE": "", "DURA": "0130", "DLTX": ""}),)},
        documents={"SRVT": (DocItem((("SRTC", ""),)),)},
        last_message_id=9, created_at=NOW, updated_at=NOW,
    )  # fmt: skip
    back = round_trip(state)
    assert back == state
    assert back.collections["GTDT"][0].seq == ""
    assert back.collections["GTDT"][1].seq is None
    assert back.scalars["FFID"] == ""
    assert "ACTT" not in back.scalars


def test_typed_twins() -> None:
    state = FlightState("15", FlightStatus.ACTIVE, 1, None,
                        scalars={"SODT": "23JAN210535", "ESTT": " "})  # fmt: skip
    row = flight_row(state, ZONE, 70)
    assert row["SODT_TS"] == datetime(2021, 1, 22, 21, 35)  # UTC, bound into FROM_TZ
    assert row["ESTT_TS"] is None
    assert row["ESTT"] == " "
    delay = FlightState(
        "15",
        FlightStatus.ACTIVE,
        1,
        None,
        collections={"DELY": (Item.of(1, None, {"DURA": "0130"}),)},
    )
    assert detail_rows(DETAIL_TABLES["FLIGHT_DELAY"], delay, ZONE, 70)[0]["DURA_MIN"] == 90


def test_validate_refuses_what_cannot_come_back() -> None:
    bad = (Item.of(1, None, {"GTYP": "x", "GATE": "G1"}),)  # out of catalog order
    with pytest.raises(PermanentError, match="catalog order"):
        validate_state(FlightState("15", FlightStatus.ACTIVE, 1, None, collections={"GTDT": bad}))
    with pytest.raises(PermanentError, match="empty FLID"):
        flight_row(FlightState("", FlightStatus.ACTIVE, 1, None), ZONE, 70)


_TEXTS = st.sampled_from(["", " ", "x", "航班", "0", "G28"])


@st.composite
def items(draw: st.DrawFn, code: str) -> tuple[Item, ...]:
    spec = COLLECTIONS[code]
    count = draw(st.integers(1, 4))
    out = []
    for n in range(1, count + 1):
        present = [c.code for c in spec.children if draw(st.booleans())]
        values = {c: draw(_TEXTS) for c in present}
        seq = draw(st.sampled_from([None, "", "1", "01"]))
        out.append(Item.of(n, seq, values))
    return tuple(out)


@st.composite
def states(draw: st.DrawFn) -> FlightState:
    scalars = {c: draw(_TEXTS) for c in SCALARS if draw(st.integers(0, 5)) == 0}
    codes = [c for c in COLLECTIONS if draw(st.booleans())]
    collections = {c: draw(items(c)) for c in codes}
    docs = {}
    if draw(st.booleans()):
        docs["VIPF"] = (
            DocItem((("VPCD", draw(_TEXTS)), ("VIPT", (DocItem((("VSCD", draw(_TEXTS)),)),)))),
        )
    return FlightState("F1", FlightStatus.ACTIVE, draw(st.integers(1, 10**12)), None,
                       scalars, collections, docs)  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(states())
def test_any_state_round_trips(state: FlightState) -> None:
    assert round_trip(state) == state


def test_documents_are_lossless() -> None:
    doc = (DocItem((("SRTC", ""), ("SRQT", "航"))), DocItem((("VIPT", (DocItem(()),)),)))
    text = encode_document(doc)
    assert "航" in text
    assert decode_document(text) == doc


def _processed(reason: str | None, key: str | None) -> ProcessedMessage:
    proc = ProcRecord(7, key, "d", "FLOP", "", Outcome.SUCCEEDED, reason, 1, NOW, NOW, dttm=NOW)
    intent = BackfillIntent(7, Outcome.SUCCEEDED, NOW, "AODB", "", "GTDT", 3,
                            datetime(2026, 11, 30, 9, 0))  # fmt: skip
    events = (OutboxEvent("schd", "15", None, "15", 1, EventKind.TOMBSTONE),
              OutboxEvent("msg", "", b"", "15", 1, EventKind.NOTIFY),
              OutboxEvent("msg", "15", "航".encode(), "15", 1, EventKind.NOTIFY))  # fmt: skip
    return ProcessedMessage(proc, {}, events, intent)


@pytest.mark.parametrize(("reason", "key"), [(None, "K"), ("", "K"), (TEXT_4001, None)])
def test_proc_and_events_round_trip(reason: str | None, key: str | None) -> None:
    message = _processed(reason, key)
    stored = oracle_keeps(proc_row(message))  # REASON is a CLOB: no 4000-byte limit
    assert proc_from_row(stored) == message.proc
    assert intent_from_row(stored) == message.backfill
    read = []
    for n, row in enumerate(event_rows(message), 1):
        read.append(outbox_record({**oracle_keeps(row), "EVENT_ID": n,
                                   "CREATED_AT": datetime(2026, 1, 1)}))  # fmt: skip
    assert [(r.key, r.payload) for r in read] == [(e.key, e.payload) for e in message.events]


def test_backfill_error_truncated_on_a_character_boundary() -> None:
    cut = truncate_bytes("航" * 2000)
    assert utf8_len(cut) == 3999
    assert cut == "航" * 1333
