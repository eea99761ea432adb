"""The latency the gap grace adds (real MariaDB inbox, real PostgreSQL store).

    PYTHONPATH=. python benchmarks/bench_grace.py [--rounds N] [--grace S]

Per round: writer 1 inserts row N inside a transaction, writer 2 commits N+1, then
writer 1 either commits after a short delay (an ordinary concurrent commit) or rolls back
(a permanent gap). Measured: the time from writer 2's commit until the pump has committed
N+1. With a commit the gap closes quickly and N+1 waits about the writer's delay plus one
re-read (``GapSettings.recheck``); with a rollback N+1 waits the whole grace. For
comparison the same rounds with no gap (N+1 alone).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pymysql
from databases import MYSQL_ADMIN, drop_pg, fresh_pg

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.gaps import GapSettings
from flightstate_core.pump import Backoff, Pump, PumpSettings, ServiceProcessor
from flightstate_mysql import MySqlInbox, create_cminmsgs, parse_mysql_dsn
from flightstate_pg import PgStore
from flightstate_pg.lease import PgLeaderLease
from flightstate_testing.mysql import create_database, drop_database
from flightstate_testing.traffic import flop_backlog

_INSERT = (
    "INSERT INTO cminmsgs (CMINMSGS_CLOB_MSG, CMINMSGS_DATE_RECEIVED, CMINMSGS_STATUS)"
    " VALUES (%s, %s, 'VALID')"
)


def _insert(conn: Any, raw: str) -> int:
    with conn.cursor() as cur:
        cur.execute(_INSERT, (raw, datetime.now().replace(microsecond=0)))
        return int(cur.lastrowid)


def _round(kind: str, w1: Any, w2: Any, raws: list[str], applied: dict[int, float]) -> float:
    """Seconds from writer 2's commit of N+1 until the pump committed N+1."""
    n = _insert(w1, raws.pop()) if kind != "no gap" else None
    mid = _insert(w2, raws.pop())
    w2.commit()
    committed = time.perf_counter()
    if n is not None:
        if kind == "commit":
            time.sleep(0.005)
            w1.commit()
        else:
            w1.rollback()
    while mid not in applied:
        time.sleep(0.0005)
    return applied[mid] - committed


def grace_latencies(rounds: int = 10, grace: float = 1.0) -> list[str]:
    """One line per kind of round: median and max latency of N+1."""
    pg, my = fresh_pg(), create_database(MYSQL_ADMIN)
    conns = [pymysql.connect(autocommit=False, **parse_mysql_dsn(my)) for _ in range(2)]
    create_cminmsgs(conns[0])
    raws = flop_backlog(6 * rounds + 10)[::-1]
    store, inbox, lease = PgStore(pg, CoreConfig()), MySqlInbox(my), PgLeaderLease(pg)
    applied: dict[int, float] = {}

    def seen(ids: Any) -> None:
        now = time.perf_counter()
        for mid in ids:
            applied.setdefault(mid, now)

    settings = PumpSettings(holder="grace", batch_size=100, idle_poll=0.001,
                            retry=Backoff(0.01, 0.1), gaps=GapSettings(grace=grace))  # fmt: skip
    pump = Pump(processor=ServiceProcessor(store, CoreConfig()), inbox=inbox, lease=lease,
                backfills=store, read_cursor=store.inbox_cursor, settings=settings,
                after_commit=seen)  # fmt: skip
    thread = threading.Thread(target=pump.run)
    thread.start()
    lines = [
        f"grace {grace:g} s, recheck {settings.gaps.recheck * 1000:g} ms, idle poll 1 ms, "
        f"{rounds} rounds each: latency of row N+1 from its commit to the pump's commit"
    ]
    try:
        for kind in ("no gap", "commit", "rollback"):
            samples = [_round(kind, conns[0], conns[1], raws, applied) for _ in range(rounds)]
            what = {"no gap": "no gap (N+1 alone)",
                    "commit": "N committed 5 ms after N+1",
                    "rollback": "N rolled back (a permanent gap)"}[kind]  # fmt: skip
            lines.append(f"  {what:34} median {statistics.median(samples) * 1000:7.1f} ms, "
                         f"max {max(samples) * 1000:7.1f} ms")  # fmt: skip
    finally:
        pump.request_stop()
        thread.join()
        for conn in conns:
            conn.close()
        store.close()
        inbox.close()
        lease.close()
        drop_pg(pg)
        drop_database(MYSQL_ADMIN, my)
    return lines


def main() -> None:
    """Print the grace latencies."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--grace", type=float, default=1.0)
    args = parser.parse_args()
    for line in grace_latencies(args.rounds, args.grace):
        print(line)


if __name__ == "__main__":
    main()
