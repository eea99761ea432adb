"""Three-state values carried by messages: Unchanged (absent), Clear (empty), Set(raw).

A message carries only Clear and Set entries; an absent key means Unchanged. The typed
value (a datetime for times, minutes for durations) travels beside the raw text, which
is kept exactly as sent (leading zeros, case, spaces).
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Final

from attrs import field, frozen

__all__ = ["CLEAR", "UNCHANGED", "Clear", "ScalarOp", "Set", "Typed", "Unchanged"]

Typed = datetime | date | int | None


@frozen
class Unchanged:
    """The element or attribute was absent: keep what is stored."""

    def __repr__(self) -> str:
        return "UNCHANGED"


@frozen
class Clear:
    """The element was present and empty (or the attribute was ``""``): remove the value."""

    def __repr__(self) -> str:
        return "CLEAR"


@frozen
class Set:
    """The element carried text: store ``raw`` exactly; ``typed`` is derived from it."""

    raw: str
    typed: Typed = field(default=None, eq=False, repr=False)


UNCHANGED: Final = Unchanged()
CLEAR: Final = Clear()

ScalarOp = Unchanged | Clear | Set
