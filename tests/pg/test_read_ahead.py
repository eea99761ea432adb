"""The unit's first reads in one round trip (``flightstate_pg._read_ahead``): each answer is
the one a plain call gives, it is given once and only for the question read, and nothing
read ahead survives the transaction's first write."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.records import InboxRow
from flightstate_core.engine import service
from flightstate_core.testing.store_contract import flight, processed
from flightstate_pg import PgStore
from flightstate_pg._read_ahead import UnitReads
from flightstate_pg.transaction import PgTransaction
from flightstate_testing.sis import flop

CONFIG = CoreConfig()
NOW = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def _reads() -> UnitReads:
    return UnitReads(
        procs=(frozenset({1, 2, 3}), {2}),
        duplicates=(frozenset({("k1", "d1"), ("k2", "d2")}), {("k1", "d1"): [(7, NOW)]}),
        codeshares=(frozenset({"M1", "M2"}), [("C1", "M1"), ("C2", "M2")]),
        floors=(frozenset({"F1", "F2"}), {"F1": 4}),
        stamps=[],
    )


def test_answers_are_for_the_question_read_or_a_narrower_one() -> None:
    reads = _reads()
    assert reads.take_procs([2, 3]) == {2}
    assert reads.take_duplicates([("k2", "d2")]) == {}
    assert reads.take_codeshares(["M2"]) == ["C2"]
    assert reads.take_floors(["F1"]) == {"F1": 4}


def test_a_wider_question_is_not_answered() -> None:
    reads = _reads()
    assert reads.take_procs([2, 4]) is None
    assert reads.take_duplicates([("k3", "d3")]) is None
    assert reads.take_codeshares(["M3"]) is None
    assert reads.take_floors(["F3"]) is None


def test_each_answer_is_given_once() -> None:
    reads = _reads()
    assert reads.take_procs([1]) == set()
    assert reads.take_procs([1]) is None
    assert reads.take_codeshares(["M1"]) == ["C1"]
    assert reads.take_codeshares(["M1"]) is None


# --------------------------------------------------------------------------- PostgreSQL


@pytest.fixture
def store(fresh_pg: str) -> Iterator[PgStore]:
    store = PgStore(fresh_pg, CONFIG)
    for n, flid in enumerate(["F1", "F2"], start=1):
        raw = flop("STND", f"<STND>S{n}</STND>", flid, seqn=str(n), dttm="20261130090000")
        assert service.process_message(store, InboxRow(n, raw), CONFIG, now=NOW, epoch=None)
    yield store
    store.close()


def _answers(tx: PgTransaction) -> tuple[object, ...]:
    return (tx.get_procs([1, 2, 3]), tx.load_flights(["F1", "F2", "NEW"]),
            tx.load_codeshares(["F1", "NEW"]), tx.version_floors(["NEW"]))  # fmt: skip


@pytest.mark.pg
def test_read_ahead_answers_as_the_plain_calls_do(store: PgStore) -> None:
    with store.transaction() as tx:
        tx.lock_pipeline(None)
        plain = _answers(tx)
    with store.transaction() as tx:
        tx.lock_pipeline(None)
        tx.read_ahead([1, 2, 3], [], ["F1", "F2", "NEW"], ["F1", "NEW"])
        ahead = _answers(tx)
    assert ahead == plain
    assert plain[0] == {1, 2}
    assert set(plain[1]) == {"F1", "F2"}  # type: ignore[arg-type]


@pytest.mark.pg
def test_nothing_read_ahead_is_used_after_a_write(store: PgStore) -> None:
    """Message 9 is saved after the read ahead (which found no PROC_STATE row for it):
    asking for it afterwards must see the row the write made."""
    with store.transaction() as tx:
        tx.lock_pipeline(None)
        tx.read_ahead([9], [], ["A"], ["A"])
        tx.save(processed(9, flight("A")))
        assert tx.get_procs([9]) == {9}
        assert set(tx.load_flights(["A"])) == {"A"}
