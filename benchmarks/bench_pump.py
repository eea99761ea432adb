"""End-to-end pump throughput vs the store's raw apply rate (real MariaDB + PostgreSQL).

    PYTHONPATH=. python benchmarks/bench_pump.py [--messages N] [--batch B] [--compare-notify]

Workload: ``flightstate_testing.traffic.flop_backlog(N)`` (SCHD DNLD packages creating the
flights, then FLOP updates). Measured side by side, each on a fresh store database:

- ``store raw apply``: ``service.process_batch`` straight from memory rows into PgStore
  (decode + decide + durable commit; no inbox, no backfill);
- ``pump, MariaDB inbox``: cminmsgs -> committed state -> backfilled, until every row is
  backfilled (the whole pipeline);
- ``pump, PG inbox``: the same with the cminmsgs-shaped PostgreSQL table.

Commits are durable (``synchronous_commit = on``, InnoDB flush at commit). The default N
keeps a run under about a minute; the acceptance figure uses ``--messages 100000``.

Each phase runs in a child forked from the same parent (``benchmarks/memory.py``), so its
peak memory growth is its own; a ``machine:`` line names this boot's speed
(``benchmarks/machine.py``), since the same code runs at very different rates on different
boots of this shared machine.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psycopg
import pymysql
from databases import MYSQL_ADMIN, drop_pg, fresh_pg
from machine import describe  # machine, memory, threads: benchmarks/ is on the path,
from memory import PeakGrowth, forked  # as it is for nox and for `python benchmarks/...`
from threads import CpuSampler

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.gaps import GapSettings
from flightstate_core.domain.records import InboxRow
from flightstate_core.engine import service
from flightstate_core.ports import Inbox
from flightstate_core.pump import Backoff, Pump, PumpSettings, ServiceProcessor
from flightstate_core.support.tuning import tune_gc_for_throughput
from flightstate_mysql import MySqlInbox, create_cminmsgs, insert_messages, parse_mysql_dsn
from flightstate_pg import PgStore
from flightstate_pg.inbox import PgInbox, create_inbox_table
from flightstate_pg.inbox import insert_messages as pg_insert
from flightstate_pg.lease import PgLeaderLease
from flightstate_pg.wakeup import DEFAULT_CHANNEL
from flightstate_testing.traffic import flop_backlog


@contextlib.contextmanager
def cpu_sampling(enabled: bool, dsn: str) -> Iterator[None]:
    """``--cpu``: a line of CPU per message by thread and server every 5 s of the phase;
    messages done are PROC_STATE rows, counted over a connection of the sampler's own."""
    if not enabled:
        yield
        return
    with psycopg.connect(dsn, autocommit=True) as conn:

        def applied() -> int:
            row = conn.execute("SELECT COUNT(*) FROM PROC_STATE").fetchone()
            return 0 if row is None else int(row[0])

        with CpuSampler(applied):
            yield


def bench_raw(raws: list[str], batch: int, cpu: bool = False) -> tuple[float, float]:
    """Seconds for service.process_batch over in-memory rows into a fresh PgStore; the
    peak resident growth in MiB."""
    pg = fresh_pg()
    config = CoreConfig()
    store = PgStore(pg, config)
    rows = [InboxRow(i + 1, raw, None) for i, raw in enumerate(raws)]
    try:
        with PeakGrowth() as peak, cpu_sampling(cpu, pg):
            started = time.perf_counter()
            for start in range(0, len(rows), batch):
                chunk = rows[start : start + batch]
                service.process_batch(store, chunk, config, now=datetime.now(UTC), epoch=None)
            elapsed = time.perf_counter() - started
        return elapsed, peak.mib
    finally:
        store.close()
        drop_pg(pg)


def bench_pump(
    raws: list[str],
    batch: int,
    make_inbox: Callable[[str], tuple[Inbox, Callable[[], None]]],
    cpu: bool = False,
    *,
    gaps: bool = True,
    notify: bool = True,
) -> tuple[float, int, float]:
    """Seconds until every row is committed and backfilled; rows backfilled; the peak
    resident growth in MiB (the inbox's rows live in its database, not here). *notify*
    False: the store sends no outbox NOTIFY, as the runner's does."""
    pg = fresh_pg()
    config = CoreConfig()
    store = PgStore(pg, config, notify_channel=DEFAULT_CHANNEL if notify else None)
    inbox, cleanup = make_inbox(pg)
    try:
        pump = Pump(
            processor=ServiceProcessor(store, config),
            inbox=inbox,
            lease=PgLeaderLease(pg),
            backfills=store,
            read_cursor=store.inbox_cursor,
            settings=PumpSettings(
                holder="bench", batch_size=batch, stop_when_idle=True, idle_poll=0.01,
                retry=Backoff(0.01, 0.5), backfill_batch=max(500, batch),
                gaps=GapSettings(enabled=gaps),
            ),
        )  # fmt: skip
        with PeakGrowth() as peak, cpu_sampling(cpu, pg):
            started = time.perf_counter()
            stats = pump.run()
            elapsed = time.perf_counter() - started
        assert stats.processed == len(raws), stats
        return elapsed, stats.backfilled, peak.mib
    finally:
        store.close()
        cleanup()
        drop_pg(pg)


def machine_line() -> str:
    """This boot's speed (see ``benchmarks/machine.py``), measured in a throwaway database."""
    pg = fresh_pg()
    try:
        return describe(pg)
    finally:
        drop_pg(pg)


def mysql_inbox(raws: list[str]) -> Callable[[str], tuple[Inbox, Callable[[], None]]]:
    """A fresh MariaDB database holding the backlog in cminmsgs."""

    def make(_pg: str) -> tuple[Inbox, Callable[[], None]]:
        from flightstate_testing.mysql import create_database, drop_database  # noqa: PLC0415

        dsn = create_database(MYSQL_ADMIN)
        conn: Any = pymysql.connect(autocommit=True, **parse_mysql_dsn(dsn))
        create_cminmsgs(conn)
        insert_messages(conn, raws)
        conn.close()
        inbox = MySqlInbox(dsn)
        return inbox, lambda: (inbox.close(), drop_database(MYSQL_ADMIN, dsn))

    return make


def pg_inbox(raws: list[str]) -> Callable[[str], tuple[Inbox, Callable[[], None]]]:
    """The backlog in a cminmsgs-shaped table in the store's own database."""

    def make(pg: str) -> tuple[Inbox, Callable[[], None]]:
        with psycopg.connect(pg) as conn:
            create_inbox_table(conn)
            pg_insert(conn, raws)
        inbox = PgInbox(pg)
        return inbox, inbox.close

    return make


def main(argv: list[str] | None = None) -> None:
    """Run the three measurements and print them side by side."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=3000)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--skip-pg-inbox", action="store_true")
    parser.add_argument(
        "--cpu",
        action="store_true",
        help="every 5 s of each phase, CPU µs per message by thread and server",
    )
    parser.add_argument(
        "--compare-gaps",
        action="store_true",
        help="also the MariaDB pump with the gap logic off, and the grace's "
        "latency (benchmarks/bench_grace.py)",
    )
    parser.add_argument(
        "--compare-notify",
        action="store_true",
        help="also the MariaDB pump with the store's NOTIFY off (the runner's)",
    )
    parser.add_argument(
        "--default-gc",
        action="store_true",
        help="CPython's default collector settings instead of the runner's",
    )
    args = parser.parse_args(argv)
    raws = flop_backlog(args.messages)
    machine = machine_line()
    tune_gc_for_throughput()  # as the runner's ``run`` does; --default-gc to compare
    if args.default_gc:
        gc.unfreeze()
        gc.set_threshold(700, 10, 10)
    # Each phase in its own forked child, so that its peak memory is its own.
    raw_s, raw_mib = forked(bench_raw, raws, args.batch, args.cpu)
    my_s, my_done, my_mib = forked(bench_pump, raws, args.batch, mysql_inbox(raws), args.cpu)
    results = [("store raw apply (process_batch)", raw_s, len(raws), raw_mib),
               ("pump, MariaDB inbox, backfilled", my_s, my_done, my_mib)]  # fmt: skip
    if args.compare_gaps:
        off = forked(partial(bench_pump, gaps=False), raws, args.batch, mysql_inbox(raws),
                     args.cpu)  # fmt: skip
        results.append(("  same, gap logic off", *off))
    if args.compare_notify:
        quiet = forked(partial(bench_pump, notify=False), raws, args.batch, mysql_inbox(raws),
                       args.cpu)  # fmt: skip
        results.append(("  same, no NOTIFY (runner's store)", *quiet))
    if not args.skip_pg_inbox:
        pg_s, pg_done, pg_mib = forked(bench_pump, raws, args.batch, pg_inbox(raws), args.cpu)
        results.append(("pump, PG inbox, backfilled", pg_s, pg_done, pg_mib))
    n = len(raws)
    collector = "CPython default" if args.default_gc else "tuned as the runner's (gen0 50,000)"
    print(f"\nflop_backlog({n}), batch {args.batch}, durable commits, GC {collector}")
    print(f"{machine}\n")
    print(f"{'measurement':34} {'seconds':>9} {'msg/s':>9} {'vs raw':>7} {'peak RSS':>10}")
    for name, seconds, done, mib in results:
        assert done == n, (name, done)
        print(f"{name:34} {seconds:9.2f} {n / seconds:9.0f} {raw_s / seconds:7.2f} "
              f"{mib:+7.0f} MiB")  # fmt: skip
    print("\ntarget: >= 2000 msg/s end to end; pump overhead = 1 - (raw time / pump time)")
    print("peak RSS: the phase's peak resident size minus the size it started from")
    if args.compare_gaps:
        from bench_grace import grace_latencies  # noqa: PLC0415 - only with --compare-gaps

        print()
        for line in grace_latencies():
            print(line)


if __name__ == "__main__":
    main()
