"""Peak memory per SCHD DNLD package: decoding, applying in one batch, and pumping a backlog
(docs/design.md, "Poison-proof bounds"). Target: at most 10x the package's text per package.

Three phases, each in its own forked child (its peak is its own; ``memory.forked``):

1. ``decode``: one package decoded (the lxml tree and the decoded message at once);
2. ``apply``: ``process_batch`` of ``--batch`` packages in one transaction into a PostgreSQL
   store that already holds the flights (each package rewrites every flight of it);
3. ``pump``: the whole pump over a PostgreSQL-table inbox holding ``--backlog`` packages,
   reading within ``--batch-bytes`` (``flightstate_core.engine.budget``), read-ahead on, until every
   row is committed and backfilled. Its peak is what the backlog costs, whatever its length.
4. ``dense``: the same pump over ``--dense-backlog`` dense packages (``build_dense_dnld``:
   ``--dense-flights`` small flights in about the same text), where the byte budget alone
   let a read hold four times the flights; its whole process's peak RSS is stated too, the
   target being at most 512 MiB with the default settings (docs/design.md, "Poison-proof
   bounds").

"per package" is a phase's peak resident growth divided by the packages it held at once
(1; ``--batch``; the packages of one byte-capped read, twice with the read-ahead), and
"x text" that figure over the package's UTF-8 size.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psycopg
from databases import drop_pg, fresh_pg  # benchmarks/ is on the path
from memory import PeakGrowth, forked

from flightstate_core.domain.codec import decode
from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.records import InboxRow
from flightstate_core.engine import service
from flightstate_core.engine.budget import ReadBudget
from flightstate_core.pump import Backoff, Pump, PumpSettings, ServiceProcessor
from flightstate_core.support.tuning import tune_gc_for_throughput
from flightstate_pg import PgStore
from flightstate_pg.inbox import PgInbox, create_inbox_table, insert_messages
from flightstate_pg.lease import PgLeaderLease
from flightstate_testing.seeded import build_dense_dnld, build_dnld, dnld_backlog

_MIB = 1024 * 1024


def packages(count: int, flights: int) -> list[str]:
    """*count* DNLD packages of the same *flights* flights, each with other content."""
    return [build_dnld(flights, seed).decode("utf-8") for seed in range(1, count + 1)]


def phase_decode(raw: str) -> float:
    """Peak growth (MiB) while one package is decoded and held."""
    with PeakGrowth() as peak:
        message = decode(raw)
        time.sleep(0.05)  # one more sample while the message is alive
    del message
    return peak.mib


def phase_apply(raws: list[str], batch: int) -> float:
    """Peak growth (MiB) of one ``process_batch`` of *batch* packages (flights present)."""
    dsn = fresh_pg()
    config = CoreConfig()
    store = PgStore(dsn, config)
    try:
        first = [InboxRow(1, raws[0])]
        service.process_batch(store, first, config, now=datetime.now(UTC), epoch=None)
        rows = [InboxRow(2 + n, raw) for n, raw in enumerate(raws[1 : 1 + batch])]
        with PeakGrowth() as peak:
            done = service.process_batch(store, rows, config, now=datetime.now(UTC), epoch=None)
        assert all(p.proc.status.value == "SUCCEEDED" for p in done), [p.proc for p in done]
        return peak.mib
    finally:
        store.close()
        drop_pg(dsn)


def phase_pump(
    flights: int, backlog: int, batch_bytes: int, dense: bool = False
) -> tuple[float, float, int, float]:
    """(seconds, peak growth MiB, rows backfilled, whole peak RSS MiB) pumping *backlog*
    packages (*dense*: of ``build_dense_dnld``)."""
    dsn = fresh_pg()
    config = CoreConfig()
    with psycopg.connect(dsn) as conn:
        create_inbox_table(conn)
        pending = dnld_backlog(backlog, flights, dense=dense)
        while chunk := list(itertools.islice(pending, 20)):
            insert_messages(conn, chunk)
    store = PgStore(dsn, config)
    inbox = PgInbox(dsn, budget=ReadBudget(batch_bytes, config.max_message_bytes))
    try:
        pump = Pump(
            processor=ServiceProcessor(store, config), inbox=inbox, lease=PgLeaderLease(dsn),
            backfills=store, read_cursor=store.inbox_cursor,
            settings=PumpSettings(holder="bench-memory", batch_size=1000, stop_when_idle=True,
                                  idle_poll=0.01, retry=Backoff(0.01, 0.5)),
        )  # fmt: skip
        with PeakGrowth() as peak:
            started = time.perf_counter()
            stats = pump.run()
            seconds = time.perf_counter() - started
        assert stats.processed == backlog, stats
        return seconds, peak.mib, stats.backfilled, peak.peak_mib
    finally:
        store.close()
        inbox.close()
        drop_pg(dsn)


def main(argv: list[str] | None = None) -> None:
    """Measure and print the three phases side by side."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flights", type=int, default=1600, help="flights per package (~2 MB)")
    parser.add_argument("--batch", type=int, default=8, help="packages in the apply phase")
    parser.add_argument("--backlog", type=int, default=40, help="packages in the pump phase")
    parser.add_argument("--batch-bytes", type=int, default=ReadBudget().max_bytes)
    parser.add_argument("--dense-flights", type=int, default=8000, help="flights per dense package")
    parser.add_argument(
        "--dense-backlog",
        type=int,
        default=56,
        help="dense packages in the dense phase (0: skip it)",
    )
    args = parser.parse_args(argv)
    distinct = max(args.batch + 1, 4)
    raws = packages(distinct, args.flights)
    text_mib = sum(len(r.encode("utf-8")) for r in raws) / len(raws) / _MIB
    per_read = max(1, int(args.batch_bytes / (text_mib * _MIB)))
    tune_gc_for_throughput()  # as the runner does
    decode_mib = forked(phase_decode, raws[0])
    apply_mib = forked(phase_apply, raws, args.batch)
    seconds, pump_mib, backfilled, _ = forked(
        phase_pump, args.flights, args.backlog, args.batch_bytes
    )
    assert backfilled == args.backlog, backfilled
    held = 2 * per_read  # the batch being applied and the one read ahead
    print(f"\nSCHD DNLD of {args.flights} flights: {text_mib:.2f} MiB of text per package")
    print(f"{'phase':46} {'peak RSS':>10} {'per package':>12} {'x text':>7}")
    for name, mib, count in (
        ("decode one package", decode_mib, 1),
        (f"apply {args.batch} packages in one transaction", apply_mib, args.batch),
        (f"pump {args.backlog} packages, reads of {args.batch_bytes / _MIB:g} MiB", pump_mib, held),
    ):
        per = mib / count
        print(f"{name:46} {mib:+7.0f} MiB {per:9.1f} MiB {per / text_mib:7.1f}")
    print(
        f"\npump: {seconds:.1f} s, {args.backlog / seconds:.2f} packages/s, "
        f"{per_read} package(s) per read, {held} held at once with the read-ahead"
    )
    print("target: <= 10x the text per package; peak RSS = phase peak minus its start")
    if args.dense_backlog > 0:
        _dense_row(args)


def _dense_row(args: argparse.Namespace) -> None:
    """The dense phase: its process's whole peak RSS against the 512 MiB target."""
    text_mib = len(build_dense_dnld(args.dense_flights, 1)) / _MIB
    seconds, growth, backfilled, whole = forked(
        phase_pump, args.dense_flights, args.dense_backlog, args.batch_bytes, True
    )
    assert backfilled == args.dense_backlog, backfilled
    print(f"\ndense SCHD DNLD of {args.dense_flights} flights: {text_mib:.2f} MiB of text each")
    print(
        f"pump {args.dense_backlog} dense packages: peak RSS {whole:.0f} MiB "
        f"(growth {growth:+.0f} MiB), {seconds:.1f} s, "
        f"{args.dense_backlog / seconds:.2f} packages/s; target <= 512 MiB"
    )


if __name__ == "__main__":
    main()
