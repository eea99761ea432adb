"""Where a phase's CPU goes, per message: each thread of this process and each database server.

Every few seconds it reads the CPU time (user + system) of this process's threads from
``/proc/self/task`` and of the ``postgres`` and ``mariadbd`` processes from ``/proc``, and
how many messages are done (a count the caller supplies), and prints one line: messages per
second in the window and, per thread or server, microseconds of CPU per message. Linux only.
Threads are named by ``threading`` (the pump names its own: ``fs-read-ahead``,
``fs-backfill``). Reading ``/proc`` every 5 s costs nothing measurable. A thread that ends
within a window is missing from that window's line: its last CPU time died with it (the
last window of a pump phase, which closes after the pump's threads have stopped).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

from periodic import Periodic  # benchmarks/ is on the path

_TICKS = os.sysconf("SC_CLK_TCK")
SERVERS = ("postgres", "mariadbd")


def _cpu_seconds(stat_path: str) -> float:
    """utime + stime of one /proc stat file; 0 if the task has gone."""
    try:
        with open(stat_path, encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICKS


def thread_cpu() -> dict[str, float]:
    """CPU seconds of each live thread of this process, by thread name."""
    names = {thread.native_id: thread.name for thread in threading.enumerate()}
    return {
        names.get(int(tid), tid): _cpu_seconds(f"/proc/self/task/{tid}/stat")
        for tid in os.listdir("/proc/self/task")
    }


def server_cpu() -> dict[str, float]:
    """CPU seconds of every process named in SERVERS, summed by name."""
    totals = dict.fromkeys(SERVERS, 0.0)
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/comm", encoding="utf-8") as comm:
                name = comm.read().strip()
        except OSError:
            continue
        if name in totals:
            totals[name] += _cpu_seconds(f"/proc/{pid}/stat")
    return totals


def cpu_line(done: int, before: dict[str, float], after: dict[str, float], seconds: float,
             previous_done: int) -> str:  # fmt: skip
    """One window: messages/s and µs of CPU per message for each name that used any."""
    count = done - previous_done
    per_message = {
        name: (after[name] - before.get(name, 0.0)) * 1e6 / max(count, 1) for name in after
    }
    parts = " ".join(f"{name}={value:.0f}" for name, value in per_message.items() if value >= 1)
    return f"  {done:>8} done  {count / seconds:7.0f} msg/s  CPU µs/msg: {parts}"


class CpuSampler(Periodic):
    """``with CpuSampler(count): ...`` prints a ``cpu_line`` every *interval* seconds."""

    def __init__(self, count: Callable[[], int], interval: float = 5.0) -> None:
        super().__init__(interval, "bench-cpu")
        self._count = count
        self._window: tuple[float, int, dict[str, float]] | None = None

    def tick(self) -> None:
        now, done, cpu = time.perf_counter(), self._count(), {**thread_cpu(), **server_cpu()}
        if self._window is not None:
            started, previous, before = self._window
            print(cpu_line(done, before, cpu, now - started, previous), flush=True)
        self._window = (now, done, cpu)
