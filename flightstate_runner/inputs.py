"""Option and argument types of the command line: a careless value (zero, negative, ``nan``,
``inf``, huge, a word where a number belongs, a blank name) is refused while the command
line is parsed, in one line naming the option, before anything connects
(docs/configuration.md: every number finite, every value in its range)."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import click

from flightstate_core.domain.errors import ConfigError

__all__ = ["FLID", "OUTPUT_FILE", "SEED", "STORE_DSN", "count", "finite"]

_FLID_MAX = 64  # the stores' FLID column (flightstate_oracle migrations 0001: VARCHAR2(64))


class _Finite(click.FloatRange):
    """A float in a range, and finite: click's range lets ``nan`` through (it compares false
    with every bound) and ``inf`` where a side is open-ended."""

    name = "number"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


def finite(low: float, high: float, *, low_open: bool = False) -> click.FloatRange:
    """A finite number in [low, high] (``(low, high]`` when *low_open*)."""
    return _Finite(low, high, min_open=low_open)


def count(low: int, high: int) -> click.IntRange:
    """A whole number in [low, high]."""
    return click.IntRange(low, high)


#: a generator's seed: numpy-sized, so the same seed gives the same day anywhere
SEED = click.IntRange(0, 2**32 - 1)


class _Flid(click.ParamType[str]):
    """A flight id: not blank, no control characters, at most the stores' column width."""

    name = "flid"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        text = str(value)
        if not text.strip():
            self.fail("a flight id must not be blank", param, ctx)
        if any(not char.isprintable() for char in text):
            self.fail(f"{text!r} holds a control character", param, ctx)
        if len(text) > _FLID_MAX:
            self.fail(f"longer than {_FLID_MAX} characters", param, ctx)
        return text


class _StoreDsn(click.ParamType[str]):
    """A store DSN, checked as the ``store_dsn`` setting is (its scheme's parser), without
    connecting."""

    name = "dsn"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from flightstate_runner.config import RunnerConfig  # noqa: PLC0415 - the setting's check

        try:
            RunnerConfig(store_dsn=str(value))
        except ConfigError as exc:
            self.fail(str(exc).removeprefix("store_dsn: "), param, ctx)
        if not str(value).strip():
            self.fail("must not be empty", param, ctx)
        return str(value)


class _OutputFile(click.Path):
    """A file to write at the end of a long command: its directory must exist now, so a typo
    is not found only after the work is done."""

    def __init__(self) -> None:
        super().__init__(dir_okay=False)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not str(value).strip():
            self.fail("must not be empty", param, ctx)
        path = super().convert(value, param, ctx)
        if not Path(os.fsdecode(path)).resolve().parent.is_dir():
            self.fail(f"no directory for {os.fsdecode(path)!r}", param, ctx)
        return path


FLID = _Flid()
OUTPUT_FILE = _OutputFile()
STORE_DSN = _StoreDsn()
