"""The store contract: one pytest class every ``StateStore`` subclasses in a few lines.

A subclass provides the ``store`` fixture (an empty, migrated store whose PIPELINE_LOCK
epoch is 0) and the hooks below: ``dump`` (everything the store persisted, for before /
after comparisons), ``set_epoch`` (what a newer leader does), ``fault_steps`` and
``arm_fault`` (the store's own fault-injection hook between write steps), and optionally
``wait_for_lock_waiter``. The tests check what the service relies on: lossless round trips
(99 items per collection, "" versus absent, Chinese, 4000-byte text), rollback at every write
step, savepoints, two concurrent writers serialising on the lock, replay and duplicate
detection, fencing, the backfill queue and consistent reads.
"""

# ruff: noqa: S101, PLR2004, RUF001, PT012, PT018 - a pytest contract: assert, literal
# expectations, CJK text; a raises block holds the whole transaction that must fail

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any

import attrs
import pytest
from attrs import frozen

from flightstate_core.domain.catalog import COLLECTIONS, SCALARS, ValueKind
from flightstate_core.domain.decision import EventKind, OutboxEvent, Outcome
from flightstate_core.domain.errors import FlightstateError, LeadershipLost
from flightstate_core.domain.items import DocItem, Item
from flightstate_core.domain.records import (
    BackfillIntent,
    GapRange,
    ProcessedMessage,
    ProcRecord,
    SnapLogEntry,
)
from flightstate_core.domain.state import FlightState, FlightStatus

__all__ = ["EventRow", "StoreContract", "StoreDump", "flight", "full_collections", "processed"]

NOW = datetime(2026, 11, 30, 1, 0, tzinfo=UTC)
_TIME_RAW = "23JAN210535"
_CJK = "登机口变更：请旅客前往"


@frozen
class EventRow:
    """One MSG_EVENT row as the contract compares it."""

    topic: str
    key: str
    payload: bytes | None
    flid: str
    state_version: int
    kind: str
    message_id: int | None


@frozen
class StoreDump:
    """Everything a store persisted (a subclass's ``dump`` builds it)."""

    flights: Mapping[str, FlightState]
    events: tuple[EventRow, ...]
    procs: Mapping[int, ProcRecord]
    cursor: int | None
    snap_log: tuple[SnapLogEntry, ...]


# --------------------------------------------------------------------------- samples


def _child_value(kind: ValueKind, text: str) -> str:
    if kind is ValueKind.TIME:
        return _TIME_RAW
    return "0130" if kind is ValueKind.DURATION else text


def full_collections(count: int, tag: str = "") -> dict[str, tuple[Item, ...]]:
    """Every collection with ``count`` items, every child present, repeated resource codes."""
    out: dict[str, tuple[Item, ...]] = {}
    for code, spec in COLLECTIONS.items():
        items = []
        for n in range(1, count + 1):
            values = {c.code: _child_value(c.kind, f"{tag}{c.code}{n % 3}") for c in spec.children}
            seq = None if spec.seq_attr is None else str(n % 7)  # repeated seqs on purpose
            items.append(Item.of(n, seq, values))
        out[code] = tuple(items)
    return out


def flight(flid: str, version: int = 1, **changes: Any) -> FlightState:
    """A small ACTIVE flight; keyword arguments replace fields."""
    base = FlightState(
        flid=flid, status=FlightStatus.ACTIVE, version=version, operation_day=date(2021, 1, 23),
        scalars={"FFID": f"CA-{flid}", "SODT": _TIME_RAW, "REMC": _CJK},
        collections={"GTDT": (Item.of(1, "1", {"GATE": "G28"}),)},
        last_message_id=version, created_at=NOW, updated_at=NOW + timedelta(minutes=version),
    )  # fmt: skip
    return attrs.evolve(base, **changes)


def processed(
    message_id: int, *states: FlightState, status: Outcome = Outcome.SUCCEEDED, **proc: Any
) -> ProcessedMessage:
    """A ProcessedMessage writing these states, a snapshot + notify event each, and the rest."""
    record = ProcRecord(
        message_id=message_id,
        identity_key=proc.pop("identity_key", f"AODB|FLOP|GTDT|{message_id}"),
        payload_digest=proc.pop("digest", f"d{message_id}"), type="FLOP", styp="GTDT",
        status=status, reason=None, attempts=1, received_at=NOW, processed_at=NOW,
        dttm=proc.pop("dttm", NOW),
    )  # fmt: skip
    events: list[OutboxEvent] = []
    for state in states:
        body = None if state.is_deleted else f'{{"flid":"{state.flid}","v":{state.version}}}'
        kind = EventKind.TOMBSTONE if body is None else EventKind.SNAPSHOT
        payload = None if body is None else body.encode()
        events.append(OutboxEvent("schd", state.flid, payload, state.flid, state.version, kind))
        events.append(OutboxEvent("msg", state.flid, f"{_CJK}{state.version}".encode(),
                                  state.flid, state.version, EventKind.NOTIFY))  # fmt: skip
    intent = BackfillIntent(message_id, status, NOW, "AODB", "FLOP", "GTDT", message_id,
                            datetime(2026, 11, 30, 9, 0))  # fmt: skip
    snap = SnapLogEntry(message_id, "DNLD", tuple(s.flid for s in states), (date(2021, 1, 23),),
                        len(states))  # fmt: skip
    return ProcessedMessage(record, {s.flid: s for s in states}, tuple(events), intent,
                            message_id, snap)  # fmt: skip


def event_rows(message: ProcessedMessage) -> list[EventRow]:
    """The MSG_EVENT rows a saved message must have produced."""
    mid = message.proc.message_id
    return [EventRow(e.topic, e.key, e.payload, e.flid, e.state_version, e.kind.value, mid)
            for e in message.events]  # fmt: skip


class InjectedFault(Exception):
    """Raised by a memory-style fault hook."""


# --------------------------------------------------------------------------- contract


class StoreContract:
    """Subclass, provide the ``store`` fixture and the hooks; every test then runs."""

    @pytest.fixture
    def store(self) -> Iterator[Any]:
        raise NotImplementedError("subclass provides an empty, migrated store")

    # ---- hooks a backend implements
    def dump(self, store: Any) -> StoreDump:
        raise NotImplementedError

    def set_epoch(self, store: Any, epoch: int) -> None:
        raise NotImplementedError

    def fault_steps(self, store: Any) -> Sequence[str]:
        raise NotImplementedError

    def arm_fault(self, store: Any, step: str | None) -> None:
        """Make the next save fail at ``step`` (None disarms)."""
        raise NotImplementedError

    def wait_for_lock_waiter(self, store: Any) -> None:
        """Return once another transaction waits for PIPELINE_LOCK (default: a pause)."""
        time.sleep(0.5)

    # ---- helpers
    def apply(self, store: Any, message: ProcessedMessage, epoch: int | None = 0) -> bool:
        """The service's protocol: lock, replay check, load, save. False on a replay."""
        with store.transaction() as tx:
            tx.lock_pipeline(epoch)
            if tx.get_proc(message.proc.message_id) is not None:
                return False
            tx.load_flights(list(message.states))
            tx.save(message)
        return True

    def assert_reads(self, store: Any, *states: FlightState) -> None:
        expected = {s.flid: s for s in states}
        assert store.get_flights([*expected, "NO-SUCH"]) == expected
        with store.transaction() as tx:
            tx.lock_pipeline(None)
            assert tx.load_flights(list(expected)) == expected

    # ---- round trips
    def test_every_collection_99_items(self, store: Any) -> None:
        state = flight("15", collections=full_collections(99))
        message = processed(1, state)
        assert self.apply(store, message)
        self.assert_reads(store, state)
        dump = self.dump(store)
        assert list(dump.events) == event_rows(message)
        assert dump.procs[1] == message.proc
        assert dump.cursor == 1 and dump.snap_log == (message.snap_log,)

    def test_every_scalar_and_document(self, store: Any) -> None:
        scalars = {code: _child_value(spec.kind, f"v{code}") for code, spec in SCALARS.items()}
        nested = (DocItem((("VSCD", "a"), ("VTQY", ""))), DocItem((("VSCD", "b"),)))
        documents = {
            "SRVT": (DocItem((("SRTC", "WCHR"), ("SRQT", "2"))), DocItem((("SRTC", ""),))),
            "VIPF": (DocItem((("VPCD", _CJK), ("VIPT", nested))),),
            "MAFL": (DocItem((("FLID", "16"), ("CSOP", "MU"), ("CSFT", "5001"))),),
        }
        state = flight("15", scalars=scalars, documents=documents, operation_day=None)
        assert self.apply(store, processed(1, state))
        self.assert_reads(store, state)

    def test_provenance_is_stored_with_the_flight(self, store: Any) -> None:
        # docs/design.md, "Late rows and provenance": saved and read back in one piece;
        # a flight without it (as written before it existed) reads as an empty map.
        provenance = {"STND": 9, "FDIV_DDES": 7, "GTDT:1": 8, "GTDT!": 3, "SRVT": 5, "航": 2}
        state = flight("15", provenance=provenance)
        assert self.apply(store, processed(9, state))
        self.assert_reads(store, state)
        assert store.get_flights(["15"])["15"].provenance == provenance
        second = attrs.evolve(state, version=2, scalars={"FFID": "x"}, provenance={})
        assert self.apply(store, processed(10, second))
        self.assert_reads(store, second)

    def test_empty_versus_absent(self, store: Any) -> None:
        items = (Item.of(1, "", {"GATE": ""}), Item.of(2, None, {}), Item.of(3, "0", {"GTYP": " "}))
        state = flight("15", scalars={"FFID": "", "REMC": " "}, collections={
            "GTDT": items,
            "ROUT": (Item.of(1, "1", {"APCD": "PEK", "SADC": ""}),),
            "ERUT": (Item.of(1, "1", {"APCD": ""}),),
            "DELY": (Item.of(1, None, {"CODE": "", "DLTX": ""}),),
        })  # fmt: skip
        assert self.apply(store, processed(1, state))
        self.assert_reads(store, state)
        got = store.get_flights(["15"])["15"]
        assert got.collections["GTDT"][0].seq == "" and got.collections["GTDT"][1].seq is None
        assert "SODT" not in got.scalars and got.scalars["FFID"] == ""

    def test_chinese_and_4000_byte_text(self, store: Any) -> None:
        long_text = ("航" * 1333) + "X"  # 4000 bytes in UTF-8
        assert len(long_text.encode()) == 4000
        state = flight("航班-15", scalars={"REMC": long_text, "EXSR": _CJK}, collections={
            "DELY": (Item.of(1, None, {"CODE": "93", "DLTX": long_text}),),
        }, documents={"SRVT": (DocItem((("SRPR", long_text),)),)})  # fmt: skip
        message = processed(1, state)
        assert self.apply(store, message)
        self.assert_reads(store, state)
        assert list(self.dump(store).events) == event_rows(message)

    def test_update_rewrites_only_what_changed(self, store: Any) -> None:
        first = flight("15", collections=full_collections(3))
        assert self.apply(store, processed(1, first))
        collections = dict(first.collections)
        collections["GTDT"] = (Item.of(1, "2", {"GATE": "G33"}),)
        del collections["ROUT"], collections["CHOT"]
        second = attrs.evolve(first, version=2, collections=collections, scalars={"FFID": "x"})
        assert self.apply(store, processed(2, second))
        self.assert_reads(store, second)

    def test_iter_flights_pages_in_flid_order(self, store: Any) -> None:
        states = [flight(f"F{n:02d}", collections=full_collections(n % 3)) for n in range(7)]
        states = [attrs.evolve(s, collections={k: v for k, v in s.collections.items() if v})
                  for s in states]  # fmt: skip
        assert self.apply(store, processed(1, *reversed(states)))
        assert list(store.iter_flights(page_size=3)) == states

    def test_deleted_flight_and_tombstone(self, store: Any) -> None:
        live = flight("15")
        assert self.apply(store, processed(1, live))
        gone = attrs.evolve(live, version=2, status=FlightStatus.DELETED)
        message = processed(2, gone)
        assert self.apply(store, message)
        self.assert_reads(store, gone)
        assert self.dump(store).events[-2].payload is None

    def test_load_codeshares(self, store: Any) -> None:
        master = flight("M1")
        shares = [flight(f"C{n}", scalars={"MAID": "M1", "CSOP": "MU"}) for n in range(3)]
        other = flight("C9", scalars={"MAID": "M2"})
        assert self.apply(store, processed(1, master, *shares, other))
        with store.transaction() as tx:
            tx.lock_pipeline(0)
            assert tx.load_codeshares(["M1", "NONE"]) == {s.flid: s for s in shares}

    # ---- atomicity
    def test_rollback_at_every_write_step(self, store: Any) -> None:
        base = flight("15", collections=full_collections(2))
        assert self.apply(store, processed(1, base))
        changed = flight("15", version=2, collections=full_collections(3, tag="n"))
        new = flight("16", collections=full_collections(1))
        before = self.dump(store)
        steps = self.fault_steps(store)
        assert steps
        for step in steps:
            self.arm_fault(store, step)
            with pytest.raises((FlightstateError, InjectedFault)):
                self.apply(store, processed(2, changed, new))
            assert self.dump(store) == before, step
        self.arm_fault(store, None)
        assert self.apply(store, processed(2, changed, new))
        self.assert_reads(store, changed, new)

    def test_savepoint_rolls_back_one_message(self, store: Any) -> None:
        one, two = flight("15"), flight("15", version=2, scalars={"FFID": "two"})
        with store.transaction() as tx:
            tx.lock_pipeline(0)
            with tx.savepoint():
                tx.load_flights(["15"])
                tx.save(processed(1, one))
            with pytest.raises(InjectedFault), tx.savepoint():
                tx.save(processed(2, two))
                raise InjectedFault("after save")
            assert tx.load_flights(["15"]) == {"15": one}
            assert tx.get_proc(2) is None
        self.assert_reads(store, one)
        assert sorted(self.dump(store).procs) == [1]

    def test_exception_rolls_back_transaction(self, store: Any) -> None:
        with pytest.raises(InjectedFault), store.transaction() as tx:
            tx.lock_pipeline(0)
            tx.save(processed(1, flight("15")))
            raise InjectedFault("before commit")
        assert self.dump(store) == StoreDump({}, (), {}, None, ())

    # ---- processing identity
    def test_replay_of_succeeded_message_writes_nothing(self, store: Any) -> None:
        message = processed(1, flight("15"))
        assert self.apply(store, message)
        before = self.dump(store)
        assert not self.apply(store, message)
        assert self.dump(store) == before

    def test_saving_a_message_twice_is_refused(self, store: Any) -> None:
        assert self.apply(store, processed(1, flight("15")))
        before = self.dump(store)
        with pytest.raises(FlightstateError), store.transaction() as tx:
            tx.lock_pipeline(0)
            tx.save(processed(1, flight("15", version=2)))
        assert self.dump(store) == before

    def test_find_duplicate(self, store: Any) -> None:
        message = processed(1, flight("15"), identity_key="AODB|FLOP|GTDT|7", digest="abc")
        assert self.apply(store, message)
        assert self.apply(store, processed(2, status=Outcome.DEAD, identity_key="K", digest="z"))
        with store.transaction() as tx:
            tx.lock_pipeline(0)
            # Only this very message: same key, same digest and the same DTTM (design.md
            # "Duplicates"); an earlier or a later DTTM is another message.
            assert tx.find_duplicate("AODB|FLOP|GTDT|7", "abc", NOW) == 1
            assert tx.find_duplicate("AODB|FLOP|GTDT|7", "abd", NOW) is None
            assert tx.find_duplicate("AODB|FLOP|GTDT|7", "abc", NOW + timedelta(minutes=1)) is None
            assert tx.find_duplicate("AODB|FLOP|GTDT|7", "abc", NOW - timedelta(minutes=1)) is None
            assert tx.find_duplicate("K", "z", NOW) is None  # DEAD

    def test_stale_epoch_is_fenced(self, store: Any) -> None:
        self.set_epoch(store, 5)
        with pytest.raises(LeadershipLost), store.transaction() as tx:
            tx.lock_pipeline(4)
            tx.save(processed(1, flight("15")))
        assert self.dump(store) == StoreDump({}, (), {}, None, ())
        assert self.apply(store, processed(1, flight("15")), epoch=5)

    def test_backfill_queue(self, store: Any) -> None:
        for mid in (3, 1, 2):
            assert self.apply(store, processed(mid, flight(f"F{mid}")))
        pending = store.pending_backfills(10)
        assert [i.message_id for i in pending] == [1, 2, 3]
        assert pending[0] == processed(1).backfill
        store.record_backfill_failure([1], "mysql down")
        store.mark_backfilled([1, 2], NOW)
        assert [i.message_id for i in store.pending_backfills(10)] == [3]
        assert {m: p.status for m, p in self.dump(store).procs.items()} == dict.fromkeys(
            (1, 2, 3), Outcome.SUCCEEDED
        )

    # ---- open inbox gaps (GapLedger)
    def test_gaps_are_stored_with_the_message_that_goes_past_them(self, store: Any) -> None:
        gap = GapRange(3, 4, NOW)
        message = attrs.evolve(processed(5, flight("F5")), opens_gaps=(gap,))
        with pytest.raises(RuntimeError), store.transaction() as tx:
            tx.lock_pipeline(0)
            tx.save(message)
            raise RuntimeError("rolled back")
        assert store.inbox_gaps() == []
        assert self.apply(store, message)
        assert store.inbox_gaps() == [gap]

    def test_a_late_message_fills_its_gap_and_is_counted(self, store: Any) -> None:
        wide = GapRange(2, 4, NOW)
        assert self.apply(store, attrs.evolve(processed(5, flight("F5")), opens_gaps=(wide,)))
        late = processed(3, flight("F3"))
        assert self.apply(store, attrs.evolve(late, proc=attrs.evolve(late.proc, late=True)))
        assert store.inbox_gaps() == [GapRange(2, 2, NOW), GapRange(4, 4, NOW)]
        assert store.gap_counters() == (1, 0)
        assert self.dump(store).cursor == 5  # a late row never moves the cursor back
        with store.transaction() as tx:
            tx.lock_pipeline(0)
            found = tx.get_proc(3)
        assert found is not None
        assert found.late

    def test_abandoning_gaps_is_fenced_and_counted(self, store: Any) -> None:
        old, new = GapRange(3, 3, NOW), GapRange(6, 7, NOW + timedelta(hours=2))
        assert self.apply(store, attrs.evolve(processed(8, flight("F8")), opens_gaps=(old, new)))
        assert store.abandon_gaps(NOW + timedelta(hours=1), 0) == [old]
        assert store.inbox_gaps() == [new]
        assert store.gap_counters() == (0, 1)
        self.set_epoch(store, 5)
        with pytest.raises(LeadershipLost):
            store.abandon_gaps(NOW + timedelta(hours=3), 4)
        assert store.inbox_gaps() == [new]

    # ---- concurrency
    def test_two_writers_serialise_on_the_lock(self, store: Any) -> None:
        assert self.apply(store, processed(1, flight("15")))
        seen: dict[str, Any] = {}
        started = threading.Event()

        def second() -> None:
            started.set()
            with store.transaction() as tx:
                tx.lock_pipeline(0)
                current = tx.load_flights(["15"])["15"]
                seen["second"] = current
                nxt = attrs.evolve(current, version=current.version + 1, scalars={"FFID": "B"})
                tx.save(processed(3, nxt))

        worker = threading.Thread(target=second)
        with store.transaction() as tx:
            tx.lock_pipeline(0)
            current = tx.load_flights(["15"])["15"]
            worker.start()
            started.wait()
            self.wait_for_lock_waiter(store)
            first = attrs.evolve(current, version=2, scalars={"FFID": "A"})
            tx.save(processed(2, first))
        worker.join(30)
        assert not worker.is_alive()
        assert seen["second"] == first  # it read after the first commit: serial order
        self.assert_reads(store, attrs.evolve(first, version=3, scalars={"FFID": "B"}))
