"""One range check for every configured number (core settings, the runner, CLI options)."""

from __future__ import annotations

import math
from typing import Any

from flightstate_core.domain.errors import ConfigError

__all__ = ["check_number", "in_range"]


def check_number(name: str, value: float, low: float, high: float, *, low_open: bool) -> None:
    """*value* is a finite number in [low, high] ((low, high] with *low_open*), or a
    ``ConfigError`` naming *name*. nan and inf are refused: they pass ``< 0`` checks and
    then break whatever uses them (``OverflowError`` in a sleep, ``interval out of range``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"{name}: {value!r} is not a finite number")
    below = value <= low if low_open else value < low
    if below or value > high:
        left = "(" if low_open else "["
        raise ConfigError(f"{name}: {value!r} is outside {left}{low:g}, {high:g}]")


def in_range(low: float, high: float, *, low_open: bool = False) -> Any:
    """An attrs validator: ``check_number`` with the attribute's name."""

    def validate(instance: object, attribute: Any, value: float) -> None:
        check_number(attribute.name, value, low, high, low_open=low_open)

    return validate
