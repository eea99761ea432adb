"""The real-world samples (shared/sis-corpus) through decode -> decide, and through the
service on the memory store as one inbox (docs/protocol.md §10 quirks are rows of the table)."""

from __future__ import annotations

import json
from datetime import date

import pytest

from flightstate_core.domain.codec import decode
from flightstate_core.domain.decision import Outcome
from flightstate_core.domain.errors import ProtocolError
from flightstate_core.domain.records import InboxRow
from flightstate_core.engine.service import process_message
from flightstate_core.memory import MemoryStore
from tests.fixtures.corpus import CORPUS_DIR, corpus_file, read_index

from .helpers import CONFIG, NOW, check_events, run

FILES = [row["file"] for row in read_index()]
DECODE_DEAD = {
    "ABNR_ADD_01.xml",
    "FLOP_TOBT_01.xml",
    "FLOP_FDIV_03.xml",
    "FLOP_FDIV_04.xml",
}
#: Stand updates need a stand-plan item with a matching PSST: DEAD on an empty store.
NO_STAND = {"FLOP_PSHT_01.xml", "FLOP_TIPT_01.xml"}


def expected(name: str) -> Outcome:
    if name in DECODE_DEAD or name in NO_STAND:
        return Outcome.DEAD
    if name.startswith(("FLOP_", "SCHD_")):
        return Outcome.SUCCEEDED
    return Outcome.IGNORED


def test_corpus_is_there() -> None:
    assert len(FILES) == 172
    assert (CORPUS_DIR / "SCHD_DNLD_01.xml").exists()


@pytest.mark.parametrize("name", FILES)
def test_each_sample_alone(name: str) -> None:
    raw = corpus_file(name).read_text(encoding="utf-8")
    try:
        message = decode(raw, CONFIG)
    except ProtocolError:
        assert name in DECODE_DEAD
        return
    assert name not in DECODE_DEAD
    decision = run({}, message)
    assert decision.outcome is expected(name), decision.reason
    if decision.outcome is Outcome.SUCCEEDED and not name.endswith("FDEL_01.xml"):
        assert decision.states
        assert all(s.version == 1 for s in decision.states.values())


def test_dnld_sample_state() -> None:
    message = decode(corpus_file("SCHD_DNLD_01.xml").read_text(encoding="utf-8"), CONFIG)
    decision = run({}, message)
    fifteen = decision.states["15"]
    assert fifteen.operation_day == date(2021, 1, 23)
    assert fifteen.scalars["TAID"] == "16"
    assert decision.states["16"].scalars["TAID"] == "15"
    assert [i.get("APCD") for i in fifteen.collections["ERUT"]] == ["CTU", "XIY"]
    assert [i.get("APCD") for i in fifteen.collections["ROUT"]] == ["XIY"]
    body = json.loads(
        next(
            e.payload for e in decision.events if e.key == "15" and e.payload and e.topic == "schd"
        )
        or b""
    )
    assert body["SODT_TS"] == "2021-01-23T05:35:00+08:00"
    assert body["ERUT"][1]["seq"] == "2"


def test_corpus_as_one_inbox() -> None:
    store = MemoryStore()
    order = [
        "SCHD_DNLD_01.xml",
        "FLOP_PSDT_01.xml",
        *[
            f
            for f in FILES
            if f not in {"SCHD_DNLD_01.xml", "FLOP_PSDT_01.xml", "FLOP_FDEL_01.xml"}
        ],
        "FLOP_FDEL_01.xml",
    ]
    outcomes: dict[str, Outcome] = {}
    for mid, name in enumerate(order, 1):
        raw = corpus_file(name).read_text(encoding="utf-8")
        result = process_message(store, InboxRow(mid, raw, NOW), CONFIG, now=NOW, epoch=None)
        assert result is not None
        check_events(result.events, result.states)
        outcomes[name] = result.proc.status
    assert store.inbox_cursor() == len(order)
    flights = store.flights()
    assert flights["15"].is_deleted
    assert not flights["16"].is_deleted
    assert flights["15"].operation_day == date(2021, 1, 23)
    assert outcomes["FLOP_PSHT_01.xml"] is Outcome.DEAD  # PUST 504 is not a planned stand
    assert outcomes["ABNR_ADD_01.xml"] is Outcome.DEAD
    assert outcomes["AIRL_ADD_01.xml"] is Outcome.IGNORED
    # SEQN 1243 is reused by most samples with different content: never a duplicate here
    assert Outcome.DUPLICATE not in outcomes.values()
    versions = [s.version for s in flights.values()]
    assert all(v >= 1 for v in versions)
    assert flights["121112312"].version > 10
