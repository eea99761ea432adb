"""The pure parts of ``bench_latency.py``: arrival schedule, latencies, percentiles, table.

Kept apart from the services so ``tests/test_bench_tools.py`` checks them without any.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence

from attrs import frozen

__all__ = [
    "FloorRow", "Percentiles", "PhaseResult", "across_runs", "bucket_quantile", "due_count",
    "latencies", "render", "summarize",
]  # fmt: skip


def due_count(elapsed: float, rate: float, total: int) -> int:
    """Messages due *elapsed* seconds into a steady arrival of *rate* msg/s: message k
    (from 0) is due at k / rate, so one is due at once."""
    if elapsed < 0:
        return 0
    return min(total, math.floor(elapsed * rate) + 1)


def bucket_quantile(buckets: Sequence[tuple[float, float]], q: float) -> float:
    """The upper bound of the Prometheus histogram bucket holding quantile *q*: the
    smallest ``le`` whose cumulative count reaches q times the total (``+Inf`` last)."""
    ordered = sorted(buckets)
    total = ordered[-1][1] if ordered else 0.0
    return next((le for le, count in ordered if count >= q * total and count > 0), math.nan)


@frozen
class Percentiles:
    """Nearest-rank percentiles of a sample, in milliseconds."""

    count: int
    p50: float
    p95: float
    p99: float
    max: float

    @classmethod
    def of(cls, seconds: Sequence[float]) -> Percentiles:
        """Percentiles of *seconds* (a non-empty sample), in ms."""
        if not seconds:
            raise ValueError("no samples")
        ordered = sorted(seconds)

        def rank(q: float) -> float:
            return ordered[max(0, math.ceil(q * len(ordered)) - 1)] * 1000

        return cls(len(ordered), rank(0.50), rank(0.95), rank(0.99), ordered[-1] * 1000)

    def cells(self) -> str:
        """``p50 p95 p99 max`` as fixed-width columns."""
        return f"{self.p50:8.1f} {self.p95:8.1f} {self.p99:8.1f} {self.max:8.1f}"


def latencies(start: Mapping[int, float], end: Mapping[int, float]) -> tuple[list[float], int]:
    """Seconds from *start* to *end* of every key of *start* that *end* has; and how many
    keys *end* lacks (a message never seen there)."""
    found = [end[key] - at for key, at in start.items() if key in end]
    return found, len(start) - len(found)


@frozen
class PhaseResult:
    """One arrival phase: what was sent and how fast each message got where.

    ``committed`` and ``consumed`` are None when no message of the phase got there (so
    there is nothing to take percentiles of); ``missing_*`` count the ones that did not.
    """

    name: str
    sent: int
    seconds: float  # first to last inbox commit
    commits: int  # inbox transactions the writer used
    committed: Percentiles | None
    consumed: Percentiles | None
    missing_committed: int
    missing_consumed: int

    @property
    def rate(self) -> float:
        """Achieved arrival rate (msg/s; the whole phase at once for a burst)."""
        return self.sent / self.seconds if self.seconds > 0 else math.inf


def summarize(
    name: str,
    sent: Mapping[int, float],
    commits: int,
    state_at: Mapping[int, float],
    consumed_at: Mapping[int, float],
) -> PhaseResult:
    """The phase's result from each message's inbox commit time (*sent*, by inbox id),
    the runner's commit of its state and the consumer's receipt of its ``schd`` record."""
    to_state, lost_state = latencies(sent, state_at)
    to_record, lost_record = latencies(sent, consumed_at)
    times = list(sent.values())
    return PhaseResult(
        name=name, sent=len(sent), seconds=max(times) - min(times) if times else 0.0,
        commits=commits,
        committed=Percentiles.of(to_state) if to_state else None,
        consumed=Percentiles.of(to_record) if to_record else None,
        missing_committed=lost_state, missing_consumed=lost_record,
    )  # fmt: skip


_EMPTY = f"{'-':>8} {'-':>8} {'-':>8} {'-':>8}"


#: A floor row: its label, and its sample in the state column and/or the record column.
FloorRow = tuple[str, Percentiles | None, Percentiles | None]


def _cells(sample: Percentiles | None) -> str:
    return sample.cells() if sample is not None else _EMPTY


def render(phases: Sequence[PhaseResult], floor: Sequence[FloorRow]) -> list[str]:
    """The table: one row per phase (both latencies side by side), then the floor rows."""
    head = f"{'p50':>8} {'p95':>8} {'p99':>8} {'max':>8}"
    lines = [
        f"{'':40} {'inbox commit -> state committed':^35}   {'inbox commit -> schd consumed':^35}",
        f"{'phase (ms)':40} {head}   {head}",
    ]
    for phase in phases:
        rate = "at once" if math.isinf(phase.rate) else f"{phase.rate:,.0f}/s"
        name = f"{phase.name}: {phase.sent} {rate} in {phase.commits} commits"
        lines.append(f"{name:40} {_cells(phase.committed)}   {_cells(phase.consumed)}")
        if phase.missing_committed or phase.missing_consumed:
            lines.append(f"{'':40} NOT SEEN: {phase.missing_committed} state commits, "
                         f"{phase.missing_consumed} schd records")  # fmt: skip
    for label, state, record in floor:
        count = next((sample.count for sample in (state, record) if sample), 0)
        lines.append(f"{f'floor: {label} ({count})':40} {_cells(state)}   {_cells(record)}")
    return lines


def _spread(values: Sequence[float]) -> str:
    return (f"median {statistics.median(values):7.1f}, "
            f"range {min(values):.1f}-{max(values):.1f}: "
            + " ".join(f"{value:.1f}" for value in values))  # fmt: skip


def across_runs(runs: Sequence[Sequence[PhaseResult]], idle: Sequence[float]) -> list[str]:
    """Several runs of the same phases, side by side: per phase, the p50 and the p99 of
    inbox commit -> ``schd`` consumed in each run (in run order), with their median and
    range; then the idle CPU (% of one core) of each run. On a shared machine one run's
    tail swings widely; what the runs share is the claim, not any single one."""
    lines = [f"across {len(runs)} runs, inbox commit -> schd consumed (ms), each run in order:"]
    for at, phase in enumerate(runs[0]):
        samples = [run[at].consumed for run in runs]
        found = [sample for sample in samples if sample is not None]
        if len(found) < len(runs):
            lines.append(f"  {phase.name}: not every run saw a record")
            continue
        lines.append(f"  {phase.name} p50: {_spread([sample.p50 for sample in found])}")
        lines.append(f"  {phase.name} p99: {_spread([sample.p99 for sample in found])}")
    if idle:
        lines.append(f"  idle CPU, % of one core: {_spread([share * 100 for share in idle])}")
    return lines
