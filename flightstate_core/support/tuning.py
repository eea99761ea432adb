"""Garbage-collector tuning: opt-in for a long-running pump process (the reference runner
calls ``tune_gc_for_throughput``), and ``collector_paused`` for bulk loads.

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
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

__all__ = ["FIRST_GENERATION_THRESHOLD", "collector_paused", "tune_gc_for_throughput"]

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


_pause_lock = threading.Lock()
_pause_depth = 0
_pause_restores = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a large graph of long-lived objects is
    built (a package's flights assembled from tens of thousands of rows).

    Why: every object built survives, so each collection the allocations trigger walks
    the whole young graph and finds nothing; measured, this tripled the time to decode a
    2,000-flight package's rows. Reference counting still frees everything else. Nested
    and concurrent pauses are counted, and the collector is re-enabled only if it was
    enabled when the first pause began.
    """
    global _pause_depth, _pause_restores  # noqa: PLW0603 - one process-wide collector
    with _pause_lock:
        if _pause_depth == 0:
            _pause_restores = gc.isenabled()
            gc.disable()
        _pause_depth += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pause_depth -= 1
            if _pause_depth == 0 and _pause_restores:
                gc.enable()
