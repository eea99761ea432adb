"""A pump process for the subprocess tests: PgStore + inbox + PgLeaderLease + Pump.

    python tests/pump/pump_process.py --pg DSN --inbox DSN --table cminmsgs \
        [--holder NAME] [--until-idle] [--batch 200] [--ttl 2] [--poll 0.2]
        [--gap-grace S] [--gap-horizon S] [--gap-reconcile S] [--no-gaps]

``--inbox`` is a ``mysql://`` DSN (MySqlInbox) or a PostgreSQL DSN (PgInbox). On exit it
prints the pump's stats as one JSON line. Fault points (environment):

- ``FS_PUMP_KILL_AFTER_COMMIT=N``: SIGKILL itself right after the N-th commit, before the
  backfill of that commit (the "between commit and backfill" crash).
- ``FS_PUMP_PAUSE_AFTER_COMMIT=SECONDS``: sleep after every commit (keeps a leader busy so
  a test can kill it mid-run, or hold it paused past its lease).
- ``FS_PUMP_STARTED_FILE=PATH``: touch PATH once this process leads (for failover tests).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.gaps import GapSettings
from flightstate_core.ports import Inbox
from flightstate_core.pump import Backoff, Pump, PumpSettings, ServiceProcessor
from flightstate_mysql import MySqlInbox
from flightstate_pg import PgStore
from flightstate_pg.inbox import PgInbox
from flightstate_pg.lease import PgLeaderLease


def _args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pg", required=True)
    parser.add_argument("--inbox", required=True)
    parser.add_argument("--table", default="cminmsgs")
    parser.add_argument("--holder", default=f"pump-{os.getpid()}-{uuid.uuid4().hex[:6]}")
    parser.add_argument("--until-idle", action="store_true")
    parser.add_argument("--batch", type=int, default=200)
    parser.add_argument("--ttl", type=float, default=2.0)
    parser.add_argument("--poll", type=float, default=0.2)
    parser.add_argument("--gap-grace", type=float, default=GapSettings().grace)
    parser.add_argument("--gap-horizon", type=float, default=GapSettings().horizon)
    parser.add_argument("--gap-reconcile", type=float, default=GapSettings().reconcile_every)
    parser.add_argument("--no-gaps", action="store_true")
    return parser.parse_args(argv)


def _inbox(dsn: str, table: str) -> Inbox:
    if dsn.startswith(("mysql", "mariadb")):
        return MySqlInbox(dsn, table=table)
    return PgInbox(dsn, table=table)


def _after_commit_hook(started: Path | None) -> Callable[[Sequence[int]], None]:
    kill_after = int(os.environ.get("FS_PUMP_KILL_AFTER_COMMIT", "0"))
    pause = float(os.environ.get("FS_PUMP_PAUSE_AFTER_COMMIT", "0"))
    commits = 0

    def hook(_ids: Sequence[int]) -> None:
        nonlocal commits
        commits += 1
        if started is not None and not started.exists():
            started.write_text(str(os.getpid()))
        if kill_after and commits >= kill_after:
            os.kill(os.getpid(), signal.SIGKILL)
        if pause:
            time.sleep(pause)

    return hook


def main(argv: Sequence[str] | None = None) -> int:
    """Run the pump until stopped (SIGTERM/SIGINT), killed, or idle with --until-idle."""
    args = _args(argv)
    started = os.environ.get("FS_PUMP_STARTED_FILE")
    config = CoreConfig()
    store = PgStore(args.pg, config, inbox_name=args.table)
    settings = PumpSettings(
        holder=args.holder,
        batch_size=args.batch,
        lease_ttl=args.ttl,
        renew_every=args.ttl / 4,
        standby_poll=args.poll,
        idle_poll=args.poll,
        retry=Backoff(0.05, 1.0),
        backfill_retry=Backoff(0.05, 1.0),
        stop_when_idle=args.until_idle,
        gaps=GapSettings(
            enabled=not args.no_gaps,
            grace=args.gap_grace,
            horizon=args.gap_horizon,
            late_poll=min(1.0, args.gap_grace),
            reconcile_every=args.gap_reconcile,
        ),
    )
    pump = Pump(
        processor=ServiceProcessor(store, config),
        inbox=_inbox(args.inbox, args.table),
        lease=PgLeaderLease(args.pg),
        backfills=store,
        read_cursor=store.inbox_cursor,
        settings=settings,
        after_commit=_after_commit_hook(Path(started) if started else None),
    )
    pump.install_signal_handlers()
    stats = pump.run()
    summary = {
        "holder": args.holder,
        "outcomes": dict(stats.outcomes),
        "replayed": stats.replayed,
        "backfilled": stats.backfilled,
        "transient_errors": stats.transient_errors,
        "leadership_changes": stats.leadership_changes,
        "cursor": stats.cursor,
        "late_rows": stats.late_rows,
        "gaps_abandoned": stats.gaps_abandoned,
        "last_error": stats.last_error,
    }
    print(json.dumps(summary), flush=True)
    store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
