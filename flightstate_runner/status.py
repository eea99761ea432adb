"""``status``: one look at the pipeline, as a dict (``--json``) or as text."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from flightstate_core.domain.errors import FlightstateError
from flightstate_core.domain.gaps import gap_ids
from flightstate_core.engine.lease_identity import split_holder
from flightstate_core.ports import OperatorQueries, Outbox, RunnerLease, RunnerStore, StoreBackend
from flightstate_runner import probes
from flightstate_runner.config import RunnerConfig, redact
from flightstate_runner.wiring import backend_for, require_schema

__all__ = ["collect", "outbox_report", "parked_error", "render"]


def _leader(lease: RunnerLease, runners: list[dict[str, Any]]) -> dict[str, Any] | None:
    found = lease.status()
    if found is None:
        return None
    epoch, holder, unexpired = found
    active = bool(holder and unexpired)
    since = next((r["leader_since"] for r in runners
                  if r["lease_holder"] == holder and r["epoch"] == epoch), None)  # fmt: skip
    name, instance = split_holder(holder) if active else (None, None)
    return {"holder": name, "instance": instance, "lease_holder": holder if active else None,
            "epoch": epoch, "active": active, "since": since if active else None}  # fmt: skip


def _named(runners: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The heartbeats' holders (``name#instance``) as name and instance: operators see the
    configured name; the instance tells two processes of one name apart."""
    named = []
    for runner in runners:
        name, instance = split_holder(runner["holder"])
        named.append({**runner, "holder": name, "instance": instance,
                      "lease_holder": runner["holder"]})  # fmt: skip
    return named


_PARKED_LISTED = 20


def outbox_report(outbox: Outbox) -> dict[str, Any]:
    """The outbox part of ``status``: the backlog and the unresolved parked events (not
    deliverable for a permanent reason; docs/design.md "Outbox dispatch"), oldest first."""
    backlog = outbox.backlog()
    parked = outbox.parked(_PARKED_LISTED)
    count = outbox.parked_count()
    return {"backlog": backlog.count, "oldest_age_s": backlog.oldest_age_s,
            "parked": count,
            "parked_listed": [
                {"event_id": p.event_id, "flid": p.flid, "topic": p.topic,
                 "state_version": p.state_version, "size_bytes": p.size_bytes,
                 "reason": p.reason,
                 "parked_at": p.parked_at.isoformat() if p.parked_at else None}
                for p in parked]}  # fmt: skip


def parked_error(outbox: dict[str, Any]) -> str | None:
    """``last_error`` when no runner reported one but events are parked (the newest)."""
    if not outbox["parked_listed"]:
        return None
    last = outbox["parked_listed"][-1]
    return (
        f"outbox event {last['event_id']} ({last['topic']} of FLID {last['flid']}, "
        f"{last['size_bytes']} bytes) parked: {last['reason']}"
    )


_GAPS_LISTED = 10


def _gaps(store: RunnerStore) -> dict[str, Any]:
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


def collect(config: RunnerConfig, dead_limit: int = 10) -> dict[str, Any]:
    """Everything ``status`` shows."""
    backend = require_schema(backend_for(config, "status"))
    store, queries = backend.store(cache=False), backend.queries()
    lease, outbox = backend.lease(), backend.outbox()
    try:
        return _report(config, backend, store, queries, lease, outbox, dead_limit)
    finally:
        for adapter in (store, queries, lease, outbox, backend):
            close = getattr(adapter, "close", None)
            if close is not None:
                close()


def _inbox_lag(config: RunnerConfig, queries: OperatorQueries,
               cursor: int | None) -> dict[str, Any]:  # fmt: skip
    """The inbox's lag, or why it cannot be read (``error``): the rest of ``status`` is
    still worth showing when the inbox is down or its login refused."""
    try:
        return {**probes.inbox_lag(config, queries, cursor).as_dict(), "error": None}
    except FlightstateError as exc:
        return {"lag": None, "head_id": None, "head_age_s": None, "last_id": None,
                "error": str(redact(str(exc)))}  # fmt: skip


def _report(config: RunnerConfig, backend: StoreBackend, store: RunnerStore,  # noqa: PLR0917
            queries: OperatorQueries, lease: RunnerLease, outbox: Outbox,
            dead_limit: int) -> dict[str, Any]:  # fmt: skip
    """``collect`` on open adapters."""
    cursor = store.inbox_cursor()
    gaps = _gaps(store)
    requests = queries.request_status(listed=20).as_dict()
    lag = _inbox_lag(config, queries, cursor)
    beat = queries.last_heartbeat()
    dead = queries.dead_messages(dead_limit)
    runners = _named(queries.live_runners(probes.HEARTBEAT_FRESH_S))
    leader = _leader(lease, runners)
    holder = leader["lease_holder"] if leader else None
    outbox_part = outbox_report(outbox)
    return {
        "leader": leader,
        "standbys": [
            {"holder": r["holder"], "instance": r["instance"], "last_report": r["updated_at"]}
            for r in runners
            if r["lease_holder"] != holder
        ],
        "inbox": {
            "table": config.inbox_table,
            "kind": "mysql" if config.inbox == "mysql" else backend.kind,
            "cursor": cursor,
            **lag,
            "gaps": gaps,
        },
        "store": backend.kind,
        "outcomes": queries.outcome_counts(),
        "dead": dead,
        "dead_by_reason": queries.dead_by_reason(20),
        "backfill_backlog": queries.pending_backfills(),
        "backfill_failures": queries.failing_backfills(),
        "outbox": outbox_part,
        "requests": requests,
        "last_error": (beat["last_error"] if beat else None) or parked_error(outbox_part),
        "last_runner": _named([beat])[0] if beat else None,
        "config": config.describe(),
    }


def _leader_line(leader: dict[str, Any] | None) -> str:
    if leader is None or not leader["active"]:
        return "leader:   none (no live lease)"
    return (
        f"leader:   {_who(leader)} (epoch {leader['epoch']}), since "
        f"{leader['since'] or 'unknown (not a runner, or no heartbeat yet)'}"
    )


def _who(runner: dict[str, Any]) -> str:
    """``name [instance abc123]`` (no instance: a holder of an older release)."""
    instance = runner.get("instance")
    return f"{runner['holder']} [instance {instance}]" if instance else str(runner["holder"])


def _inbox_line(inbox: dict[str, Any]) -> str:
    cursor = inbox["cursor"]
    where = f"cursor #{cursor}" if cursor is not None else "cursor none (nothing processed yet)"
    line = f"inbox:    {inbox['kind']} {inbox['table']}, {where}"
    if inbox.get("error"):
        return f"{line}, lag unknown: {inbox['error']}"
    line += f", lag {inbox['lag']} message(s)"
    if inbox["head_id"] is not None and inbox["head_age_s"] is not None:
        line += f", head #{inbox['head_id']} waiting {inbox['head_age_s']:.0f} s"
    return line


def _head_failing_line(beat: dict[str, Any] | None) -> list[str]:
    """The failing head message as the last runner heartbeat reported it (none: no line)."""
    head = ((beat or {}).get("stats") or {}).get("head_failing")
    if not head:
        return []
    return [f"failing:  head #{head['message_id']}, {head['attempts']} failed attempt(s) in "
            f"{head['seconds']:.0f} s; retry budget counted {head['budget_attempts']} "
            f"attempt(s), {head['budget_seconds']:.0f} s while the store answered"]  # fmt: skip


def _dead_lines(report: dict[str, Any]) -> list[str]:
    total = report["outcomes"].get("DEAD", 0)
    if not total:
        return ["DEAD:     none"]
    reasons = report["dead_by_reason"]
    lines = [f"DEAD:     {total} message(s), by reason (most frequent first):"]
    lines += [f"  {r['count']:>6}  {r['reason']}  (newest #{r['newest_id']})" for r in reasons]
    listed = sum(r["count"] for r in reasons)
    if listed < total:
        lines.append(f"  {total - listed:>6}  (other reasons)")
    ids = ", ".join(f"#{d['message_id']}" for d in report["dead"])
    lines.append(f"  newest: {ids}  (`flightstate requeue ID` once the cause is fixed)")
    return lines


def _gap_line(gaps: dict[str, Any]) -> str:
    oldest = gaps["oldest_age_s"]
    return (
        f"gaps:     {gaps['open']} open ({gaps['open_ids']} id(s))"
        + (f", oldest {oldest:.0f} s" if oldest is not None else "")
        + f"; {gaps['late_rows']} late row(s) applied, {gaps['abandoned']} gap(s) abandoned"
    )


def _parked_lines(outbox: dict[str, Any]) -> list[str]:
    if not outbox["parked"]:
        return ["parked:   none"]
    lines = [
        f"parked:   {outbox['parked']} outbox event(s) not deliverable (permanent reason;"
        " `flightstate republish --flid FLID` once the cause is fixed):"
    ]
    lines += [
        f"  event {p['event_id']}  {p['topic']}  FLID {p['flid']}  v{p['state_version']}"
        f"  {p['size_bytes']} bytes  {p['reason']}"
        for p in outbox["parked_listed"]
    ]
    return lines


def render(report: dict[str, Any]) -> str:
    """Human text of a ``collect`` report."""
    failing = report["backfill_failures"]
    lines = [
        _leader_line(report["leader"]),
        "standby:  " + (", ".join(f"{_who(s)} (last report {s['last_report']})"
                                  for s in report["standbys"]) or "none"),
        _inbox_line(report["inbox"]),
        *_head_failing_line(report["last_runner"]),
        _gap_line(report["inbox"]["gaps"]),
        "outcomes: " + (", ".join(f"{k} {v}" for k, v in report["outcomes"].items()) or "none"),
        f"backfill: {report['backfill_backlog']} pending write-back(s)"
        + (f", {failing['failing']} failing (up to {failing['max_attempts']} attempt(s)), "
           f"last: {failing['last_error']}" if failing["failing"] else ""),
        f"outbox:   {report['outbox']['backlog']} undelivered event(s)"
        + (f", oldest {report['outbox']['oldest_age_s']:.0f} s"
           if report["outbox"]["oldest_age_s"] is not None else ""),
        "requests: " + ", ".join(
            f"{k} {report['requests'][k]}" for k in ("open", "answered", "failed", "unsolicited")
        ),
        *_parked_lines(report["outbox"]),
        f"last error: {report['last_error'] or 'none'}",
        *_dead_lines(report),
    ]  # fmt: skip
    failed = [r for r in report["requests"]["requests"] if r["status"] == "FAILED"]
    if failed:
        lines += [f"FAILED schedule requests ({len(failed)} shown):"] + [
            f"  request {r['requestId']} {r['windowStart']} .. {r['windowEnd']}, "
            f"{r['attempts']} attempt(s)"
            for r in failed
        ]
    return "\n".join(lines)
