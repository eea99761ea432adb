"""SCHD packages, Set-only messages, deletion and codeshares (docs/protocol.md §8, design notes)."""

from __future__ import annotations

from datetime import date, time
from typing import Any

import pytest

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.decision import Outcome
from flightstate_core.domain.items import DocItem
from flightstate_core.domain.messages import ReferenceDataMessage, ScheduleSeasonMessage
from flightstate_core.domain.values import CLEAR, Set
from flightstate_testing.models import (
    collection_items,
    envelope,
    flop,
    fltr,
    item,
    record,
    schedule,
)  # fmt: skip

from .helpers import apply, flight, msgs, run

DAY = date(2021, 1, 23)
SODT = "23JAN210535"  # every flight's schedule time unless a test gives one


def test_dnld_creates_flights_with_operation_day() -> None:
    decision = run(
        {},
        schedule("DNLD", fltr("15", SODT=SODT, ALCD="YG"), fltr("16", SODT="23JAN210325")),
    )
    assert decision.outcome is Outcome.SUCCEEDED
    assert {f: s.operation_day for f, s in decision.states.items()} == {"15": DAY, "16": DAY}
    assert [m["change"] for m in msgs(decision)] == ["CREATED", "CREATED"]


def test_second_dnld_without_b_leaves_b_untouched() -> None:
    current: dict[str, Any] = {}
    apply(current, schedule("DNLD", fltr("A", SODT=SODT, STND="1"), fltr("B", SODT=SODT, STND="2")))
    b_before = current["B"]
    decision = apply(current, schedule("DNLD", fltr("A", SODT=SODT, STND="3")), mid=2)
    assert set(decision.states) == {"A"}
    assert current["B"] is b_before
    assert not current["B"].is_deleted


def test_dnld_moving_a_flight_to_another_day_is_dead() -> None:
    current = {"A": flight("A", day=DAY, STND="1"), "B": flight("B", day=DAY)}
    decision = run(
        current,
        schedule("DNLD", fltr("B", SODT=SODT, STND="9"), fltr("A", SODT="25JAN210535")),
    )
    assert decision.outcome is Outcome.DEAD
    assert "OPERATION_DAY" in (decision.reason or "")
    assert not decision.states
    assert not decision.events


@pytest.mark.parametrize(
    "records",
    [
        (fltr("A", SODT=SODT), fltr("A", SODT=SODT)),
        (fltr(" ", SODT=SODT),),
        (fltr("A", SODT="99XXX210535"),),
    ],
)
def test_invalid_package_is_dead(records: tuple[Any, ...]) -> None:
    assert run({}, schedule("RESP", *records)).outcome is Outcome.DEAD


def test_recs_mismatch_is_dead() -> None:
    assert run({}, schedule("DNLD", fltr("A", SODT=SODT), recs=2)).outcome is Outcome.DEAD


def test_package_clears_and_replaces_collections() -> None:
    gates = collection_items(item("1", GATE="G1"), item("2", GATE="G2"))
    bridge = collection_items(item("1", ABOP="A"), item("2", ABOP="D"))
    current = {
        "A": flight("A", day=DAY, STND="1", REMC="r", collections={"GTDT": gates, "ABTM": bridge})
    }
    package = record(
        "A",
        {"STND": CLEAR, "SODT": Set("23JAN210535")},
        {"ABTM": collection_items(item("1", ABOP="X")), "GTDT": CLEAR},
    )
    state = run(current, schedule("DNLD", package)).states["A"]
    assert state.scalars == {"REMC": "r", "SODT": "23JAN210535"}
    assert [i.get("ABOP") for i in state.collections["ABTM"]] == ["X"]
    assert "GTDT" not in state.collections
    assert state.operation_day == DAY


def test_cutover_puts_early_hours_on_previous_day() -> None:
    config = CoreConfig(opday_cutover=time(4, 0))
    decision = run({}, schedule("DNLD", fltr("A", SODT="24JAN210230")), config=config)
    assert decision.states["A"].operation_day == DAY


def test_adft_with_empty_element_clears_nothing() -> None:
    gates = collection_items(item("1", GATE="G1"))
    current = {
        "A": flight(
            "A",
            day=DAY,
            STND="1",
            collections={"GTDT": gates},
            documents={"SRVT": (DocItem((("SRTC", "x"),)),)},
        )
    }
    message = schedule(
        "ADFT",
        record(
            "A",
            {"STND": CLEAR, "REMC": Set("new")},
            {"GTDT": CLEAR, "DELY": CLEAR},
            {"SRVT": CLEAR},
        ),
    )
    state = run(current, message).states["A"]
    assert state.scalars == {"STND": "1", "REMC": "new"}
    assert state.collections == current["A"].collections
    assert state.documents == current["A"].documents


def test_adft_only_clears_is_no_change() -> None:
    current = {"A": flight("A", STND="1")}
    decision = run(current, schedule("UPD", record("A", {"STND": CLEAR})))
    assert decision.outcome is Outcome.SUCCEEDED
    assert not decision.states


def test_adft_merges_operation_records_by_policy() -> None:
    bridge = collection_items(item("1", ABOP="A"), item("2", ABOP="A"))
    current = {"A": flight("A", collections={"ABTM": bridge})}
    message = schedule(
        "ADD", record("A", collections={"ABTM": collection_items(item("2", ABOP="D"))})
    )
    state = run(current, message).states["A"]
    assert [(i.seq, i.get("ABOP")) for i in state.collections["ABTM"]] == [("1", "A"), ("2", "D")]


def test_adft_gives_a_flight_without_a_day_its_day() -> None:
    """A stored SODT always derives the stored OPERATION_DAY (docs/design.md, "Schedule and
    deletion")."""
    current = {"A": flight("A", day=DAY), "B": flight("B")}
    decision = run(
        current,
        schedule(
            "ADFT",
            fltr("A", SODT="23JAN211200"),
            fltr("B", SODT="25JAN210535"),
            fltr("C", SODT="25JAN210535"),
        ),
    )
    days = {f: s.operation_day for f, s in decision.states.items()}
    assert days == {"A": DAY, "B": date(2021, 1, 25), "C": date(2021, 1, 25)}


def test_adft_moving_a_flight_to_another_day_is_dead() -> None:
    """Was: the SODT applied and the day kept (noted), so SODT and OPERATION_DAY disagreed
    and every later package carrying that SODT was DEAD. Now: a protocol error naming the
    element, nothing of the message applied (docs/design.md, "Schedule and deletion")."""
    current = {"A": flight("A", day=DAY), "B": flight("B")}
    decision = run(
        current,
        schedule(
            "ADFT",
            fltr("B", SODT="25JAN210535"),
            fltr("A", SODT="25JAN210535", STND="9"),
        ),
    )
    assert decision.outcome is Outcome.DEAD
    assert (decision.reason or "").startswith("/MSG/SCHD/FLTR[2]/SODT")
    assert "OPERATION_DAY 2021-01-23 cannot become 2021-01-25" in (decision.reason or "")
    assert not decision.states
    assert not decision.events


def test_package_conflict_names_a_stored_sodt_that_already_disagrees() -> None:
    """Data written before that rule may hold a SODT on another day than OPERATION_DAY: a
    package carrying that SODT is still DEAD, and the reason says the stored SODT is why."""
    current = {"A": flight("A", day=DAY, SODT="24JAN211030")}
    decision = run(current, schedule("DNLD", fltr("A", SODT="24JAN211030")))
    assert decision.outcome is Outcome.DEAD
    assert "the stored SODT 24JAN211030 already implies 2021-01-24" in (decision.reason or "")
    plain = run({"B": flight("B", day=DAY)}, schedule("DNLD", fltr("B", SODT="24JAN211030")))
    assert "stored SODT" not in (plain.reason or "")


@pytest.mark.parametrize("styp", ["DNLD", "ADFT"])
def test_schedule_does_not_revive_deleted(styp: str) -> None:
    current = {"A": flight("A", deleted=True, STND="1")}
    decision = run(current, schedule(styp, fltr("A", SODT=SODT, STND="2")))
    assert decision.outcome is Outcome.SUCCEEDED
    assert not decision.states
    assert decision.notes
    revived = run(
        current,
        schedule(styp, fltr("A", SODT=SODT, STND="2")),
        config=CoreConfig(revive_deleted=True),
    ).states["A"]
    assert not revived.is_deleted
    assert revived.scalars["STND"] == "2"
    assert revived.version == 2


def test_fdel_once_then_idempotent() -> None:
    current = {"A": flight("A", version=3, STND="1")}
    first = apply(current, flop("FDEL", record("A", delete=True)))
    state = first.states["A"]
    assert state.is_deleted
    assert state.version == 4
    assert state.scalars == {"STND": "1"}
    assert [(e.topic, e.payload is None) for e in first.events] == [("schd", True), ("msg", False)]
    assert msgs(first)[0]["change"] == "DELETED"
    second = run(current, flop("FDEL", record("A", delete=True)), mid=2)
    assert second.outcome is Outcome.SUCCEEDED
    assert not second.states
    assert not second.events


def test_fdel_unknown_flid_succeeds_without_event() -> None:
    decision = run({}, flop("FDEL", record("Z", delete=True)))
    assert decision.outcome is Outcome.SUCCEEDED
    assert not decision.events
    assert decision.notes


def test_schedule_del_deletes_each_listed_flid() -> None:
    current = {"A": flight("A"), "B": flight("B"), "C": flight("C")}
    decision = run(current, schedule("DEL", record("A"), record("B"), record("Q")))
    assert sorted(decision.states) == ["A", "B"]
    assert all(s.is_deleted for s in decision.states.values())


def mafl(*entries: tuple[str, str, str]) -> tuple[DocItem, ...]:
    return tuple(DocItem((("FLID", f), ("CSOP", o), ("CSFT", n))) for f, o, n in entries)


def test_codeshare_created_updates_master_mafl_and_notifies_master() -> None:
    current = {"M": flight("M", version=2)}
    block = record("C", {"MAID": Set("M"), "CSOP": Set("MU"), "CSFT": Set("MU1")})
    decision = run(current, flop("CSOP", block))
    assert decision.states["M"].documents["MAFL"] == mafl(("C", "MU", "MU1"))
    assert decision.states["M"].version == 3
    assert decision.states["C"].version == 1
    notes = msgs(decision)
    assert {"flid": "M", "change": "CODESHARE", "codeshare": "C"}.items() <= notes[0].items()
    assert notes[0]["stateVersion"] == 3
    assert {"flid": "M", "change": "UPDATED", "changed": ["MAFL"]}.items() <= notes[1].items()


def test_codeshare_change_without_mafl_change_notifies_master_only() -> None:
    current = {
        "M": flight("M", documents={"MAFL": mafl(("C", "MU", "MU1"))}),
        "C": flight("C", MAID="M", CSOP="MU", CSFT="MU1"),
    }
    decision = run(current, flop("STND", record("C", {"STND": Set("5")})))
    assert set(decision.states) == {"C"}
    assert [(m["flid"], m["change"], m["codeshare"]) for m in msgs(decision)] == [
        ("M", "CODESHARE", "C")
    ]
    assert [e.key for e in decision.events] == ["C", "M"]


def test_codeshare_moved_between_masters() -> None:
    current = {
        "M1": flight("M1", documents={"MAFL": mafl(("C", "MU", "1"), ("D", "CA", "2"))}),
        "M2": flight("M2"),
        "C": flight("C", MAID="M1", CSOP="MU", CSFT="1"),
    }
    decision = run(current, flop("CSOP", record("C", {"MAID": Set("M2")})))
    assert decision.states["M1"].documents["MAFL"] == mafl(("D", "CA", "2"))
    assert decision.states["M2"].documents["MAFL"] == mafl(("C", "MU", "1"))


def test_deleting_codeshare_updates_master() -> None:
    current = {
        "M": flight("M", documents={"MAFL": mafl(("C", "MU", "1"))}),
        "C": flight("C", MAID="M", CSOP="MU", CSFT="1"),
    }
    decision = run(current, flop("FDEL", record("C", delete=True)))
    assert decision.states["C"].is_deleted
    assert "MAFL" not in decision.states["M"].documents
    assert ("M", "CODESHARE") in [(m["flid"], m["change"]) for m in msgs(decision)]


def test_deleting_master_deletes_codeshares_atomically() -> None:
    current = {
        "M": flight("M", documents={"MAFL": mafl(("C", "MU", "1"), ("D", "CA", "2"))}),
        "C": flight("C", MAID="M"),
        "D": flight("D", MAID="M"),
        "E": flight("E", MAID="M", deleted=True),
        "X": flight("X"),
    }
    decision = run(current, flop("FDEL", record("M", delete=True)))
    assert sorted(decision.states) == ["C", "D", "M"]
    assert all(s.is_deleted for s in decision.states.values())
    tombstones = [e.key for e in decision.events if e.topic == "schd" and e.payload is None]
    assert sorted(tombstones) == ["C", "D", "M"]
    assert {(m["flid"], m["change"]) for m in msgs(decision)} == {
        ("M", "DELETED"),
        ("C", "DELETED"),
        ("D", "DELETED"),
    }
    assert decision.states["M"].documents == current["M"].documents


def test_new_master_adopts_existing_codeshares() -> None:
    current = {"C": flight("C", MAID="M", CSOP="MU")}
    decision = run(current, schedule("DNLD", fltr("M", SODT=SODT)))
    assert decision.states["M"].documents["MAFL"] == (DocItem((("FLID", "C"), ("CSOP", "MU"))),)


@pytest.mark.parametrize(
    "message",
    [
        ScheduleSeasonMessage(envelope("SCHS", "DNLD"), "<SCHS/>"),
        ReferenceDataMessage(envelope("AIRL", "ADD"), 1, "<AIRL/>"),
    ],
)
def test_ignored_kinds(message: Any) -> None:
    decision = run({}, message)
    assert decision.outcome is Outcome.IGNORED
    assert decision.reason


def test_carried_mafl_that_agrees_is_not_noted_and_changes_nothing() -> None:
    entry = DocItem((("FLID", "C"), ("CSOP", "MU")))
    current = {
        "M": flight("M", day=DAY, documents={"MAFL": (entry,)}),
        "C": flight("C", day=DAY, MAID="M", CSOP="MU"),
    }
    same = record("M", {"SODT": Set("23JAN210535")}, documents={"MAFL": (entry,)})
    decision = run(current, schedule("DNLD", same))
    assert decision.outcome is Outcome.SUCCEEDED
    assert not decision.notes
    cleared = run(current, schedule("DNLD", record("M", documents={"MAFL": CLEAR})))
    assert not cleared.states  # a carried Clear does not empty the maintained list
    assert cleared.notes == ("FLID M: MAFL carried [] not applied; MAFL follows the "
                             "codeshares naming it by MAID ['C']",)  # fmt: skip
