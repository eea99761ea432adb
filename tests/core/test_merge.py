"""merge.py: unit cases and Hypothesis laws of the merge algebra."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from flightstate_core.domain.items import Item
from flightstate_core.domain.merge import (
    MergeBySeq,
    Replace,
    apply_collection,
    apply_scalar,
    merge_by_seq,
)
from flightstate_core.domain.values import CLEAR, UNCHANGED, Set

LAWS = settings(max_examples=150, deadline=None)

raws = st.one_of(st.none(), st.text(max_size=3))
set_ops = st.text(max_size=3).map(Set)
seq_values = st.sampled_from([None, "", "0", "1", "2", "3"])
items_st = st.lists(
    st.builds(
        lambda s, v: Item(0, s, (("V", v),)), seq_values, st.text(alphabet="abc", max_size=2)
    ),
    max_size=6,
).map(lambda xs: tuple(Item(i, x.seq, x.values) for i, x in enumerate(xs, 1)))
stored_st = items_st.map(lambda xs: xs or None)
coll_ops = st.one_of(
    st.just(UNCHANGED), st.just(CLEAR), items_st.map(Replace), items_st.map(MergeBySeq)
)


def it(ordinal: int, seq: str | None, value: str) -> Item:
    return Item(ordinal, seq, (("V", value),))


def values(items: tuple[Item, ...] | None) -> list[tuple[str | None, str | None]]:
    return [(i.seq, i.get("V")) for i in items or ()]


def test_merge_by_seq_positions_and_extras() -> None:
    stored = (it(1, "1", "a"), it(2, "2", "b"), it(3, "1", "c"), it(4, "3", "d"))
    incoming = (it(1, "1", "x"), it(2, "4", "n"), it(3, "1", "y"))
    result = apply_collection(stored, MergeBySeq(incoming))
    assert values(result) == [("1", "x"), ("1", "y"), ("2", "b"), ("3", "d"), ("4", "n")]
    assert [i.ordinal for i in result or ()] == [1, 2, 3, 4, 5]


def test_merge_by_seq_none_is_a_seq_and_new_seqs_group() -> None:
    stored = (it(1, None, "a"), it(2, "2", "b"))
    incoming = (it(1, "5", "p"), it(2, None, "q"), it(3, "6", "r"), it(4, "5", "s"))
    assert values(merge_by_seq(stored, incoming)) == [
        (None, "q"),
        ("2", "b"),
        ("5", "p"),
        ("5", "s"),
        ("6", "r"),
    ]


def test_replace_keeps_duplicates_and_clear_is_absent() -> None:
    incoming = (it(1, "1", "a"), it(2, "1", "a"))
    assert values(apply_collection(None, Replace(incoming))) == [("1", "a"), ("1", "a")]
    assert apply_collection(incoming, CLEAR) is None
    assert apply_collection(incoming, Replace(())) is None
    assert apply_collection(incoming, UNCHANGED) is incoming


@LAWS
@given(raws, st.one_of(st.just(UNCHANGED), st.just(CLEAR), set_ops))
def test_scalar_unchanged_identity_and_idempotence(current: str | None, op: object) -> None:
    assert apply_scalar(current, UNCHANGED) == current
    once = apply_scalar(current, op)  # type: ignore[arg-type]
    if op is not UNCHANGED:
        assert apply_scalar(once, op) == once  # type: ignore[arg-type]


@LAWS
@given(raws, set_ops)
def test_scalar_clear_then_set_and_set_then_clear(current: str | None, op: Set) -> None:
    assert apply_scalar(apply_scalar(current, CLEAR), op) == apply_scalar(current, op)
    assert apply_scalar(apply_scalar(current, op), CLEAR) == apply_scalar(current, CLEAR)


@LAWS
@given(stored_st, coll_ops)
def test_collection_unchanged_identity_and_idempotence(
    current: tuple[Item, ...] | None, op: object
) -> None:
    assert apply_collection(current, UNCHANGED) == current
    once = apply_collection(current, op)  # type: ignore[arg-type]
    assert apply_collection(once, op) == once  # type: ignore[arg-type]


@LAWS
@given(stored_st, items_st)
def test_collection_clear_then_set_and_set_then_clear(
    current: tuple[Item, ...] | None, items: tuple[Item, ...]
) -> None:
    for op in (Replace(items), MergeBySeq(items)):
        cleared = apply_collection(current, CLEAR)
        assert apply_collection(cleared, op) == apply_collection(None, op)
        assert apply_collection(apply_collection(current, op), CLEAR) is None


@LAWS
@given(stored_st, items_st)
def test_replace_keeps_order_and_duplicates(
    current: tuple[Item, ...] | None, items: tuple[Item, ...]
) -> None:
    result = apply_collection(current, Replace(items))
    assert values(result) == values(items)
    assert [i.ordinal for i in result or ()] == list(range(1, len(items) + 1))


@LAWS
@given(stored_st, items_st)
def test_merge_by_seq_never_loses_unnamed_seqs(
    current: tuple[Item, ...] | None, items: tuple[Item, ...]
) -> None:
    result = values(apply_collection(current, MergeBySeq(items)))
    named = {i.seq for i in items}
    kept = [v for v in values(current) if v[0] not in named]
    assert [v for v in result if v[0] not in named] == kept
    assert Counter(v for v in result if v[0] in named) == Counter(values(items))
    assert len(result) == len(kept) + len(items)
