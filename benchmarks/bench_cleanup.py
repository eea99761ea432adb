"""Lifecycle cleanup benchmark: how long PIPELINE_LOCK is held per batch, by batch size.

Run: ``PYTHONPATH=. python benchmarks/bench_cleanup.py [--dsn URL] [--flights N]``.
For each batch size it creates a throwaway database, migrates it, loads ``--flights`` ended
flights (one realistic DNLD through the real service: gates, counters, routes, stands),
then runs ``run_cleanup`` one batch per call (``limit`` = batch size), timing each call
(a call is one locked transaction: select, load, archive, delete, events, commit).
The table shows, side by side, total time, flights/s and the longest batch (the longest
the pump would wait for the lock; the median is the typical wait),
with ratios against the first batch size.
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import time
from datetime import UTC, datetime, timedelta

import psycopg

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.decision import Outcome
from flightstate_core.domain.records import InboxRow
from flightstate_core.engine import service
from flightstate_core.engine.lifecycle import RetentionPolicy
from flightstate_pg import PgStore, migrate
from flightstate_pg.lifecycle import run_cleanup
from flightstate_testing.seeded import build_dnld

CONFIG = CoreConfig()
LOADED_AT = datetime(2021, 1, 23, tzinfo=UTC)
NOW = LOADED_AT + timedelta(days=30)  # retention passed, every flight quiet for weeks
SIZES = (50, 200, 500)


def _database(admin: str) -> str:
    name = f"fs_bench_{secrets.token_hex(5)}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return psycopg.conninfo.make_conninfo(admin, dbname=name)


def _drop(admin: str, dsn: str) -> None:
    name = psycopg.conninfo.conninfo_to_dict(dsn)["dbname"]
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _measure(admin: str, flights: int, batch: int) -> tuple[float, float, float, int]:
    """(total s, median batch s, longest batch s, flights removed) for one batch size."""
    dsn = _database(admin)
    try:
        migrate(dsn)
        store = PgStore(dsn, CONFIG)
        raw = build_dnld(flights, seed=7)
        row = InboxRow(1, raw)
        done = service.process_message(store, row, CONFIG, now=LOADED_AT, epoch=None)
        if done is None or done.proc.status is not Outcome.SUCCEEDED:
            raise RuntimeError(f"loading the package failed: {done}")
        policy = RetentionPolicy(batch_limit=batch)
        removed, times, start = 0, [], time.perf_counter()
        while True:
            began = time.perf_counter()
            report = run_cleanup(store, policy, CONFIG, now=NOW, limit=batch)
            times.append(time.perf_counter() - began)
            if report.removed == 0:
                break
            removed += report.removed
        total = time.perf_counter() - start
        store.close()
        return total, statistics.median(times), max(times), removed
    finally:
        _drop(admin, dsn)


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    default = (
        os.environ.get("FLIGHTSTATE_TEST_PG_DSN") or "postgresql://postgres@127.0.0.1:5432/test"
    )
    parser.add_argument("--dsn", default=default)
    parser.add_argument("--flights", type=int, default=2000)
    args = parser.parse_args()
    results = [(size, *_measure(args.dsn, args.flights, size)) for size in SIZES]
    base_rate = results[0][4] / results[0][1]
    base_hold = results[0][2]
    print(f"cleanup of {args.flights} ended flights (archive + delete + tombstone + msg)")
    print(f"{'batch':>6} {'removed':>8} {'total s':>8} {'flights/s':>10} {'x rate':>7} "
          f"{'median lock ms':>15} {'x hold':>7} {'max lock ms':>12}")  # fmt: skip
    for size, total, median, longest, removed in results:
        rate = removed / total
        print(f"{size:>6} {removed:>8} {total:>8.2f} {rate:>10.0f} {rate / base_rate:>7.2f} "
              f"{median * 1000:>15.1f} {median / base_hold:>7.2f} "
              f"{longest * 1000:>12.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
