"""Freshness of the real runner: inbox commit → state committed, and → ``schd`` consumed.

    PYTHONPATH=. python benchmarks/bench_latency.py [--rates 50,200,1000] [--duration S]
                                                    [--burst N] [--quick] [--repeat N]

What runs: ``flightstate run`` as its own process (``python -m flightstate_runner.cli``,
configured by ``FLIGHTSTATE_*`` variables as a user would; any other ``FLIGHTSTATE_*``
setting in the environment reaches it too) on a fresh MariaDB inbox database, a fresh
PostgreSQL database (``migrate``, ``inbox-init`` and ``topics`` through the same CLI) and a
tansu broker started here on a free port below 32768 (or ``--bootstrap``).

A writer inserts FLOPs (ESTT) to distinct flights into cminmsgs at a steady arrival rate:
message k is due k / rate seconds into the phase, and every message due is committed in
the writer's next transaction (one row per transaction while it keeps up; at 1,000 msg/s
a durable MariaDB commit per row is about the writer's own limit, so rows due together
share one). A FLOP to an unknown FLID creates the flight (``flightstate_core.domain.handlers.
flop``), so every message makes exactly one ``schd`` record. Then a burst: ``--burst``
messages in one transaction. Measured per message, from the moment the writer's commit
returned:

- state committed: the runner's JSON log line for the message (``event: message``), which
  it writes right after the store transaction returned. A batch's lines are written in
  turn, so a later line of a large batch is a little late (microseconds per line);
- ``schd`` consumed: a consumer assigned to every partition of ``schd`` (read_committed,
  ``fetch.wait.max.ms`` small so that it does not wait on its own) receives the record
  whose ``message-id`` header is the message's inbox id.

All three clocks are this host's wall clock (``time.time()`` here, the log record's
``created`` in the runner): the same clock, so no skew, only NTP slewing.

The floor, measured in the same run on the same services before the runner starts: a
durable one-row PostgreSQL commit, a produce → consume round trip on the same broker (the
dispatcher's producer settings, non-transactional, flushed), and the two back to back.
A warm-up phase (not reported) runs first, so the producer and the lease exist.

``--repeat N`` runs all of it N times, each on fresh databases, a fresh broker and a fresh
runner, prints each run's table, then each phase's p50 and p99 to ``schd`` of every run
with their median and range. On this shared 2-core machine the p99 of identical code swung
from 126 to 277 ms at 1,000 msg/s over sixteen single runs of one sitting (docs/benchmarks.md,
"Freshness"), so a target is judged over several runs, not one.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import attrs
from databases import MYSQL_ADMIN, PG_ADMIN
from latency_probes import FLOOR, FLOOR_TX, SchdWatcher, floor
from latency_runner import ROOT, Runner, runner_env
from latency_table import FloorRow, PhaseResult, across_runs, render, summarize
from latency_writer import Flops, Writer

from flightstate_testing import mysql as test_mysql
from flightstate_testing import postgres as test_pg
from flightstate_testing.kafka import TansuBroker

# ---------------------------------------------------------------------------- services


@contextlib.contextmanager
def services(args: argparse.Namespace) -> Iterator[tuple[str, str, str]]:
    """(PostgreSQL DSN, MariaDB DSN, bootstrap): fresh databases, a broker; all removed after."""
    broker = None if args.bootstrap else TansuBroker()
    pg = my = None
    try:
        if broker is not None:
            broker.start()
        pg = test_pg.create_database(args.pg_admin)
        my = test_mysql.create_database(args.mysql_admin)
        yield pg, my, args.bootstrap or (broker.bootstrap if broker else "")
    finally:
        if pg is not None:
            test_pg.drop_database(args.pg_admin, pg)
        if my is not None:
            test_mysql.drop_database(args.mysql_admin, my)
        if broker is not None:
            broker.close()


# ---------------------------------------------------------------------------- phases


def wait_for(ids: Sequence[int], seen: Callable[[], dict[int, float]], runner: Runner,
             timeout: float) -> None:  # fmt: skip
    """Until every id is in ``seen()`` (or *timeout* seconds passed: the table says NOT SEEN)."""
    deadline = time.time() + timeout
    while time.time() < deadline and any(i not in seen() for i in ids):
        runner.check_alive()
        time.sleep(0.05)


@attrs.define
class Bench:
    """The runner, its observers and the writer of one run."""

    runner: Runner
    watcher: SchdWatcher
    writer: Writer
    #: The runner process's CPU (all its threads) per phase, seconds; "idle" is CPU per
    #: second of wall time with nothing arriving.
    cpu: dict[str, float] = attrs.field(factory=dict)

    def idle(self, seconds: float, settle: float) -> None:
        """Nothing arrives for *settle* + *seconds*: the runner's CPU share of one core over
        the last *seconds* (the first *settle* s still poll fast after the warm-up's
        arrivals, ``FLIGHTSTATE_POLL_ACTIVE_PERIOD``; that is the active load, not idle)."""
        time.sleep(settle)
        wall, cpu = time.time(), self.runner.cpu_seconds()
        time.sleep(seconds)
        self.cpu["idle"] = (self.runner.cpu_seconds() - cpu) / (time.time() - wall)

    def phase(self, name: str, send: Callable[[], dict[int, float]], timeout: float) -> PhaseResult:
        """Send one phase's messages, wait for their records, summarize."""
        log = self.runner.log
        assert log is not None  # started before any phase
        commits, cpu = self.writer.commits, self.runner.cpu_seconds()
        sent = send()
        wait_for(list(sent), lambda: self.watcher.seen, self.runner, timeout)
        self.cpu[name] = self.runner.cpu_seconds() - cpu
        wait_for(list(sent), log.read_new, self.runner, 5)
        return summarize(name, sent, self.writer.commits - commits, log.committed,
                         self.watcher.seen)  # fmt: skip

    def phases(self, args: argparse.Namespace) -> list[PhaseResult]:
        """A warm-up (not returned), each steady rate, then the burst."""
        flops, writer = Flops(), self.writer
        self.phase("warm-up", lambda: writer.steady(flops.take(20), 20), 120)
        if args.idle:
            self.idle(args.idle, args.idle_settle)
        results = []
        for rate in args.rates:
            raws = flops.take(max(1, round(rate * args.duration)))
            results.append(self.phase(f"steady {rate:g}/s", partial(writer.steady, raws, rate),
                                      60 + len(raws) / 200))  # fmt: skip
            time.sleep(args.pause)
        if args.burst:
            burst = flops.take(args.burst)
            results.append(self.phase("burst", lambda: dict.fromkeys(*writer.commit(burst)),
                                      60 + args.burst / 200))  # fmt: skip
        return results


Measured = tuple[
    list[PhaseResult], list[FloorRow], dict[str, tuple[int, float, float]], dict[str, float]
]


def measure(args: argparse.Namespace) -> Measured:
    """Start everything, run the floor and the phases, stop everything."""
    with services(args) as (pg, my, bootstrap):
        env, schd = runner_env(pg, my, bootstrap)
        runner = Runner(env)
        for command in (("migrate",), ("inbox-init",), ("topics",)):
            runner.command(*command)
        floor_rows = floor(pg, bootstrap, args.floor)
        bench = Bench(runner, SchdWatcher(bootstrap, schd), Writer(my))
        bench.watcher.start()
        runner.start()
        try:
            phases = bench.phases(args)
            histograms = runner.histograms_when(20 + sum(p.sent for p in phases))
            cpu = bench.cpu
        finally:
            code = runner.stop()
            bench.watcher.stop()
            bench.writer.close()
            if code not in (0, None) and runner.log is not None:
                print(f"runner exited {code}; its last lines:\n{runner.log.tail()}")
            runner.remove_log()
    return phases, floor_rows, histograms, cpu


def _commit_measured() -> str:
    """The commit the bench ran on (``+dirty`` with uncommitted changes)."""

    def git(*argv: str) -> str:
        return subprocess.run(["git", *argv], cwd=ROOT, capture_output=True, text=True,  # noqa: S603, S607
                              check=False).stdout.strip()  # fmt: skip

    return git("rev-parse", "--short", "HEAD") + ("+dirty" if git("status", "--porcelain") else "")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The options (``--quick``: a CI-sized smoke run of every part)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rates", default="50,200,1000", help="steady arrival rates, msg/s, comma-separated"
    )
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per rate")
    parser.add_argument(
        "--burst",
        type=int,
        default=2000,
        help="messages committed in one transaction after the rates (0: none)",
    )
    parser.add_argument("--floor", type=int, default=200, help="floor samples of each kind")
    parser.add_argument("--pause", type=float, default=2.0, help="idle seconds between rates")
    parser.add_argument(
        "--idle",
        type=float,
        default=5.0,
        help="seconds with nothing arriving after the warm-up: the runner's idle CPU (0: skip)",
    )
    parser.add_argument(
        "--idle-settle",
        type=float,
        default=3.0,
        help="seconds waited before the idle measurement starts: longer than "
        "the runner's fast-poll period after the last arrival (2 s)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke size: 50 msg/s for 2 s, a burst of 100, 20 floor samples",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="whole runs (fresh services each), then each phase's p50 and p99 "
        "across them: one run's tail swings on a shared machine",
    )
    parser.add_argument("--bootstrap", help="use this broker instead of starting tansu")
    parser.add_argument("--pg-admin", default=PG_ADMIN)
    parser.add_argument("--mysql-admin", default=MYSQL_ADMIN)
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    args.rates = [float(rate) for rate in str(args.rates).split(",") if rate.strip()]
    if args.quick:
        args.rates, args.duration, args.burst, args.floor, args.pause = [50.0], 2.0, 100, 20, 0.5
        args.idle, args.idle_settle = 1.0, 0.0
    return args


def main(argv: Sequence[str] | None = None) -> Measured:
    """Measure and print the table of each run (``--repeat``), then, for several runs,
    the phases across them; return what the last run shows (tests check it)."""
    args = parse_args(argv)
    runs = []
    for _ in range(args.repeat):
        runs.append(report(args, measure(args)))
    if len(runs) > 1:
        idle = [cpu["idle"] for _, _, _, cpu in runs if "idle" in cpu]
        print()
        for line in across_runs([phases for phases, _, _, _ in runs], idle):
            print(line)
    return runs[-1]


def floor_ratios(phases: Sequence[PhaseResult], floor_rows: Sequence[FloorRow]) -> list[str]:
    """Each steady phase's inbox commit -> ``schd`` consumed, p50 and p99, as a multiple
    of the floor measured in this run, and of the floor with Kafka transactions."""
    floors = {label: record for label, _, record in floor_rows if record is not None}
    lines = []
    for phase in phases:
        if phase.consumed is None or not phase.name.startswith("steady"):
            continue
        for label in (FLOOR, FLOOR_TX):
            base = floors.get(label)
            if base is None or not base.p50 or not base.p99:
                continue
            lines.append(
                f"{phase.name.split(':')[0]}: schd p50 {phase.consumed.p50 / base.p50:.2f}x, "
                f"p99 {phase.consumed.p99 / base.p99:.2f}x the floor '{label}'"
            )
    return lines


def report(args: argparse.Namespace, measured: Measured) -> Measured:
    """Print one run's table, histograms and CPU; return *measured*."""
    phases, floor_rows, histograms, cpu = measured
    load = ", ".join(f"{n:.1f}" for n in os.getloadavg())
    print(
        f"\nflightstate run as its own process (MariaDB inbox, PostgreSQL, tansu), "
        f"commit {_commit_measured()}; runner settings from the environment; "
        f"load average {load} on {os.cpu_count()} cores"
    )
    for line in render(phases, floor_rows):
        print(line)
    for line in floor_ratios(phases, floor_rows):
        print(line)
    print("\nthe runner's own histograms, all phases and the warm-up (bucket upper bounds):")
    for name, (count, p50, p99) in histograms.items():
        print(f"  {name}: {count} observations, p50 <= {p50:g} s, p99 <= {p99:g} s")
    if "idle" in cpu:
        print(
            f"runner process CPU, nothing arriving for {args.idle:g} s "
            f"(from {args.idle_settle:g} s after the last arrival): "
            f"{cpu['idle'] * 100:.1f} % of one core"
        )
    for phase in phases:
        print(
            f"runner process CPU, {phase.name}: {cpu[phase.name] / phase.sent * 1e6:,.0f} "
            "µs per message (all its threads, until the last record was consumed)"
        )
    return measured


if __name__ == "__main__":
    main()
