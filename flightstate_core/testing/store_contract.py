"""The store contract: one pytest class every ``StateStore`` subclasses in a few lines.

A subclass provides the ``store`` fixture (an empty, migrated store whose PIPELINE_LOCK
epoch is 0) and the hooks of ``StoreHooks``. The tests check what the service relies on:
lossless round trips (99 items per collection, "" versus absent, Chinese, 4000-byte text),
rollback at every write step, savepoints, two concurrent writers serialising on the lock,
replay and duplicate detection, fencing, the backfill queue, consistent reads and (through
``GapLedgerContract``) the open inbox gaps. The samples live in ``testing.samples``.
"""

# ruff: noqa: S101, PLR2004, PT012, PT018 - a pytest contract: assert, literal
# expectations; a raises block holds the whole transaction that must fail

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import attrs
import pytest

from flightstate_core.domain.catalog import SCALARS
from flightstate_core.domain.decision import Outcome
from flightstate_core.domain.errors import FlightstateError, LeadershipLost
from flightstate_core.domain.items import DocItem, Item
from flightstate_core.domain.state import FlightStatus
from flightstate_core.testing.gap_ledger_contract import GapLedgerContract
from flightstate_core.testing.samples import (
    CJK,
    NOW,
    EventRow,
    InjectedFault,
    StoreDump,
    child_value,
    event_rows,
    flight,
    full_collections,
    processed,
)
from flightstate_core.testing.store_hooks import EMPTY

__all__ = [
    "NOW",
    "EventRow",
    "InjectedFault",
    "StoreContract",
    "StoreDump",
    "event_rows",
    "flight",
    "full_collections",
    "processed",
]


class StoreContract(GapLedgerContract):
    """Subclass, provide the ``store`` fixture and the hooks; every test then runs."""

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
        scalars = {code: child_value(spec.kind, f"v{code}") for code, spec in SCALARS.items()}
        nested = (DocItem((("VSCD", "a"), ("VTQY", ""))), DocItem((("VSCD", "b"),)))
        documents = {
            "SRVT": (DocItem((("SRTC", "WCHR"), ("SRQT", "2"))), DocItem((("SRTC", ""),))),
            "VIPF": (DocItem((("VPCD", CJK), ("VIPT", nested))),),
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
        state = flight("航班-15", scalars={"REMC": long_text, "EXSR": CJK}, collections={
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
        assert self.dump(store) == EMPTY

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
        assert self.dump(store) == EMPTY
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
