"""service.py over the in-memory reference store: one message, one transaction."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import date, datetime, timedelta
from typing import Any

import pytest
from attrs import evolve

from flightstate_core.domain.decision import Outcome
from flightstate_core.domain.errors import LeadershipLost, ProtocolError
from flightstate_core.domain.records import InboxRow, ProcessedMessage
from flightstate_core.domain.values import Set
from flightstate_core.engine import service
from flightstate_core.engine.service import (
    MEDIUMINT_MAX,
    Undecodable,
    process_batch,
    process_message,
    record_dead,
)
from flightstate_core.memory import MemoryStore, MemoryTransaction
from flightstate_testing.models import envelope, flop, record, schedule
from tests.fixtures.corpus import corpus_file

from .helpers import CONFIG, NOW, check_events


def row(mid: int, raw: str = "<MSG/>") -> InboxRow:
    return InboxRow(mid, raw, NOW)


def process(store: MemoryStore, mid: int, message: Any, **kw: Any) -> ProcessedMessage | None:
    result = process_message(store, row(mid), CONFIG, now=NOW, epoch=None, decoded=message, **kw)
    if result is not None:
        check_events(result.events, result.states)
    return result


def decoded_ahead(rows: list[InboxRow], messages: dict[int, Any]) -> service.PreparedRows:
    """The rows with their decoding done ahead (as the pump's ``prepare`` would)."""
    return service.PreparedRows(rows, {r.message_id: (r.raw, messages[r.message_id]) for r in rows})


STND = flop("STND", record("9", {"STND": Set("1")}), seqn="77")


def test_success_writes_everything() -> None:
    store = MemoryStore()
    result = process(store, 5, STND)
    assert result is not None
    assert result.proc.status is Outcome.SUCCEEDED
    assert store.flights()["9"].scalars == {"STND": "1"}
    assert store.inbox_cursor() == 5
    proc = store.proc(5)
    assert proc is not None
    assert proc.identity_key == "AODB|FLOP|STND|77"
    assert [e.topic for e in store.events()] == ["schd", "msg"]
    intent = store.pending_backfills(10)[0]
    assert (intent.message_id, intent.status, intent.subsystem_sequence) == (
        5,
        Outcome.SUCCEEDED,
        77,
    )
    assert intent.subsystem_date_sent == datetime(2021, 1, 23, 8, 0)
    assert (intent.subsystem_name, intent.subsystem_type, intent.subsystem_subtype) == (
        "AODB",
        "FLOP",
        "STND",
    )


def test_replay_of_same_row_applies_nothing() -> None:
    store = MemoryStore()
    process(store, 5, STND)
    events, flights = store.events(), store.flights()
    assert process(store, 5, flop("STND", record("9", {"STND": Set("2")}))) is None
    assert store.events() == events
    assert store.flights() == flights


def test_business_duplicate_within_window() -> None:
    store = MemoryStore()
    process(store, 5, STND)
    dup = process(store, 6, STND)
    assert dup is not None
    assert dup.proc.status is Outcome.DUPLICATE
    assert not dup.events
    assert "5" in (dup.proc.reason or "")
    assert store.flights()["9"].version == 1
    other = process(store, 7, flop("STND", record("9", {"STND": Set("2")}), seqn="77"))
    assert other is not None
    assert other.proc.status is Outcome.SUCCEEDED


@pytest.mark.parametrize("shift", [timedelta(minutes=1), -timedelta(days=3)])
def test_same_text_with_another_dttm_is_not_a_duplicate(shift: timedelta) -> None:
    """A duplicate is this very message re-sent: another send time, later or earlier, is
    another message (was: a window by DTTM, one-sided, 24 h)."""
    store = MemoryStore()
    process(store, 5, STND)
    assert STND.envelope.dttm is not None
    other = evolve(STND, envelope=evolve(STND.envelope, dttm=STND.envelope.dttm + shift))
    result = process(store, 6, other)
    assert result is not None
    assert result.proc.status is Outcome.SUCCEEDED
    assert not result.states  # same content: nothing changed, but not called a duplicate


@pytest.mark.parametrize(
    ("seqn", "expected"), [("1243", 1243), ("x1", None), (str(MEDIUMINT_MAX + 1), None)]
)
def test_backfill_sequence(seqn: str, expected: int | None) -> None:
    store = MemoryStore()
    result = process(store, 1, flop("STND", record("9", {"STND": Set("1")}), seqn=seqn))
    assert result is not None
    assert result.backfill is not None
    assert result.backfill.subsystem_sequence == expected


def test_undecodable_is_dead_with_envelope_from_corpus() -> None:
    store = MemoryStore()
    raw = corpus_file("FLOP_TOBT_01.xml").read_text(encoding="utf-8")
    result = process_message(store, row(3, raw), CONFIG, now=NOW, epoch=None)
    assert result is not None
    assert result.proc.status is Outcome.DEAD
    assert "TOBT" in (result.proc.reason or "")
    assert store.inbox_cursor() == 3
    assert result.backfill is not None
    assert result.backfill.subsystem_sequence == 1243
    assert not store.flights()
    assert not store.events()


def test_not_well_formed_is_dead() -> None:
    store = MemoryStore()
    raw = corpus_file("ABNR_ADD_01.xml").read_text(encoding="utf-8")
    result = process_message(store, row(3, raw), CONFIG, now=NOW, epoch=None)
    assert result is not None
    assert result.proc.status is Outcome.DEAD
    assert result.backfill is not None
    assert result.backfill.status is Outcome.DEAD


def test_protocol_error_passed_in_is_dead() -> None:
    result = process(MemoryStore(), 3, ProtocolError("/MSG", "broken"))
    assert result is not None
    assert result.proc.status is Outcome.DEAD
    assert result.proc.type is None


def test_package_writes_snap_log() -> None:
    store = MemoryStore()
    package = schedule("DNLD", record("A", {"SODT": Set("23JAN210535")}), record("B"))
    process(store, 1, package)
    (entry,) = store.snap_log()
    assert (entry.flids, entry.operation_days, entry.record_count) == (
        ("A", "B"),
        (date(2021, 1, 23),),
        2,
    )


def test_stale_epoch_writes_nothing() -> None:
    store = MemoryStore()
    assert store.try_acquire("a", 10) == 1
    store.release("a")
    assert store.try_acquire("b", 10) == 2
    with pytest.raises(LeadershipLost):
        process_message(store, row(1), CONFIG, now=NOW, epoch=1, decoded=STND)
    assert store.proc(1) is None
    assert store.inbox_cursor() is None


class FailingStore(MemoryStore):
    """Fault injection: a save (``save_many``, the batch path) of one message id raises after
    writing."""

    def __init__(self, fail_id: int) -> None:
        super().__init__()
        self.fail_id = fail_id

    @contextmanager
    def transaction(self) -> Iterator[MemoryTransaction]:
        with super().transaction() as tx:
            original = tx.save_many  # ``save`` writes through it too

            def save_many(batch: Sequence[ProcessedMessage]) -> None:
                original(batch)
                if any(p.proc.message_id == self.fail_id for p in batch):
                    raise RuntimeError("disk full")

            tx.save_many = save_many  # type: ignore[method-assign]
            yield tx


def test_batch_write_failure_commits_nothing_and_raises() -> None:
    """The batch is written once: if that write fails, no message of it commits (the
    pump then retries one message at a time, so only the failing one is affected)."""
    store = FailingStore(fail_id=2)
    rows = [row(1), row(2), row(3)]
    messages = {
        1: STND,
        2: flop("RUNW", record("9", {"RUNW": Set("R")})),
        3: flop("TRML", record("9", {"TRML": Set("T")})),
    }
    with pytest.raises(RuntimeError, match="disk full"):
        process_batch(store, decoded_ahead(rows, messages), CONFIG, now=NOW, epoch=None)
    assert [store.proc(i) for i in (1, 2, 3)] == [None, None, None]
    assert "9" not in store.flights()
    # one at a time: message 1 commits, message 2 fails alone, message 3 waits
    assert process_message(store, rows[0], CONFIG, now=NOW, epoch=None,
                           decoded=messages[1]) is not None  # fmt: skip
    with pytest.raises(RuntimeError, match="disk full"):
        process_message(store, rows[1], CONFIG, now=NOW, epoch=None, decoded=messages[2])
    assert store.proc(1) is not None
    assert store.proc(2) is None
    assert store.flights()["9"].scalars == {"STND": "1"}
    assert store.inbox_cursor() == 1


def test_batch_decide_failure_commits_earlier_and_raises(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A message whose deciding raises: the ones before it commit, it and later ones wait."""
    import flightstate_core.engine.unit_of_work as engine  # noqa: PLC0415

    store = MemoryStore()
    rows = [row(1), row(2), row(3)]
    messages = {
        1: STND,
        2: flop("RUNW", record("9", {"RUNW": Set("R")})),
        3: flop("TRML", record("9", {"TRML": Set("T")})),
    }
    real_decide = engine.decide

    def decide(current, message, config, ctx):  # type: ignore[no-untyped-def]
        if ctx.message_id == 2:
            raise RuntimeError("handler bug")
        return real_decide(current, message, config, ctx)

    monkeypatch.setattr(engine, "decide", decide)
    with pytest.raises(RuntimeError, match="handler bug") as info:
        process_batch(store, decoded_ahead(rows, messages), CONFIG, now=NOW, epoch=None)
    assert any("failed at message 2" in n for n in info.value.__notes__)
    assert store.proc(1) is not None
    assert store.proc(2) is None
    assert store.proc(3) is None
    assert store.flights()["9"].scalars == {"STND": "1"}
    assert store.inbox_cursor() == 1


def test_batch_processes_in_order_and_skips_replays() -> None:
    store = MemoryStore()
    raws = [
        corpus_file(n).read_text(encoding="utf-8")
        for n in ("SCHD_DNLD_01.xml", "FLOP_FDEL_01.xml", "AIRL_ADD_01.xml")
    ]
    rows = [row(i, raw) for i, raw in enumerate(raws, 1)]
    first = process_batch(store, rows, CONFIG, now=NOW, epoch=None)
    assert [p.proc.status for p in first] == [Outcome.SUCCEEDED, Outcome.SUCCEEDED, Outcome.IGNORED]
    assert store.flights()["15"].is_deleted
    assert store.flights()["15"].version == 2
    assert process_batch(store, rows, CONFIG, now=NOW, epoch=None) == []


def test_record_dead() -> None:
    store = MemoryStore()
    dead = record_dead(store, row(4, "<MSG>"), "boom x3", CONFIG, now=NOW, epoch=None, attempts=3)
    assert dead is not None
    assert dead.proc.status is Outcome.DEAD
    assert dead.proc.attempts == 3
    assert store.inbox_cursor() == 4
    assert store.proc(4) is not None
    assert record_dead(store, row(4), "again", CONFIG, now=NOW, epoch=None, attempts=4) is None


def test_undecodable_keeps_envelope() -> None:
    undecodable = Undecodable(ProtocolError("/MSG/FLOP", "bad"), envelope("FLOP", "STND", "9"))
    result = process(MemoryStore(), 1, undecodable)
    assert result is not None
    assert result.proc.identity_key == "AODB|FLOP|STND|9"


def test_notes_become_the_reason_of_a_success() -> None:
    store = MemoryStore()
    fdel = process(store, 1, flop("FDEL", record("9", delete=True)))
    assert fdel is not None
    assert "unknown" in (fdel.proc.reason or "")
    process(store, 2, STND)
    process(store, 3, flop("FDEL", record("9", delete=True), seqn="3"))
    result = process(store, 4, flop("STND", record("9", {"STND": Set("2")}), seqn="4"))
    assert result is not None
    assert result.proc.status is Outcome.SUCCEEDED
    assert "DELETED" in (result.proc.reason or "")
    assert not result.states
    assert store.flights()["9"].scalars == {"STND": "1"}
