"""The core's decision does not depend on the order in which a store hands states over
(the one-by-one path and the batch engine build the ``current`` mapping differently)."""

from __future__ import annotations

import itertools

from flightstate_testing.models import flop, record

from .helpers import flight, run


def _delete_master() -> object:
    return flop("FDEL", record("M", delete=True))


def test_master_delete_cascade_is_the_same_in_every_order() -> None:
    master = flight("M")
    codeshares = [flight(f, MAID="M", CSOP="MU", CSFT=f"MU{f}") for f in ("290", "138", "77")]
    outcomes = set()
    for order in itertools.permutations([master, *codeshares]):
        current = {state.flid: state for state in order}
        decision = run(current, _delete_master())  # type: ignore[arg-type]
        outcomes.add((decision.reason, decision.notes, decision.events, tuple(decision.states)))
    assert len(outcomes) == 1
    ((_reason, notes, events, flids),) = outcomes
    assert notes == tuple(f"codeshare {f} deleted with its master M" for f in ("138", "290", "77"))
    assert flids == ("M", "138", "290", "77")  # master first, then its codeshares sorted
    assert [e.key for e in events if e.topic == "schd"] == ["M", "138", "290", "77"]
