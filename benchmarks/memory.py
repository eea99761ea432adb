"""Peak resident memory of one benchmark phase, sampled from ``/proc/self/statm`` (Linux).

A phase's own cost is its peak minus the resident size it started from. Phases run one
after another in one process would blur that (memory a phase frees stays in the process
and serves the next one for free), so ``forked`` runs each phase in a child forked from
the same parent state. A background thread samples every 20 ms: cheap next to the work
measured, and a spike shorter than that can be missed.
"""

from __future__ import annotations

import multiprocessing
import os
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from periodic import Periodic  # benchmarks/ is on the path

_PAGE = os.sysconf("SC_PAGE_SIZE")
_MIB = 1024 * 1024


def resident_bytes() -> int:
    """This process's resident set size now."""
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * _PAGE


class PeakGrowth(Periodic):
    """``with PeakGrowth() as peak: ...`` then ``peak.mib``: the phase's peak growth."""

    def __init__(self, interval: float = 0.02) -> None:
        super().__init__(interval, "bench-rss")
        self._base = 0
        self._peak = 0

    def tick(self) -> None:
        size = resident_bytes()
        self._base = self._base or size  # the first tick, on entry
        self._peak = max(self._peak, size)

    @property
    def mib(self) -> float:
        """Peak resident size during the phase minus the size it started with, in MiB."""
        return (self._peak - self._base) / _MIB

    @property
    def peak_mib(self) -> float:
        """Peak resident size of the whole process during the phase, in MiB."""
        return self._peak / _MIB


def forked(phase: Callable[..., Any], *args: Any) -> Any:
    """``phase(*args)`` in a child forked from this process; its (picklable) result.

    Fork, not spawn: the child shares the parent's input without copying or rebuilding
    it, and the phase needs no importable name (nox loads these scripts with runpy). The
    parent must hold no open connection or running thread when it forks.
    """
    receive, send = multiprocessing.Pipe(duplex=False)
    child = multiprocessing.get_context("fork").Process(target=_run, args=(send, phase, args))
    child.start()
    send.close()
    ok, value = receive.recv()
    child.join()
    if not ok:
        raise RuntimeError(f"benchmark phase {phase.__name__} failed in its child:\n{value}")
    return value


def _run(send: Connection, phase: Callable[..., Any], args: tuple[Any, ...]) -> None:
    try:
        send.send((True, phase(*args)))
    except BaseException:  # the parent re-raises it with this text
        send.send((False, traceback.format_exc()))
    finally:
        send.close()
