"""The typed twin of a raw value (``*_TS``, ``*_DT``, ``*_MIN`` columns), as every store
writes it: absent, empty or unparsable raw text has none (the raw column stays
authoritative)."""

from __future__ import annotations

from datetime import date, datetime
from typing import Final
from zoneinfo import ZoneInfo

from flightstate_core.domain.catalog import ValueKind
from flightstate_core.domain.times import parse_typed

__all__ = ["TypedValues", "typed_twin"]

Typed = datetime | date | int | None
_MEMO_LIMIT: Final = 100_000  # distinct raw times kept typed


def typed_twin(raw: str | None, kind: ValueKind, zone: ZoneInfo, pivot: int) -> Typed:
    """The typed twin of ``raw``, or None when it is absent, empty, text or unparsable."""
    if not raw or kind is ValueKind.TEXT:
        return None
    try:
        return parse_typed(raw, kind, zone, pivot)
    except ValueError:
        return None


class TypedValues:
    """``typed_twin`` for one airport zone and century pivot, memoised (a pump sees the
    same few thousand times over and over)."""

    def __init__(self, zone: ZoneInfo, pivot: int = 70) -> None:
        self.zone = zone
        self.pivot = pivot
        self._size = 0
        # One memo per kind: no (raw, kind) tuple to build on every look-up.
        self._memos: dict[ValueKind, dict[str, Typed]] = {kind: {} for kind in ValueKind}

    def of(self, raw: str | None, kind: ValueKind) -> Typed:
        """The typed twin, or None when the raw text is absent, empty or unparsable."""
        if not raw or kind is ValueKind.TEXT:
            return None
        memo = self._memos[kind]
        try:
            return memo[raw]
        except KeyError:
            pass
        value = typed_twin(raw, kind, self.zone, self.pivot)
        if self._size < _MEMO_LIMIT:
            memo[raw] = value
            self._size += 1
        return value
