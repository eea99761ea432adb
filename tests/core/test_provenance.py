"""Late rows and provenance (docs/design.md): a message older than a key's newest setter
keeps that key; what no newer message touched is applied. Pure cases per kind of key."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from attrs import evolve

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.decision import Decision, DecisionContext
from flightstate_core.domain.handlers import decide
from flightstate_core.domain.items import DocItem
from flightstate_core.domain.messages import StandUpdate
from flightstate_core.domain.provenance import (
    STATE_KEY,
    Stamps,
    decode,
    describe,
    encode,
    encode_raised,
    item_key,
    stamp,
    stored_text,
)
from flightstate_core.domain.state import FlightState
from flightstate_core.domain.values import CLEAR, Set
from flightstate_testing.models import collection_items, flop, item, record, schedule

from .helpers import CONFIG, NOW, apply, run

REVIVE = CoreConfig(revive_deleted=True)


def _state(decided: dict[str, FlightState], flid: str = "W2_0") -> FlightState:
    return decided[flid]


def _notes(decision: Decision) -> str:
    return "; ".join(decision.notes)


def test_a_late_scalar_keeps_the_newer_value_and_applies_the_rest() -> None:
    current: dict[str, FlightState] = {}
    apply(current, flop("STND", record("W2_0", {"STND": Set("50")})), mid=20)
    late = schedule("ADFT", record("W2_0", {"STND": Set("0"), "ACFT": Set("A320")}))
    decision = apply(current, late, mid=10)
    state = _state(current)
    assert state.scalars["STND"] == "50"
    assert state.scalars["ACFT"] == "A320"
    assert _notes(decision) == "late: FLID W2_0 kept STND (set by message 20)"
    assert state.provenance == {"STND": 20, "ACFT": 10}
    assert state.last_message_id == 10  # the message that made this version


def test_a_message_in_order_pays_nothing_and_stamps_its_keys() -> None:
    current: dict[str, FlightState] = {}
    apply(current, flop("STND", record("W2_0", {"STND": Set("50")})), mid=10)
    decision = apply(current, flop("STND", record("W2_0", {"STND": Set("51")})), mid=20)
    assert _state(current).scalars["STND"] == "51"
    assert not decision.notes
    assert _state(current).provenance == {"STND": 20}


def test_a_newer_clear_is_kept_against_a_late_set() -> None:
    current: dict[str, FlightState] = {}
    apply(current, flop("STND", record("W2_0", {"STND": Set("50")})), mid=5)
    apply(current, flop("STND", record("W2_0", {"STND": CLEAR})), mid=20)
    decision = apply(current, flop("STND", record("W2_0", {"STND": Set("0")})), mid=10)
    assert "STND" not in _state(current).scalars
    assert decision.states == {}  # nothing else carried: no version, no event
    assert _notes(decision) == "late: FLID W2_0 kept STND (set by message 20)"


def test_a_late_clear_does_not_remove_a_newer_value() -> None:
    current: dict[str, FlightState] = {}
    apply(current, flop("STND", record("W2_0", {"STND": Set("50")})), mid=20)
    apply(current, flop("STND", record("W2_0", {"STND": CLEAR})), mid=10)
    assert _state(current).scalars["STND"] == "50"


def test_a_set_only_clear_is_no_op_and_is_not_reported() -> None:
    current: dict[str, FlightState] = {}
    apply(current, flop("STND", record("W2_0", {"STND": Set("50")})), mid=20)
    late = schedule("ADFT", record("W2_0", {"STND": CLEAR, "ACFT": Set("B738")}))
    decision = apply(current, late, mid=10)
    assert _state(current).scalars["STND"] == "50"
    assert not decision.notes


def test_exception_parts_are_kept_one_by_one() -> None:
    current: dict[str, FlightState] = {}
    newer = {"FDIV_DDES": Set("PEK")}
    apply(current, flop("FDIV", record("W2_0", newer)), mid=20)
    late = {"FDIV_TEXT": Set("diverted"), "FDIV_DDES": Set("SHA"), "FDIV_DDIR": Set("TO")}
    decision = apply(current, flop("FDIV", record("W2_0", late)), mid=10)
    scalars = _state(current).scalars
    assert scalars["FDIV_DDES"] == "PEK"
    assert scalars["FDIV_TEXT"] == "diverted"
    assert scalars["FDIV_DDIR"] == "TO"
    assert _notes(decision) == "late: FLID W2_0 kept FDIV_DDES (set by message 20)"


def test_documents_are_kept_whole() -> None:
    current: dict[str, FlightState] = {}
    newer = (DocItem((("SRTC", "WCHR"),)),)
    apply(current, flop("SRVT", record("W2_0", documents={"SRVT": newer})), mid=20)
    older = (DocItem((("SRTC", "MAAS"),)),)
    decision = apply(current, flop("SRVT", record("W2_0", documents={"SRVT": older})), mid=10)
    assert _state(current).documents["SRVT"] == newer
    assert _notes(decision) == "late: FLID W2_0 kept SRVT (set by message 20)"
    apply(current, flop("SRVT", record("W2_0", documents={"SRVT": CLEAR})), mid=11)
    assert _state(current).documents["SRVT"] == newer


def test_merge_by_seq_keeps_newer_seqs_and_applies_the_others() -> None:
    current: dict[str, FlightState] = {}
    newer = collection_items(item("1", CHID="new"))
    apply(current, flop("CHOT", record("W2_0", collections={"CHOT": newer})), mid=20)
    late = collection_items(item("1", CHID="old"), item("2", CHID="two"))
    decision = apply(current, flop("CHOT", record("W2_0", collections={"CHOT": late})), mid=10)
    items = _state(current).collections["CHOT"]
    assert [(i.seq, i.get("CHID")) for i in items] == [("1", "new"), ("2", "two")]
    assert _notes(decision) == "late: FLID W2_0 kept CHOT seq 1 (set by message 20)"
    assert _state(current).provenance == {"CHOT:1": 20, "CHOT:2": 10}


def test_a_newer_replace_keeps_a_late_merge_of_that_collection() -> None:
    current: dict[str, FlightState] = {}
    replaced = collection_items(item("1", GATE="G1"))
    apply(current, schedule("DNLD", record("W2_0", collections={"GTDT": replaced})), mid=20)
    merged = collection_items(item("2", GATE="G2"))
    late = schedule("ADFT", record("W2_0", collections={"GTDT": merged}))
    decision = apply(current, late, mid=10)
    assert _state(current).collections["GTDT"] == replaced
    assert _notes(decision) == "late: FLID W2_0 kept GTDT (set by message 20)"


def test_a_late_replace_is_kept_whole_when_any_item_is_newer() -> None:
    current: dict[str, FlightState] = {}
    first = collection_items(item("1", GATE="G1"), item("2", GATE="G2"))
    apply(current, schedule("DNLD", record("W2_0", collections={"GTDT": first})), mid=5)
    merged = collection_items(item("2", GATE="G9"))
    apply(current, schedule("ADFT", record("W2_0", collections={"GTDT": merged})), mid=20)
    expected = _state(current).collections["GTDT"]
    late = collection_items(item("1", GATE="G7"))
    decision = apply(current, flop("GTDT", record("W2_0", collections={"GTDT": late})), mid=10)
    assert _state(current).collections["GTDT"] == expected
    assert _notes(decision) == "late: FLID W2_0 kept GTDT seq 2 (set by message 20)"
    # Older than every key of GTDT: applied, and stamps the whole collection.
    apply(current, flop("GTDT", record("W2_0", collections={"GTDT": late})), mid=30)
    assert _state(current).provenance["GTDT"] == 30


def test_a_late_clear_of_a_collection_keeps_newer_items() -> None:
    current: dict[str, FlightState] = {}
    items = collection_items(item("1", GATE="G1"))
    apply(current, flop("GTDT", record("W2_0", collections={"GTDT": items})), mid=20)
    apply(current, flop("GTDT", record("W2_0", collections={"GTDT": CLEAR})), mid=10)
    assert _state(current).collections["GTDT"] == items


def test_a_stand_update_is_kept_when_its_items_are_newer() -> None:
    current: dict[str, FlightState] = {}
    plan = collection_items(item("1", PSST="S1"), item("2", PSST="S2"))
    apply(current, flop("PSDT", record("W2_0", collections={"PSDT": plan})), mid=5)
    push = StandUpdate("PSHT", "S1", "7", (("PSID", Set("new")),))
    apply(current, flop("PSHT", record("W2_0", stand_updates=(push,))), mid=20)
    assert _state(current).provenance[item_key("PSDT", "1")] == 20
    old = StandUpdate("PSHT", "S1", "6", (("PSID", Set("old")),))
    decision = apply(current, flop("PSHT", record("W2_0", stand_updates=(old,))), mid=10)
    assert _state(current).collections["PSDT"][0].get("PSID") == "new"
    assert _notes(decision) == "late: FLID W2_0 kept PSDT seq 1 (set by message 20)"


def test_a_late_revival_of_a_flight_a_newer_message_deleted_is_refused() -> None:
    current: dict[str, FlightState] = {}
    apply(current, flop("STND", record("W2_0", {"STND": Set("50")})), mid=5, config=REVIVE)
    apply(current, schedule("DEL", record("W2_0")), mid=20, config=REVIVE)
    late = schedule("ADFT", record("W2_0", {"ACFT": Set("A320")}))
    decision = apply(current, late, mid=10, config=REVIVE)
    assert _state(current).is_deleted
    assert decision.states == {}
    assert _notes(decision) == "late: FLID W2_0 kept DELETED (set by message 20)"
    # A newer message still revives it.
    apply(current, late, mid=30, config=REVIVE)
    assert not _state(current).is_deleted
    assert _state(current).provenance[STATE_KEY] == 30


def test_a_late_delete_applies_whatever_newer_messages_set() -> None:
    current: dict[str, FlightState] = {}
    apply(current, flop("STND", record("W2_0", {"STND": Set("50")})), mid=20)
    apply(current, flop("FDEL", record("W2_0", delete=True)), mid=10)
    assert _state(current).is_deleted


def test_flights_without_provenance_take_a_late_message_like_any_other() -> None:
    current: dict[str, FlightState] = {}
    apply(current, flop("STND", record("W2_0", {"STND": Set("50")})), mid=20)
    current["W2_0"] = evolve(current["W2_0"], provenance={})  # written before 0009
    apply(current, flop("STND", record("W2_0", {"STND": Set("0")})), mid=10)
    assert _state(current).scalars["STND"] == "0"


@pytest.mark.parametrize(
    ("key", "text"),
    [
        (("STND", 3), "STND (set by message 3)"),
        (("GTDT:2", 4), "GTDT seq 2 (set by message 4)"),
        (("GTDT!", 5), "GTDT item without seq (set by message 5)"),
        ((STATE_KEY, 6), "DELETED (set by message 6)"),
    ],
)
def test_describe(key: tuple[str, int], text: str) -> None:
    assert describe(key) == text


def test_encode_decode() -> None:
    assert encode({}) is None
    assert decode(None) == {}
    assert decode("") == {}
    assert decode(encode({"STND": 3, "GTDT:1": 4, "航": 5})) == {"STND": 3, "GTDT:1": 4, "航": 5}
    assert decode('{"STND": 3}') == {"STND": 3}  # an object (a hand edit) is read too
    with pytest.raises(ValueError, match="PROVENANCE"):
        decode('{"STND": "x"}')
    with pytest.raises(ValueError, match="PROVENANCE"):
        decode('["STND"]')
    with pytest.raises(ValueError, match="PROVENANCE"):
        decode("[[3, 4]]")
    with pytest.raises(ValueError, match="PROVENANCE"):
        decode("[1, 2]")
    assert encode({"A": 5, "B": 5, "C": 6}) == '[[5,"A","B"],[6,"C"]]'  # one id, once


def test_a_requeued_message_applies_as_the_newest_and_never_lowers_a_stamp() -> None:
    # The operator's requeue of an old DEAD message applies it now (tests/runner/
    # test_requeue.py: a PSHT that was DEAD until a newer PSDT added its stand).
    current: dict[str, FlightState] = {}
    plan = collection_items(item("2", PSST="777"))
    apply(current, flop("PSDT", record("W2_0", collections={"PSDT": plan})), mid=30)
    push = StandUpdate("PSHT", "777", "1", (("PSID", Set("T9")),))
    late = flop("PSHT", record("W2_0", stand_updates=(push,)))
    decision = decide(current, late, CONFIG, DecisionContext(20, NOW, requeued=True))
    assert not decision.notes
    state = decision.states["W2_0"]
    assert state.collections["PSDT"][0].get("PSID") == "T9"
    assert state.provenance == {"PSDT": 30, "PSDT:2": 20}
    # Without the requeue it is a late row: kept.
    assert apply(current, late, mid=20).notes == ("late: FLID W2_0 kept PSDT (set by message 30)",)


def test_a_stored_text_grows_by_the_stamped_pairs_and_is_rewritten_when_long() -> None:
    base = decode(encode({"STND": 3, "ACFT": 4}))
    assert isinstance(base, Stamps)
    once = stamp(base, ["STND", "GTDT:1"], 9)
    assert encode(once) == '[[3,"STND"],[4,"ACFT"],[9,"STND","GTDT:1"]]'
    assert decode(encode(once)) == {"STND": 9, "ACFT": 4, "GTDT:1": 9}
    assert stamp(once, ["STND"], 5) is once  # a stamp never goes down
    current: Mapping[str, int] = once
    for mid in range(10, 60):
        current = stamp(current, ["STND"], mid)
        assert decode(encode(current)) == {"STND": mid, "ACFT": 4, "GTDT:1": 9}
    assert len(encode(current) or "") < 200  # rewritten, not grown without bound
    plain = stamp({}, ["航"], 2)
    assert decode(encode(plain)) == {"航": 2}


def test_a_re_send_raises_the_stamps_without_a_version_or_an_event() -> None:
    current: dict[str, FlightState] = {}
    apply(current, flop("STND", record("W2_0", {"STND": Set("50")})), mid=10)
    stored = current["W2_0"]
    resend = run(current, flop("STND", record("W2_0", {"STND": Set("50")})), mid=12)
    assert resend.states == {}
    assert resend.events == ()
    assert resend.stamped == {"W2_0": evolve(stored, provenance={"STND": 12})}
    current.update(resend.stamped)  # what a store keeps of it
    late = apply(current, flop("STND", record("W2_0", {"STND": Set("0")})), mid=11)
    assert current["W2_0"].scalars["STND"] == "50"  # message 12 said 50, after 11
    assert (late.states, late.stamped) == ({}, {})
    assert _notes(late) == "late: FLID W2_0 kept STND (set by message 12)"


def test_a_change_carries_its_stamps_in_the_new_state_not_as_stamps_only() -> None:
    current: dict[str, FlightState] = {}
    apply(current, flop("STND", record("W2_0", {"STND": Set("50")})), mid=10)
    both = record("W2_0", {"STND": Set("50"), "ACFT": Set("A320")})
    change = run(current, schedule("ADFT", both), mid=12)
    assert change.stamped == {}
    assert change.states["W2_0"].provenance == {"STND": 12, "ACFT": 12}


def test_a_stamps_only_text_never_keeps_the_length_of_the_text_it_replaces() -> None:
    """The PostgreSQL writer's cache validates a state by its version and PROVENANCE's
    length, so a stamps-only write appends where a rewrite would keep the length."""
    old = "[" + ",".join(f'[{mid},"A"]' for mid in range(1, 19)) + "]"  # 17 overwritten
    keys = ["A", *(f"Bx{n}" for n in range(22))]
    assert len(encode(stamp(decode(old), keys, 19)) or "") == len(old)  # a rewrite would
    raised = stamp(decode(old), keys, 19)
    text = encode_raised(raised) or ""
    assert len(text) > len(old)
    assert text.startswith(old[:-1])
    assert decode(text) == dict.fromkeys(keys, 19)
    assert stored_text(raised) == text  # remembered as written: the next save appends to it
    again = stamp(raised, ["A"], 20)
    assert len(encode_raised(again) or "") != len(text)
    assert decode(encode(again)) == {**dict.fromkeys(keys, 19), "A": 20}
