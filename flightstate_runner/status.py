"""``status``: one look at the pipeline, as a dict (``--json``) or as text."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from flightstate_core.gaps import gap_ids
from flightstate_pg import PgStore
from flightstate_pg.lease import PgLeaderLease
from flightstate_pg.outbox import PgOutbox
from flightstate_pg.requests import request_status
from flightstate_runner import probes
from flightstate_runner.config import RunnerConfig
from flightstate_runner.wiring import require

__all__ = ["collect", "render"]


def _leader(dsn: str) -> dict[str, Any] | None:
    lease = PgLeaderLease(dsn)
    try:
        found = lease.status()
    finally:
        lease.close()
    if found is None:
        return None
    epoch, holder, unexpired = found
    active = bool(holder and unexpired)
    return {"holder": holder if active else None, "epoch": epoch, "active": active}


def _outbox(dsn: str) -> dict[str, Any]:
    outbox = PgOutbox(dsn)
    try:
        backlog = outbox.backlog()
    finally:
        outbox.close()
    return {"backlog": backlog.count, "oldest_age_s": backlog.oldest_age_s}


_GAPS_LISTED = 10


def _gaps(store: PgStore) -> dict[str, Any]:
    """Open inbox gaps (ids missing below the cursor, still watched) and the counters."""
    gaps = store.inbox_gaps()
    late, abandoned = store.gap_counters()
    oldest = min((gap.first_seen for gap in gaps), default=None)
    return {
        "open": len(gaps),
        "open_ids": gap_ids(gaps),
        "oldest_age_s": (datetime.now(UTC) - oldest).total_seconds() if oldest else None,
        "late_rows": late,
        "abandoned": abandoned,
        "listed": [{"low": g.low, "high": g.high, "first_seen": g.first_seen.isoformat()}
                   for g in gaps[:_GAPS_LISTED]],
    }  # fmt: skip


def collect(config: RunnerConfig, dead_limit: int = 50) -> dict[str, Any]:
    """Everything ``status`` shows."""
    dsn = require(config, "pg_dsn", "status")
    store = PgStore(dsn, config.core(), inbox_name=config.inbox_table, state_cache_size=0)
    try:
        cursor = store.inbox_cursor()
        gaps = _gaps(store)
        requests = request_status(store, listed=20).as_dict()
    finally:
        store.close()
    lag = probes.inbox_lag(config, dsn, cursor)
    beat = probes.last_heartbeat(dsn)
    dead = probes.dead_messages(dsn, dead_limit)
    return {
        "leader": _leader(dsn),
        "inbox": {"table": config.inbox_table,
                  "kind": "mysql" if config.mysql_dsn else "postgresql",
                  "cursor": cursor, **lag.as_dict(), "gaps": gaps},
        "outcomes": probes.outcome_counts(dsn),
        "dead": dead,
        "backfill_backlog": probes.pending_backfills(dsn),
        "outbox": _outbox(dsn),
        "requests": requests,
        "last_error": beat["last_error"] if beat else None,
        "last_runner": beat,
        "config": config.describe(),
    }


def _gap_line(gaps: dict[str, Any]) -> str:
    oldest = gaps["oldest_age_s"]
    return (
        f"gaps:     {gaps['open']} open ({gaps['open_ids']} id(s))"
        + (f", oldest {oldest:.0f} s" if oldest is not None else "")
        + f"; {gaps['late_rows']} late row(s) applied, {gaps['abandoned']} gap(s) abandoned"
    )


def render(report: dict[str, Any]) -> str:
    """Human text of a ``collect`` report."""
    leader = report["leader"]
    inbox = report["inbox"]
    active = leader is not None and leader["active"]
    lines = [
        "leader:   " + (f"{leader['holder']} (epoch {leader['epoch']})" if active
                        else "none (no live lease)"),
        f"inbox:    {inbox['kind']} {inbox['table']}, cursor {inbox['cursor']}, "
        f"lag {inbox['lag']} message(s)"
        + (f", head #{inbox['head_id']} waiting {inbox['head_age_s']:.0f} s"
           if inbox["head_id"] is not None and inbox["head_age_s"] is not None else ""),
        _gap_line(inbox["gaps"]),
        "outcomes: " + (", ".join(f"{k} {v}" for k, v in report["outcomes"].items()) or "none"),
        f"backfill: {report['backfill_backlog']} pending write-back(s)",
        f"outbox:   {report['outbox']['backlog']} undelivered event(s)"
        + (f", oldest {report['outbox']['oldest_age_s']:.0f} s"
           if report["outbox"]["oldest_age_s"] is not None else ""),
        "requests: " + ", ".join(
            f"{k} {report['requests'][k]}" for k in ("open", "answered", "failed", "unsolicited")
        ),
        f"last error: {report['last_error'] or 'none'}",
        f"DEAD ({len(report['dead'])} shown, newest first):",
    ]  # fmt: skip
    lines += [
        f"  #{d['message_id']} {d['type']}/{d['styp']}: {d['reason']}" for d in report["dead"]
    ] or ["  none"]
    failed = [r for r in report["requests"]["requests"] if r["status"] == "FAILED"]
    lines += [f"FAILED schedule requests ({len(failed)} shown):"] + [
        f"  request {r['requestId']} {r['windowStart']} .. {r['windowEnd']}, "
        f"{r['attempts']} attempt(s)" for r in failed
    ]
    return "\n".join(lines)
