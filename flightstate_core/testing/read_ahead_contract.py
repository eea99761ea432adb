"""The ``UnitReadAhead`` contract: announced reads answer exactly as unannounced ones.

A unit of work announces its first reads together (``read_ahead``) so that a store can
make them in one round trip; the calls that follow must answer as they would have without
it: when asked exactly what was announced, when asked more or less than that, and after the
transaction wrote (what was read ahead no longer holds). A subclass provides the
``StoreHooks`` (the same as ``StoreContract``'s).
"""

# ruff: noqa: S101 - a pytest contract: assert

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Any

import pytest

from flightstate_core.domain.decision import Outcome
from flightstate_core.ports import ArchivedVersions, DuplicateKey, UnitReadAhead
from flightstate_core.testing.samples import NOW, flight, processed
from flightstate_core.testing.store_hooks import StoreHooks

__all__ = ["UnitReadAheadContract"]

_KEY = ("AODB|FLOP|GTDT|1", "d1")
_IDS = (1, 2, 3)
_KEYS = (_KEY, ("AODB|FLOP|GTDT|1", "other"), ("AODB|FLOP|GTDT|2", "d2"))
_FLIDS = ("M1", "F2", "NEW")
_MASTERS = ("M1", "F2")


def _answers(tx: Any, ids: Collection[int], keys: Collection[DuplicateKey],
             flids: Collection[str], masters: Collection[str]) -> tuple[Any, ...]:  # fmt: skip
    """Every read a unit starts with, as the unit asks them."""
    found = tx.find_duplicates(keys)
    pairs = {k: sorted(v, key=lambda p: p[0]) for k, v in found.items() if v}
    states = tx.load_flights(flids)
    absent = sorted(set(flids) - set(states))
    floors = tx.version_floors(absent) if isinstance(tx, ArchivedVersions) and absent else {}
    return tx.get_procs(ids), pairs, states, tx.load_codeshares(masters), floors


class UnitReadAheadContract(StoreHooks):
    """Tests every ``UnitReadAhead`` store passes (subclass and provide the hooks)."""

    @pytest.fixture
    def stored(self, store: Any) -> Any:
        """A master with a codeshare, another flight, a SUCCEEDED and a DEAD message."""
        share = flight("C1", scalars={"MAID": "M1", "CSOP": "MU"})
        assert self.apply(store, processed(1, flight("M1"), share, flight("F2")))
        assert self.apply(store, processed(2, status=Outcome.DEAD, digest="d2"))
        return store

    def truth(self) -> tuple[Any, ...]:
        share = flight("C1", scalars={"MAID": "M1", "CSOP": "MU"})
        pairs: dict[DuplicateKey, list[tuple[int, datetime | None]]] = {_KEY: [(1, NOW)]}
        return {1, 2}, pairs, {"M1": flight("M1"), "F2": flight("F2")}, {"C1": share}, {}

    def test_transactions_read_ahead(self, stored: Any) -> None:
        with stored.transaction() as tx:
            tx.lock_pipeline(0)
            assert isinstance(tx, UnitReadAhead)

    def test_announced_reads_answer_as_unannounced_ones(self, stored: Any) -> None:
        with stored.transaction() as tx:
            tx.lock_pipeline(0)
            plain = _answers(tx, _IDS, _KEYS, _FLIDS, _MASTERS)
        with stored.transaction() as tx:
            tx.lock_pipeline(0)
            tx.read_ahead(_IDS, _KEYS, _FLIDS, _MASTERS)
            announced = _answers(tx, _IDS, _KEYS, _FLIDS, _MASTERS)
        assert announced == plain == self.truth()

    def test_reads_other_than_announced_answer_as_unannounced_ones(self, stored: Any) -> None:
        with stored.transaction() as tx:
            tx.lock_pipeline(0)
            tx.read_ahead([1], [_KEY], ["M1"], ["M1"])
            assert _answers(tx, _IDS, _KEYS, _FLIDS, _MASTERS) == self.truth()
        with stored.transaction() as tx:
            tx.lock_pipeline(0)
            tx.read_ahead(_IDS, _KEYS, _FLIDS, _MASTERS)
            assert tx.get_procs([2]) == {2}
            assert tx.find_duplicates([]) == {}
            assert tx.load_flights(["F2"]) == {"F2": flight("F2")}
            assert tx.load_codeshares(["F2"]) == {}

    def test_reads_after_a_write_see_the_write(self, stored: Any) -> None:
        mine = processed(3, flight("NEW"), flight("C2", scalars={"MAID": "M1"}))
        with stored.transaction() as tx:
            tx.lock_pipeline(0)
            tx.read_ahead(_IDS, _KEYS, _FLIDS, _MASTERS)
            tx.save_many([mine])
            procs, _, states, shares, _ = _answers(tx, _IDS, _KEYS, _FLIDS, _MASTERS)
            assert procs == {1, 2, 3}
            assert states["NEW"] == flight("NEW")
            assert sorted(shares) == ["C1", "C2"]
            pairs = tx.find_duplicates([("AODB|FLOP|GTDT|3", "d3")])
            assert pairs == {("AODB|FLOP|GTDT|3", "d3"): [(3, NOW)]}
