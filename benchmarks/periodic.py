"""A context manager that calls ``tick()`` every *interval* seconds on a thread of its own.

The benchmark samplers (peak memory, CPU per message) are this with a different tick: the
first tick runs on entry, before the phase starts, and the last one on exit, after it ends.
"""

from __future__ import annotations

import threading
from types import TracebackType
from typing import Self


class Periodic:
    """Subclasses override ``tick``; ``with`` runs it on entry, every interval, and on exit."""

    def __init__(self, interval: float, name: str) -> None:
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def tick(self) -> None:
        """One sample."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.tick()
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()
        self.tick()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            self.tick()
