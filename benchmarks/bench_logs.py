"""The runner's message log lines: one write per line against one write per batch.

Run: ``PYTHONPATH=. python benchmarks/bench_logs.py [--batches 1,30,500] [--rounds 7]``.

What is timed: ``flightstate_runner.observe.log_outcomes``, what ``ObservedProcessor``
does after each commit (the outcome counters and one JSON line per message, through the
root logger), for a batch of real FLOP outcomes, into a file opened as the runner's
stderr is when redirected (line-buffered text). Two root handlers, in alternating rounds,
same batch:

- ``per line``: a plain ``logging.StreamHandler``: a write and a flush per line (as before
  ``lines_held``);
- ``held``: ``BatchingStreamHandler`` (``configure_logging``'s): one write per batch (a
  batch of one is written as it comes).

Each is measured alone and with a second thread running pure Python, as the pump's
read-ahead thread decodes while the apply thread logs: a write that gives the interpreter
lock away may wait for it to come back. Printed: wall µs per line (median of the rounds)
and the ratio per line / held.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.records import InboxRow, ProcessedMessage
from flightstate_core.engine.processor import ServiceProcessor
from flightstate_core.memory import MemoryStore
from flightstate_runner.logs import BatchingStreamHandler, JsonFormatter
from flightstate_runner.metrics import RunnerMetrics
from flightstate_runner.observe import log_outcomes
from flightstate_testing.traffic import TrafficGenerator


class Batch:
    """*count* real FLOP outcomes (new flights) and their raw texts."""

    def __init__(self, count: int) -> None:
        gen = TrafficGenerator(seed=11)
        rows = [InboxRow(n, gen.flop("ESTT", n, f"<ESTT>{gen.when(n, 15)}</ESTT>"))
                for n in range(1, count + 1)]  # fmt: skip
        processor = ServiceProcessor(MemoryStore(), CoreConfig())
        self.results: list[ProcessedMessage] = list(processor.process_batch(rows, None))
        self.raws = {row.message_id: row.raw for row in rows}
        assert len(self.results) == count


@contextmanager
def root_handler(handler: logging.Handler) -> Iterator[None]:
    root = logging.getLogger()
    saved, level = root.handlers[:], root.level
    handler.setFormatter(JsonFormatter())
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    try:
        yield
    finally:
        root.handlers[:] = saved
        root.setLevel(level)


def log_batch(batch: Batch, metrics: RunnerMetrics) -> float:
    """Wall seconds to log one batch's lines."""
    log = logging.getLogger("flightstate.runner")
    start = time.perf_counter()
    log_outcomes(log, metrics, batch.results, 0.0004, batch.raws)
    return time.perf_counter() - start


@contextmanager
def busy_thread(on: bool) -> Iterator[None]:
    """A thread running pure Python (never blocking) while the block runs."""
    stop = threading.Event()

    def spin() -> None:
        total = 0
        while not stop.is_set():
            total += sum(range(200))

    worker = threading.Thread(target=spin, daemon=True)
    if on:
        worker.start()
    try:
        yield
    finally:
        stop.set()
        if on:
            worker.join()


def measure(batch: Batch, stream: TextIO, rounds: int, busy: bool) -> tuple[float, float]:
    """Median wall µs per line: (per line, held)."""
    plain: list[float] = []
    held: list[float] = []
    metrics = RunnerMetrics()
    lines = len(batch.results)
    repeat = max(1, 2000 // lines)  # about 2,000 lines per round and side
    with busy_thread(busy):
        for _ in range(rounds):
            with root_handler(logging.StreamHandler(stream)):
                plain.append(sum(log_batch(batch, metrics) for _ in range(repeat)))
            with root_handler(BatchingStreamHandler(stream)):
                held.append(sum(log_batch(batch, metrics) for _ in range(repeat)))
    per_line = 1e6 / (repeat * lines)
    return statistics.median(plain) * per_line, statistics.median(held) * per_line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", default="1,30,500", help="batch sizes (lines)")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    sizes = [int(n) for n in args.batches.split(",")]
    print(f"{'batch':>6} {'other thread':>13} {'per line µs':>12} {'held µs':>8} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "stderr.log"
        with path.open("w", buffering=1, encoding="utf-8") as stream:  # as stderr: lines
            for size in sizes:
                batch = Batch(size)
                for busy in (False, True):
                    plain, held = measure(batch, stream, args.rounds, busy)
                    print(f"{size:>6} {'busy' if busy else 'none':>13} {plain:>12.1f} "
                          f"{held:>8.1f} {plain / held:>6.2f}")  # fmt: skip
                    stream.seek(0)
                    stream.truncate()


if __name__ == "__main__":
    main()
