"""``SisBuilder``: every message family decodes and has the effect the protocol gives it,
through the real pump and the memory store (``pump_until_idle``)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from flightstate_core.domain import catalog
from flightstate_core.domain.decision import Outcome
from flightstate_core.domain.state import FlightStatus
from flightstate_core.memory import MemoryInbox, MemoryStore
from flightstate_testing import BROKEN_KINDS, SisBuilder, pump_until_idle

# One builder call per FLOP subtype family (flight 1 exists; flight 2 is a master).
FAMILIES: dict[str, Callable[[SisBuilder], str]] = {
    "scalar time": lambda b: b.scalars(1, "ESTT", ESTT=b.when(1, 15)),
    "scalar text": lambda b: b.scalars(1, "REMC", REMC="延误 备注"),
    "scalar clear": lambda b: b.scalars(1, "ACFT", ACFT=None),
    "group": lambda b: b.scalars(1, "EXSS", EXSC="DLY", EXSR="天气"),
    "exception": lambda b: b.exception(1, "FDIV", "天气", DDES="PEK", DDIR="TO"),
    "port": lambda b: b.port(1, "O", b.when(1, -5)),
    "codeshare": lambda b: b.codeshare(1, 2),
    "collection": lambda b: b.collection(1, "GTDT", [{"GATE": "G7", "GTYP": "D"}]),
    "collection with attributes": lambda b: b.collection(
        1, "DELY", [{"CODE": "93", "DURA": "0130", "DLTX": "流量控制"}]
    ),
    "merged collection": lambda b: b.collection(1, "CHOT", [{"CHID": "3", "CHST": "ON"}]),
    "document": lambda b: b.document(1, "SRVT", [{"SRTC": "WCH", "SRQT": "2"}]),
    "nested document": lambda b: b.document(
        1, "VIPF", [{"VPCD": "V1", "VIPT": [{"VSCD": "A", "VTQY": "2"}]}]
    ),
    "stand update": lambda b: b.stand_update(1, "PSHT", "501", PSTM=b.when(1, 1), PSID="T9"),
    "tractor update": lambda b: b.stand_update(1, "TIPT", "501", TRTM=b.when(1, 3)),
}


def _pump(*raws: str) -> tuple[MemoryStore, dict[int, Outcome], dict[int, str | None]]:
    store, inbox = MemoryStore(), MemoryInbox()
    for raw in raws:
        inbox.append(raw)
    run = pump_until_idle(store, inbox)
    assert sorted(inbox.backfilled) == sorted(inbox.rows)  # the pump wrote every outcome back
    return store, run.outcomes, run.reasons


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_flop_family_applies_to_the_flight(family: str) -> None:
    sis = SisBuilder()
    flop = FAMILIES[family](sis)
    store, outcomes, reasons = _pump(sis.schedule("DNLD", [1, 2]), flop)
    assert outcomes == {1: Outcome.SUCCEEDED, 2: Outcome.SUCCEEDED}, reasons
    flight = store.flights()["1"]
    assert flight.version == 2  # the FLOP changed the flight (a no-op would not bump it)
    assert flight.last_message_id == 2


def test_scalar_values_land_as_sent() -> None:
    sis = SisBuilder()
    store, outcomes, _ = _pump(
        sis.schedule("DNLD", [1, 2]),
        sis.scalars(1, "REMC", REMC="延误 备注"),
        sis.exception(1, "FDIV", "天气", DDES="PEK", DDIR="TO"),
        sis.codeshare(1, 2),
        sis.stand_update(1, "PSHT", "501", PSTM=sis.when(1, 1), PSID="T9", seq="4"),
    )
    assert set(outcomes.values()) == {Outcome.SUCCEEDED}
    flight = store.flights()["1"]
    assert flight.scalars["REMC"] == "延误 备注"
    assert (flight.scalars["FDIV_TEXT"], flight.scalars["FDIV_DDES"]) == ("天气", "PEK")
    assert flight.scalars["MAID"] == "2"
    assert [dict(item.values)["PSID"] for item in flight.collections["PSDT"]] == ["T9"]
    assert [dict(d.values)["FLID"] for d in store.flights()["2"].documents["MAFL"]] == ["1"]


@pytest.mark.parametrize("styp", ["DNLD", "RESP", "ADFT", "ADD", "UPD"])
def test_schedule_messages_create_flights(styp: str) -> None:
    store, outcomes, reasons = _pump(SisBuilder().schedule(styp, [5, 6]))
    assert outcomes == {1: Outcome.SUCCEEDED}, reasons
    assert sorted(store.flights()) == ["5", "6"]


@pytest.mark.parametrize("delete", ["schedule_delete", "delete"])
def test_deletes_end_the_flight(delete: str) -> None:
    sis = SisBuilder()
    store, outcomes, _ = _pump(sis.schedule("DNLD", [1]), getattr(sis, delete)(1))
    assert outcomes[2] is Outcome.SUCCEEDED
    assert store.flights()["1"].status is FlightStatus.DELETED


def test_reference_data_and_schs_are_ignored() -> None:
    sis = SisBuilder()
    raws = [sis.reference(type_) for type_ in sorted(catalog.REFERENCE_DATA_TYPES)]
    store, outcomes, _ = _pump(*raws, sis.schs())
    assert set(outcomes.values()) == {Outcome.IGNORED}
    assert len(outcomes) == len(catalog.REFERENCE_DATA_TYPES) + 1
    assert store.flights() == {}


@pytest.mark.parametrize("kind", BROKEN_KINDS)
def test_broken_messages_are_dead_with_a_reason(kind: str) -> None:
    _, outcomes, reasons = _pump(SisBuilder().broken(kind))
    assert outcomes == {1: Outcome.DEAD}
    assert reasons[1]


def test_same_seed_same_bytes_and_bad_arguments_are_named() -> None:
    assert SisBuilder(3).schedule("DNLD", [1]) == SisBuilder(3).schedule("DNLD", [1])
    sis = SisBuilder()
    with pytest.raises(ValueError, match="EXSS"):
        sis.scalars(1, "EXSS", ESTT="x")
    with pytest.raises(ValueError, match="no child"):
        sis.collection(1, "GTDT", [{"BELT": "1"}])
    with pytest.raises(ValueError, match="DEL"):
        sis.schedule("DEL", [1])
    with pytest.raises(ValueError, match="kind"):
        sis.broken("nope")
