"""The row codec's lossless guard (pure: no server): what the tables cannot hold is refused
with the element named, and collections already stored are not walked again."""

from __future__ import annotations

import attrs
import pytest

from flightstate_core.domain.errors import PermanentError
from flightstate_core.domain.items import Item
from flightstate_core.testing.store_contract import flight, full_collections
from flightstate_pg._rows import validate

GOOD = full_collections(3)


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"scalars": {"NOPE": "x"}}, "unknown scalar codes ['NOPE']"),
        ({"collections": {"ZZZZ": GOOD["GTDT"]}}, "unknown collection 'ZZZZ'"),
        ({"collections": {"GTDT": ()}}, "GTDT: empty collection"),
        ({"collections": {"GTDT": (Item.of(2, "1", {"GATE": "G1"}),)}}, "GTDT: ordinal 2"),
        (
            {"collections": {"GTDT": (Item(1, "1", (("PGOT", "x"), ("GATE", "G1"))),)}},
            "GTDT[1]: child 'GATE' unknown or out of catalog order",
        ),
        ({"documents": {"VIPF": ()}}, "VIPF: empty document"),
    ],
)
def test_states_the_tables_cannot_hold_are_refused(changes: dict[str, object], named: str) -> None:
    with pytest.raises(PermanentError, match=named.replace("[", r"\[").replace("]", r"\]")):
        validate(flight("F1", **changes))


def test_only_collections_changed_since_stored_are_walked() -> None:
    # A tuple the store already holds is trusted by identity: this one could never have
    # been stored, which is how the test can tell that it was not walked again.
    unstorable = (Item.of(5, "1", {"GATE": "G1"}),)
    stored = flight("F1", collections={**GOOD, "GTDT": unstorable})
    changed = attrs.evolve(stored, collections={**stored.collections, "CKDT": GOOD["CKDT"][:1]})
    validate(changed, stored)  # GTDT is the stored tuple itself: not walked
    broken = attrs.evolve(stored, collections={**stored.collections, "CKDT": ()})
    with pytest.raises(PermanentError, match="CKDT: empty collection"):
        validate(broken, stored)  # a changed collection is always checked
    with pytest.raises(PermanentError, match="GTDT: ordinal 5"):
        validate(changed)  # nothing stored: everything is walked
    rebuilt = attrs.evolve(changed, collections={**changed.collections, "GTDT": unstorable[:]})
    assert rebuilt.collections["GTDT"] is unstorable  # tuple[:] is the same tuple
    copy = (*unstorable,)
    assert copy == unstorable
    assert copy is not unstorable
    equal_copy = attrs.evolve(changed, collections={**changed.collections, "GTDT": copy})
    validate(equal_copy, stored)  # equal to what is stored: its items were checked then


def test_an_append_walks_only_the_items_after_the_stored_ones() -> None:
    # The stored GTDT could never have been stored (ordinal 5 first): a new state that
    # keeps it as a prefix is refused only for what it adds, so the test can tell which
    # items were walked.
    unstorable = (Item.of(5, "1", {"GATE": "G1"}),)
    stored = flight("F1", collections={"GTDT": unstorable})

    def with_gates(items: tuple[Item, ...]) -> object:
        return attrs.evolve(stored, collections={"GTDT": items})

    validate(with_gates((*unstorable, Item.of(2, "2", {"GATE": "G2"}))), stored)
    with pytest.raises(PermanentError, match="GTDT: ordinal 7 at position 2"):
        validate(with_gates((*unstorable, Item.of(7, "2", {"GATE": "G2"}))), stored)
    appended = (Item.of(2, "2", {"GATE": "G2"}), Item(3, "3", (("PGOT", "x"), ("GATE", "G"))))
    with pytest.raises(PermanentError, match=r"GTDT\[3\]: child 'GATE' unknown or out of"):
        validate(with_gates((*unstorable, *appended)), stored)
    changed_prefix = (Item.of(5, "1", {"GATE": "G9"}), Item.of(2, "2", {"GATE": "G2"}))
    with pytest.raises(PermanentError, match="GTDT: ordinal 5 at position 1"):
        validate(with_gates(changed_prefix), stored)  # the stored items changed: all walked
