"""Collection items and document items: the lossless shape shared by messages and state.

An item keeps its position (``ordinal``, from 1), the sequence attribute exactly as sent
(``seq``; ``None`` when absent, possibly repeated) and every child that was present, in
catalog order. A child present and empty is ``""``; an absent child is simply missing.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from attrs import frozen

__all__ = ["DocItem", "DocValue", "Item"]


@frozen
class Item:
    """One row of a detail table: a gate allocation, a delay, a chock operation, ..."""

    ordinal: int
    seq: str | None
    values: tuple[tuple[str, str], ...]  # (child code, raw text) in catalog order

    def get(self, code: str) -> str | None:
        for key, value in self.values:
            if key == code:
                return value
        return None

    def as_dict(self) -> dict[str, str]:
        return dict(self.values)

    def renumbered(self, ordinal: int) -> Item:
        return self if ordinal == self.ordinal else Item(ordinal, self.seq, self.values)

    @classmethod
    def of(cls, ordinal: int, seq: str | None, values: Mapping[str, str]) -> Item:
        return cls(ordinal, seq, tuple(values.items()))


DocValue = str | tuple["DocItem", ...]


@frozen
class DocItem:
    """One entry of a document (SRVT, VIPF, MAFL); nested groups (VIPT) are tuples."""

    values: tuple[tuple[str, DocValue], ...]

    def get(self, code: str) -> DocValue | None:
        for key, value in self.values:
            if key == code:
                return value
        return None

    def __iter__(self) -> Iterator[tuple[str, DocValue]]:
        return iter(self.values)
