"""FLOP: a Set and a Clear case for every catalog subtype and every collection (table
built from the catalog), plus the hand-written protocol cases of docs/protocol.md §6-§7."""

from __future__ import annotations

from typing import Any

import pytest

from flightstate_core.domain.catalog import (
    COLLECTIONS,
    DOCUMENTS,
    EXCEPTIONS,
    FLOP_SUBTYPES,
    PORT_SCALARS,
    SCALARS,
    STAND_UPDATES,
    ValueKind,
)
from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.decision import Outcome
from flightstate_core.domain.items import DocItem, Item
from flightstate_core.domain.messages import StandUpdate
from flightstate_core.domain.values import CLEAR, Clear, Set
from flightstate_testing.models import collection_items, flop, item, record

from .helpers import apply, flight, msgs, run, seqs

SAMPLE_TIME = "23JAN210535"


def sample(code: str) -> str:
    spec = SCALARS[code]
    if spec.allowed:
        return sorted(spec.allowed)[0]
    return SAMPLE_TIME if spec.kind is ValueKind.TIME else f"v-{code}"


def sample_items(code: str) -> tuple[Item, ...]:
    spec = COLLECTIONS[code]
    values = {
        c.code: (
            SAMPLE_TIME
            if c.kind is ValueKind.TIME
            else "0130"
            if c.kind is ValueKind.DURATION
            else f"{code}-{c.code}"
        )
        for c in spec.children
    }
    seq = "1" if spec.seq_attr else None
    return collection_items(item(seq, **values), item("2" if seq else None, **values))


def sample_doc(code: str) -> tuple[DocItem, ...]:
    spec = DOCUMENTS[code]
    return (DocItem(tuple((c.code, f"{code}-{c.code}") for c in spec.children)),)


def full_flight(flid: str = "7") -> Any:
    """A flight with every scalar, collection and document set."""
    return flight(
        flid,
        collections={code: sample_items(code) for code in COLLECTIONS},
        documents={code: sample_doc(code) for code in ("SRVT", "VIPF")},
        **{code: sample(code) for code in SCALARS},
    )


def element_fields(element: str, *, clear: bool) -> dict[str, Any]:
    """The record fields that set or clear one FLOP element."""
    if element in EXCEPTIONS:
        spec = EXCEPTIONS[element]
        parts = (spec.text_part, *spec.attributes.values())
        return {"scalars": {p: CLEAR if clear else Set(sample(p)) for p in parts}}
    if element == "PORT":
        return {"scalars": {p: CLEAR if clear else Set(SAMPLE_TIME) for p in PORT_SCALARS.values()}}
    if element in COLLECTIONS:
        return {"collections": {element: CLEAR if clear else sample_items(element)}}
    if element in DOCUMENTS:
        return {"documents": {element: CLEAR if clear else sample_doc(element)}}
    return {"scalars": {element: CLEAR if clear else Set(sample(element))}}


PLAIN = sorted(s for s in FLOP_SUBTYPES if s not in STAND_UPDATES and s != "FDEL")


def block(styp: str, *, clear: bool, flid: str = "7") -> Any:
    fields: dict[str, dict[str, Any]] = {}
    for element in FLOP_SUBTYPES[styp]:
        for key, value in element_fields(element, clear=clear).items():
            fields.setdefault(key, {}).update(value)
    return record(flid, **fields)


def expected_fields(state: Any) -> dict[str, Any]:
    return {**state.scalars, **state.collections, **state.documents}


@pytest.mark.parametrize("styp", PLAIN)
def test_every_subtype_sets(styp: str) -> None:
    base = flight("7", ALCD="YG")
    message = flop(styp, block(styp, clear=False))
    decision = run({"7": base}, message)
    after = decision.states["7"]
    carried = block(styp, clear=False)
    expected = {
        "ALCD": "YG",
        **{c: op.raw for c, op in carried.scalars.items()},
        **carried.collections,
        **carried.documents,
    }
    assert expected_fields(after) == expected
    assert after.version == 2
    assert msgs(decision)[0]["change"] == "UPDATED"


@pytest.mark.parametrize("styp", PLAIN)
def test_every_subtype_clears(styp: str) -> None:
    base = full_flight()
    carried = block(styp, clear=True)
    decision = run({"7": base}, flop(styp, carried))
    after = decision.states["7"]
    removed = set(carried.scalars) | set(carried.collections) | set(carried.documents)
    assert removed
    assert not removed & set(expected_fields(after))
    assert {k: v for k, v in expected_fields(base).items() if k not in removed} == expected_fields(
        after
    )


@pytest.mark.parametrize("code", sorted(COLLECTIONS))
def test_every_collection_set_and_clear(code: str) -> None:
    current = {"7": flight("7")}
    apply(current, flop(code, record("7", collections={code: sample_items(code)})))
    assert seqs(current["7"].collections[code]) == seqs(sample_items(code))
    apply(current, flop(code, record("7", collections={code: CLEAR})), mid=2)
    assert code not in current["7"].collections
    assert current["7"].version == 3


def gates(*gates_: tuple[str, str]) -> tuple[Item, ...]:
    return collection_items(*(item(seq, GATE=gate) for seq, gate in gates_))


def test_three_gates_survive() -> None:
    decision = run(
        {},
        flop(
            "GTDT",
            record("9", collections={"GTDT": gates(("1", "G28"), ("2", "G33"), ("3", "G23"))}),
        ),
    )
    state = decision.states["9"]
    assert [i.get("GATE") for i in state.collections["GTDT"]] == ["G28", "G33", "G23"]
    assert state.operation_day is None
    assert msgs(decision)[0]["change"] == "CREATED"


def test_checkin_same_counter_different_class_both_survive() -> None:
    items = collection_items(item("1", CHKC="01", CCLS="F"), item("1", CHKC="01", CCLS="Y"))
    state = run({}, flop("CKDT", record("9", collections={"CKDT": items}))).states["9"]
    assert [(i.get("CHKC"), i.get("CCLS")) for i in state.collections["CKDT"]] == [
        ("01", "F"),
        ("01", "Y"),
    ]


def test_bridge_operations_merge_by_seq() -> None:
    current: dict[str, Any] = {}
    ops = collection_items(item("1", ABDG="212", ABOP="A"), item("2", ABDG="213", ABOP="A"))
    apply(current, flop("ABTM", record("9", collections={"ABTM": ops})))
    assert len(current["9"].collections["ABTM"]) == 2
    later = collection_items(item("1", ABDG="212", ABOP="D", AOTM=SAMPLE_TIME))
    apply(current, flop("ABTM", record("9", collections={"ABTM": later})), mid=2)
    stored = current["9"].collections["ABTM"]
    assert [(i.ordinal, i.seq, i.get("ABOP"), i.get("ABDG")) for i in stored] == [
        (1, "1", "D", "212"),
        (2, "2", "A", "213"),
    ]


def test_site_policy_override_replaces_bridge_operations() -> None:
    config = CoreConfig(collection_policies={"ABTM": "REPLACE"})
    current = {"9": flight("9", collections={"ABTM": gates(("1", "x"), ("2", "y"))})}
    later = collection_items(item("1", ABOP="D"))
    apply(current, flop("ABTM", record("9", collections={"ABTM": later})), config=config)
    assert seqs(current["9"].collections["ABTM"]) == [(1, "1")]


@pytest.mark.parametrize("code", ["GTDT", "CKDT"])
def test_seq_zero_clears_gates_and_checkins(code: str) -> None:
    current = {"9": flight("9", collections={code: gates(("1", "G1"), ("2", "G2"))})}
    zero = collection_items(item("0"))
    apply(current, flop(code, record("9", collections={code: zero})))
    assert code not in current["9"].collections


def test_seq_zero_means_nothing_special_elsewhere() -> None:
    current = {"9": flight("9")}
    apply(current, flop("CLDT", record("9", collections={"CLDT": collection_items(item("0"))})))
    assert seqs(current["9"].collections["CLDT"]) == [(1, "0")]


@pytest.mark.parametrize(
    "value", [CLEAR, collection_items(item(None)), collection_items(item(None, DLTX=""))]
)
def test_empty_dely_clears_delays(value: Any) -> None:
    delays = collection_items(item(None, CODE="81", DURA="0130", DLTX="late"))
    current = {"9": flight("9", collections={"DELY": delays})}
    apply(current, flop("DELY", record("9", collections={"DELY": value})))
    assert "DELY" not in current["9"].collections


def test_fret_with_reid_and_empty_text_keeps_type_clears_reason() -> None:
    current = {"9": flight("9", FRET_TEXT="weather", FRET_REID="A")}
    apply(current, flop("FRET", record("9", {"FRET_TEXT": CLEAR, "FRET_REID": Set("G")})))
    assert current["9"].scalars == {"FRET_REID": "G"}


def test_rout_and_erut_with_same_rtno_do_not_overwrite() -> None:
    current: dict[str, Any] = {}
    rout = collection_items(item("1", APCD="XIY"))
    erut = collection_items(item("1", APCD="CTU"), item("2", APCD="XIY"))
    apply(current, flop("ROUT", record("9", collections={"ROUT": rout})))
    apply(current, flop("ERUT", record("9", collections={"ERUT": erut})), mid=2)
    state = current["9"]
    assert [i.get("APCD") for i in state.collections["ROUT"]] == ["XIY"]
    assert [i.get("APCD") for i in state.collections["ERUT"]] == ["CTU", "XIY"]


def stand_plan() -> tuple[Item, ...]:
    return collection_items(
        item("1", PSST="504", STST=SAMPLE_TIME), item("2", PSST="505"), item("3", PSST="504")
    )


def test_psht_updates_every_matching_stand_item() -> None:
    current = {"9": flight("9", collections={"PSDT": stand_plan()})}
    push = StandUpdate("PSHT", "504", "1", (("PSTM", Set(SAMPLE_TIME)), ("PSID", Set("IN"))))
    apply(current, flop("PSHT", record("9", stand_updates=(push,))))
    items = current["9"].collections["PSDT"]
    assert items[0].values == (
        ("PSST", "504"),
        ("STST", SAMPLE_TIME),
        ("PSHN", "1"),
        ("PSTM", SAMPLE_TIME),
        ("PSID", "IN"),
    )
    assert items[1].values == (("PSST", "505"),)
    assert items[2].get("PSID") == "IN"


def test_tipt_set_then_clear() -> None:
    current = {"9": flight("9", collections={"PSDT": stand_plan()})}
    tow = StandUpdate("TIPT", "505", None, (("TRTM", Set(SAMPLE_TIME)),))
    apply(current, flop("TIPT", record("9", stand_updates=(tow,))))
    assert current["9"].collections["PSDT"][1].get("TRTM") == SAMPLE_TIME
    untow = StandUpdate("TIPT", "505", None, (("TRTM", Clear()),))
    apply(current, flop("TIPT", record("9", stand_updates=(untow,))), mid=2)
    assert current["9"].collections["PSDT"][1].values == (("PSST", "505"),)


@pytest.mark.parametrize("kind", ["PSHT", "TIPT"])
def test_stand_update_without_match_is_dead(kind: str) -> None:
    current = {"9": flight("9", collections={"PSDT": stand_plan()})}
    update = StandUpdate(kind, "999", None, ())
    decision = run(current, flop(kind, record("9", stand_updates=(update,))))
    assert decision.outcome is Outcome.DEAD
    assert "PSST='999'" in (decision.reason or "")


def test_deleted_flight_ignores_flop() -> None:
    decision = run({"9": flight("9", deleted=True)}, flop("STND", record("9", {"STND": Set("1")})))
    assert decision.outcome is Outcome.SUCCEEDED
    assert not decision.states
    assert decision.notes
    assert "DELETED" in decision.notes[0]


@pytest.mark.parametrize(
    ("styp", "fields"),
    [
        ("STND", {"scalars": {"RUNW": Set("1")}}),
        ("STND", {}),
        ("GTDT", {"collections": {"CKDT": CLEAR}}),
        ("NOPE", {"scalars": {"STND": Set("1")}}),
    ],
)
def test_wrong_block_is_dead(styp: str, fields: dict[str, Any]) -> None:
    decision = run({}, flop(styp, record("9", **fields)))
    assert decision.outcome is Outcome.DEAD


def test_several_blocks_one_flight_one_version() -> None:
    message = flop(
        "STND",
        record("9", {"STND": Set("1")}),
        record("9", {"STND": Set("2")}),
        record("8", {"STND": Set("3")}),
    )
    decision = run({"9": flight("9", version=4)}, message)
    assert decision.states["9"].version == 5
    assert decision.states["9"].scalars["STND"] == "2"
    assert decision.states["8"].version == 1


def test_same_value_is_no_change() -> None:
    decision = run({"9": flight("9", STND="1")}, flop("STND", record("9", {"STND": Set("1")})))
    assert decision.outcome is Outcome.SUCCEEDED
    assert not decision.states
    assert not decision.events


def test_raw_text_is_kept_exactly() -> None:
    decision = run({}, flop("REMC", record("9", {"REMC": Set(" 007 ")})))
    assert decision.states["9"].scalars["REMC"] == " 007 "
