"""wire.py and the JSON Schemas: exact bytes, key order, schema files up to date."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date, time

import pytest
from hypothesis import given, settings

from flightstate_core.domain.catalog import COLLECTIONS, DOCUMENTS, SCALARS
from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.items import DocItem
from flightstate_core.domain.opday import operation_day
from flightstate_core.domain.records import InboxRow
from flightstate_core.domain.values import Set
from flightstate_core.domain.wire import WIRE_KEYS, notification, to_json, wire, wire_object
from flightstate_core.engine.service import process_message
from flightstate_core.memory import MemoryStore
from flightstate_testing.histories import Step, histories
from flightstate_testing.models import collection_items, item

from .helpers import CONFIG, NOW, flight, validator
from .schema_gen import SCHEMA_DIR, build_msg_schema, build_schd_schema, render


def test_schema_files_are_generated_from_the_catalog() -> None:
    assert (SCHEMA_DIR / "schd.schema.json").read_text(encoding="utf-8") == render(
        build_schd_schema()
    )
    assert (SCHEMA_DIR / "msg.schema.json").read_text(encoding="utf-8") == render(
        build_msg_schema()
    )


def test_empty_flight_wire_bytes() -> None:
    state = flight("15", version=3, day=date(2021, 1, 23), SODT="23JAN210535", STND="长")
    body = wire(state, CONFIG)
    text = body.decode("utf-8")
    assert text.startswith(
        '{"flid":"15","state":"ACTIVE","stateVersion":3,'
        '"updatedAt":"2026-11-30T09:00:00+00:00","operationDay":"2021-01-23",'
        '"lastMessageId":0,"FFID":null,'
    )
    assert '"STND":"长"' in text
    assert " " not in text
    assert '"SODT":"23JAN210535","SODT_TS":"2021-01-23T05:35:00+08:00"' in text
    assert text.index('"NAAT_TS"') < text.index('"FDIV"') < text.index('"GTDT":[]')
    decoded = json.loads(body)
    assert tuple(decoded) == WIRE_KEYS
    validator("schd").validate(decoded)
    assert decoded["FDIV"] is None
    assert decoded["ROUT"] == []
    assert decoded["MAFL"] == []


def test_collection_items_have_every_child_key_and_twins() -> None:
    delays = collection_items(item(None, CODE="81", DURA="0130", DLTX=""))
    gates = collection_items(item("1", GATE="G28", PGOT="15DEC031805"))
    state = flight("1", collections={"DELY": delays, "GTDT": gates}, FRET_REID="G")
    decoded = json.loads(wire(state, CONFIG))
    assert decoded["DELY"] == [
        {
            "ordinal": 1,
            "seq": None,
            "CODE": "81",
            "STRT": None,
            "STRT_TS": None,
            "DURA": "0130",
            "DURA_MIN": 90,
            "DLTX": "",
        }
    ]
    gate = decoded["GTDT"][0]
    assert list(gate) == [
        "ordinal",
        "seq",
        "GATE",
        "PGOT",
        "PGOT_TS",
        "PGCT",
        "PGCT_TS",
        "GOTM",
        "GOTM_TS",
        "GCTM",
        "GCTM_TS",
        "GTYP",
    ]
    assert gate["PGOT_TS"] == "2003-12-15T18:05:00+08:00"
    assert gate["GTYP"] is None
    assert decoded["FRET"] == {"text": None, "REID": "G"}
    validator("schd").validate(decoded)


def test_documents_keep_present_children_in_catalog_order() -> None:
    vipt = (DocItem((("VTQY", "2"), ("VSCD", "S"))),)
    vipf = (DocItem((("VFES", "x"), ("VIPT", vipt), ("VPCD", "P"))),)
    decoded = json.loads(wire(flight("1", documents={"VIPF": vipf}), CONFIG))
    assert json.dumps(decoded["VIPF"]) == json.dumps(
        [{"VPCD": "P", "VFES": "x", "VIPT": [{"VTQY": "2", "VSCD": "S"}]}]
    )
    validator("schd").validate(decoded)


def test_wire_keys_cover_the_catalog() -> None:
    assert set(COLLECTIONS) | set(DOCUMENTS) <= set(WIRE_KEYS)
    assert {"FDIV", "FRET", "FLAB", "PORT_OPEN", "PORT_CLOSE_TS"} <= set(WIRE_KEYS)
    assert not any(key.startswith(("FDIV_", "FRET_", "FLAB_")) for key in WIRE_KEYS)
    assert len([k for k in SCALARS if not k.startswith(("FDIV_", "FRET_", "FLAB_"))]) < len(
        WIRE_KEYS
    )


def test_notification_shape() -> None:
    body = notification(
        flid="M",
        state_version=2,
        change="CODESHARE",
        changed=["STND"],
        message_id=7,
        type_="FLOP",
        styp="STND",
        codeshare="C",
    )
    assert body == (
        b'{"flid":"M","stateVersion":2,"change":"CODESHARE","changed":["STND"],'
        b'"messageId":7,"type":"FLOP","styp":"STND","codeshare":"C"}'
    )
    validator("msg").validate(json.loads(body))
    with pytest.raises(Exception, match="codeshare"):
        validator("msg").validate({**json.loads(body), "change": "UPDATED"})


@pytest.mark.parametrize(
    ("raw", "cutover", "expected"),
    [
        ("23JAN210535", "00:00", date(2021, 1, 23)),
        ("24JAN210359", "04:00", date(2021, 1, 23)),
        ("24JAN210400", "04:00", date(2021, 1, 24)),
        ("01JAN210000", "00:30", date(2020, 12, 31)),
    ],
)
def test_operation_day_cutover(raw: str, cutover: str, expected: date) -> None:
    config = CoreConfig(opday_cutover=time.fromisoformat(cutover))
    assert operation_day(raw, config) == expected
    assert operation_day(Set(raw), config) == expected


def _replayed(history: list[Step]) -> Iterator[MemoryStore]:
    """The store after each message of *history* is applied."""
    store = MemoryStore()
    for number, step in enumerate(history, 1):
        if step.message is not None:
            row = InboxRow(number, "<decoded/>", None)
            process_message(store, row, CONFIG, now=NOW, epoch=None, decoded=step.message)
            yield store


@settings(max_examples=60, deadline=None)
@given(history=histories(max_size=20))
def test_fast_renderer_equals_the_plain_json_of_the_wire_object(history: list[Step]) -> None:
    """``wire`` renders text directly with caches; ``wire_object`` builds a plain dict. Both
    must give the same bytes for every state a random history produces (and twice in a row,
    so the renderer's caches cannot change the output)."""
    store = MemoryStore()
    for store in _replayed(history):  # noqa: B007 - the final store is what is checked
        pass
    for state in store.iter_flights():
        expected = to_json(wire_object(state, CONFIG))
        assert wire(state, CONFIG) == expected
        assert wire(state, CONFIG) == expected


@settings(max_examples=60, deadline=None)
@given(history=histories(max_size=20))
def test_every_version_renders_as_its_wire_object(history: list[Step]) -> None:
    """The renderer keeps each flight's last scalar text and re-renders only the codes that
    changed; rendering every intermediate version in order (sets, changes and clears of
    scalars, exception parts included) must still give the plain JSON of each state."""
    for store in _replayed(history):
        for state in store.iter_flights():
            assert wire(state, CONFIG) == to_json(wire_object(state, CONFIG))


def test_a_scalars_dict_changed_after_rendering_is_rendered_anew() -> None:
    """The renderer remembers a copy of the scalars it showed, so a caller that changes its
    dict in place (states are meant to be immutable, but nothing enforces it) still gets
    the text of what the dict holds now."""
    codes = [spec.code for spec in SCALARS.values() if spec.code != "MAID"][:3]
    state = flight("RENDER-1", **{codes[0]: "A", codes[1]: "B"})
    first = wire(state, CONFIG)
    assert first == to_json(wire_object(state, CONFIG))
    state.scalars[codes[0]] = "Z"  # type: ignore[index]
    del state.scalars[codes[1]]  # type: ignore[attr-defined]
    state.scalars[codes[2]] = "C"  # type: ignore[index]
    assert wire(state, CONFIG) == to_json(wire_object(state, CONFIG)) != first
