"""The backend-neutral write plan (pure): what a batch writes, in which order, and the
lossless guard and document rule every store applies before its first statement."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import attrs
import pytest

from flightstate_core.domain.catalog import ValueKind
from flightstate_core.domain.decision import Outcome
from flightstate_core.domain.errors import PermanentError
from flightstate_core.domain.items import DocItem, Item
from flightstate_core.domain.layout import DETAIL_TABLES
from flightstate_core.domain.records import GapRange, SnapLogEntry
from flightstate_core.domain.write_plan import (
    WRITE_STEPS,
    TypedValues,
    WritePlan,
    check_intent,
    decode_document,
    encode_document,
    final_states,
    gaps_to_write,
    late_ids,
    payload_text,
    plan_writes,
    run_steps,
    snap_texts,
    stamp_texts,
    typed_twin,
    validate,
)
from flightstate_core.testing.store_contract import flight, full_collections, processed

ZONE = ZoneInfo("Asia/Shanghai")
SEEN = datetime(2026, 12, 1, tzinfo=UTC)


def _gates(*codes: str) -> dict[str, tuple[Item, ...]]:
    return {"GTDT": tuple(Item.of(n, str(n), {"GATE": g}) for n, g in enumerate(codes, 1))}


def _changed(plan: WritePlan) -> dict[str, tuple[list[str], list[str]]]:
    """Table -> (deleted FLIDs, FLIDs rewritten) for the tables that change."""
    return {
        name: (change.deletes, [s.flid for s in change.writes])
        for name, change in plan.details.items()
        if change.deletes or change.writes
    }


def test_a_flight_with_raised_stamps_only_is_written_as_stamps() -> None:
    a1, b1 = flight("A", 1), flight("B", 1)
    a1_stamped = attrs.evolve(a1, provenance={"STND": 9})
    resend = attrs.evolve(processed(2), stamped={"A": a1_stamped})
    plan = plan_writes([processed(1, b1), resend], {"A": a1, "B": None})
    assert (plan.states, list(plan.stamps)) == ([b1], [a1_stamped])
    assert stamp_texts(plan) == [("A", '[[9,"STND"]]')]
    assert all(s.flid != "A" for c in plan.details.values() for s in c.writes)  # no details
    # changed in the same batch: written in full, with the stamps raised after the change
    a2 = flight("A", 2)
    a2_stamped = attrs.evolve(a2, provenance={"STND": 9})
    resend = attrs.evolve(processed(2), stamped={"A": a2_stamped})
    plan = plan_writes([processed(1, a2), resend], {"A": a1})
    assert (plan.states, list(plan.stamps)) == ([a2_stamped], [])


def test_only_the_final_state_of_each_flight_in_first_seen_order() -> None:
    a1, b1, a2 = flight("A", 1), flight("B", 1), flight("A", 2)
    batch = [processed(1, a1), processed(2, b1), processed(3, a2)]
    assert final_states(batch) == [a2, b1]
    plan = plan_writes(batch, {"A": None, "B": None})
    assert plan.states == [a2, b1]
    assert plan.batch is batch  # events, PROC_STATE and snap log: every message, in order
    assert plan.cursor == 3
    assert not plan.touches_gaps


def test_detail_tables_compare_with_the_state_before_the_batch() -> None:
    before = flight("A", 1)
    same_gates = flight("A", 2, scalars={"FFID": "CA-X"})
    new_gates = flight("A", 3, collections=_gates("G5"))
    back = flight("A", 4)  # gates back to what was stored
    known = {"A": before}
    assert _changed(plan_writes([processed(1, same_gates)], known)) == {}
    plan = plan_writes([processed(1, same_gates), processed(2, new_gates)], known)
    assert _changed(plan) == {"FLIGHT_GATE": (["A"], ["A"])}
    assert _changed(plan_writes([processed(1, new_gates), processed(2, back)], known)) == {}


def test_new_flights_insert_and_unloaded_ones_are_rewritten_everywhere() -> None:
    state = flight("A", collections=full_collections(1))
    new = _changed(plan_writes([processed(1, state)], {"A": None}))
    assert new == {name: ([], ["A"]) for name in DETAIL_TABLES}  # nothing stored to delete
    unknown = _changed(plan_writes([processed(1, state)], {}))
    assert unknown == {name: (["A"], ["A"]) for name in DETAIL_TABLES}  # not loaded: rewrite


def test_a_new_flight_writes_only_the_tables_it_has_rows_in() -> None:
    # A FLOP to an unknown FLID creates a flight with scalars only: no detail table has
    # rows to insert, and with nothing stored there is nothing to delete either.
    bare = flight("N", collections={})
    gated = flight("G", collections=_gates("G1", "G2"))
    plan = plan_writes([processed(1, bare), processed(2, gated)], {"N": None, "G": None})
    assert _changed(plan) == {"FLIGHT_GATE": ([], ["G"])}
    assert [s.flid for s in plan.states] == ["N", "G"]  # both main rows are still written
    # The same state not loaded in this transaction may have rows stored: rewrite them all.
    unknown = _changed(plan_writes([processed(1, bare)], {}))
    assert unknown == {name: (["N"], ["N"]) for name in DETAIL_TABLES}


def test_a_table_emptied_is_deleted_and_a_table_filled_is_not() -> None:
    before = flight("A", 1)  # one gate, nothing else
    after = flight("A", 2, collections=full_collections(1, tag="n"))
    del after.collections["GTDT"]
    changes = _changed(plan_writes([processed(1, after)], {"A": before}))
    assert changes["FLIGHT_GATE"] == (["A"], ["A"])  # rows deleted; the state has none now
    others = {name: ([], ["A"]) for name in DETAIL_TABLES if name != "FLIGHT_GATE"}
    assert {k: v for k, v in changes.items() if k != "FLIGHT_GATE"} == others


def test_cursor_is_the_highest_and_optional() -> None:
    first, second = processed(5, flight("A")), processed(4, flight("B"))
    assert plan_writes([first, second], {}).cursor == 5
    assert plan_writes([attrs.evolve(second, cursor=None)], {}).cursor is None


def test_the_intent_must_belong_to_its_message() -> None:
    message = processed(1, flight("A"))
    check_intent(message)
    check_intent(attrs.evolve(message, backfill=None))
    assert message.backfill is not None
    for wrong in ({"message_id": 2}, {"status": Outcome.DEAD}):
        bad = attrs.evolve(message, backfill=attrs.evolve(message.backfill, **wrong))
        with pytest.raises(PermanentError, match="message 1: backfill intent disagrees"):
            plan_writes([bad], {})


def test_a_bad_state_fails_the_plan_whole() -> None:
    bad = flight("A", collections={"GTDT": ()})
    with pytest.raises(PermanentError, match="A/GTDT: empty collection"):
        plan_writes([processed(1, flight("B")), processed(2, bad)], {})


def test_steps_run_in_write_steps_order() -> None:
    calls: list[str] = []

    class Recorder:
        def flights(self) -> None:
            calls.append("flights")

        def details(self, table: str) -> None:
            calls.append(f"details:{table}")

        def events(self) -> None:
            calls.append("events")

        def procs(self) -> None:
            calls.append("proc")

        def cursor(self, last_message_id: int) -> None:
            calls.append(f"cursor={last_message_id}")

        def snap_log(self) -> None:
            calls.append("snap_log")

    after: list[str] = []
    run_steps(Recorder(), 7, after.append)
    assert tuple(after) == WRITE_STEPS
    assert calls == [step if step != "cursor" else "cursor=7" for step in WRITE_STEPS]
    calls.clear()
    run_steps(Recorder(), None, lambda _step: None)
    assert "cursor" not in " ".join(calls)  # no cursor in the batch: INBOX_CURSOR untouched


def test_payloads_snap_texts_gaps_and_late_rows() -> None:
    assert payload_text(1, "航班".encode()) == "航班"
    assert payload_text(1, None) is None
    with pytest.raises(PermanentError, match="message 9: payload not UTF-8"):
        payload_text(9, b"\xff")
    snap = SnapLogEntry(1, "DNLD", ("15", "航班"), (date(2021, 1, 23),), 2)
    assert snap_texts(snap) == ('["15","航班"]'.replace(",", ", "), '["2021-01-23"]')
    gap = GapRange(3, 4, SEEN)
    plain = processed(5, flight("A"))
    assert gaps_to_write([gap], [plain]) is None  # unchanged: no rewrite
    opener = attrs.evolve(plain, opens_gaps=(GapRange(6, 6, SEEN),))
    assert gaps_to_write([gap], [opener]) == [gap, GapRange(6, 6, SEEN)]
    late = processed(3, flight("B"))
    late = attrs.evolve(late, proc=attrs.evolve(late.proc, late=True))
    assert gaps_to_write([gap], [late]) == [GapRange(4, 4, SEEN)]
    assert late_ids([plain, late]) == [3]
    assert plan_writes([late], {}).touches_gaps


def test_typed_twins_and_their_memo() -> None:
    typed = TypedValues(ZONE, 70)
    stamp = typed.of("23JAN211015", ValueKind.TIME)
    assert stamp == datetime(2021, 1, 23, 10, 15, tzinfo=ZONE)
    assert typed.of("23JAN211015", ValueKind.TIME) is stamp  # memoised
    assert typed_twin("23JAN211015", ValueKind.TIME, ZONE, 70) == stamp
    for raw in (None, "", "not a time"):
        assert typed.of(raw, ValueKind.TIME) is None
        assert typed_twin(raw, ValueKind.TIME, ZONE, 70) is None
    assert typed_twin("x", ValueKind.TEXT, ZONE, 70) is None


# ---- the lossless guard (its collection cases: tests/pg/test_codec.py)


def test_unknown_codes_are_named() -> None:
    with pytest.raises(PermanentError, match=r"F1: unknown scalar codes \['NOPE'\]"):
        validate(flight("F1", scalars={"NOPE": "x"}))
    with pytest.raises(PermanentError, match=r"F1: unknown document codes \['DOCX'\]"):
        validate(flight("F1", documents={"DOCX": (DocItem((("A", "1"),)),)}))


def test_a_repeated_document_key_is_refused_with_its_place() -> None:
    twice = (DocItem((("SRTC", "A"), ("SRTC", "B"))),)
    with pytest.raises(PermanentError, match=r"F1/SRVT\[1\]: key 'SRTC' twice"):
        validate(flight("F1", documents={"SRVT": twice}))
    vipt = (DocItem((("VSCD", "x"), ("VSCD", "y"))),)
    nested = (DocItem((("VPCD", "1"),)), DocItem((("VIPT", vipt),)))
    with pytest.raises(PermanentError, match=r"F1/VIPF\[2\]/VIPT\[1\]: key 'VSCD' twice"):
        validate(flight("F1", documents={"VIPF": nested}))
    groups = (DocItem((("VIPT", (DocItem((("VSCD", "x"),)), DocItem((("VSCD", "y"),)))),)),)
    validate(flight("F1", documents={"VIPF": groups}))  # repeated nested entries: one array


def test_a_stored_document_is_not_walked_again() -> None:
    twice = (DocItem((("SRTC", "A"), ("SRTC", "B"))),)  # could never have been stored
    stored = flight("F1", documents={"SRVT": twice})
    validate(attrs.evolve(stored, version=2), stored)  # the very same tuple: trusted
    copy = (*twice,)
    assert copy == twice
    assert copy is not twice
    with pytest.raises(PermanentError, match="key 'SRTC' twice"):
        validate(attrs.evolve(stored, documents={"SRVT": copy}), stored)  # changed: walked


# ---- document JSON


def test_documents_round_trip_in_order_and_unescaped() -> None:
    doc = (
        DocItem((("SRTC", ""), ("SRQT", "航"))),
        DocItem((("VPCD", "1"), ("VIPT", (DocItem(()), DocItem((("VSCD", "x"),)))))),
    )
    text = encode_document(doc)
    assert text == '[{"SRTC":"","SRQT":"航"},{"VPCD":"1","VIPT":[{},{"VSCD":"x"}]}]'
    assert decode_document(text) == doc
    assert encode_document(None) is None
    assert decode_document(None) is None


def test_reading_keeps_the_pairs_of_a_stored_text() -> None:
    # Never written by this code (the guard refuses it), but a text that has one is read
    # pair by pair, never collapsed the way jsonb or a dict would.
    assert decode_document('[{"A":"1","A":"2"}]') == (DocItem((("A", "1"), ("A", "2"))),)
    assert json.loads('{"A":"1","A":"2"}') == {"A": "2"}  # what another reader would see


@pytest.mark.parametrize("text", ['{"A":"1"}', '["A"]', '[{"A":1}]', '[{"A":["x"]}]'])
def test_a_stored_text_of_another_shape_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="document"):
        decode_document(text)
