"""Opt-in process tuning for a long-running pump (the reference runner calls it).

Why opt-in: these are interpreter-wide settings, and a library must not change them behind
its caller's back; a service that embeds flightstate decides for its own process.

Why the garbage collector: applying one message allocates a few hundred container objects
(decoded records, items, rows). CPython's default first-generation threshold (700) then
runs a collection every couple of messages, and each older-generation pass walks every
long-lived object, including the store's state cache (tens of thousands of flights). The
pump's values are immutable attrs objects and tuples that do not form reference cycles, so
collecting rarely loses nothing. ``benchmarks/bench_pump.py`` measures the effect.
"""

from __future__ import annotations

import gc
from typing import Final

__all__ = ["FIRST_GENERATION_THRESHOLD", "tune_gc_for_throughput"]

#: Allocations between first-generation collections (CPython's default is 700).
FIRST_GENERATION_THRESHOLD: Final = 50_000


def tune_gc_for_throughput(first_generation: int = FIRST_GENERATION_THRESHOLD) -> None:
    """Freeze what is allocated so far (imports, configuration) out of the collector's
    view, and collect the first generation every *first_generation* allocations. The
    older generations keep their relative thresholds, so cycles are still collected."""
    gc.collect()
    gc.freeze()
    _, second, third = gc.get_threshold()
    gc.set_threshold(first_generation, second, third)
