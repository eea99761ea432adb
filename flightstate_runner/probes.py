"""Read-only probes for status and metrics: inbox lag, PROC_STATE counts, DEAD list, and the
runner's own two tables (heartbeat, requeue audit).

The ports carry no "how far behind are we" query, so these few statements live here, with
bound parameters and validated identifiers. Each probe opens a short autocommit
connection and closes it, except inside ``kept_connections()``: there the calling thread
keeps one connection per database between calls (the runner's monitor, which probes every
2 s). Inbox timestamps are airport-local and zone-less (docs/protocol.md §2), so ages are
computed in the airport zone.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import psycopg
from attrs import asdict, frozen
from psycopg import sql

from flightstate_core.domain.errors import ConfigError, PermanentError
from flightstate_runner.config import RunnerConfig

__all__ = [
    "InboxLag",
    "dead_by_reason",
    "dead_messages",
    "ensure_runner_tables",
    "inbox_lag",
    "kept_connections",
    "last_heartbeat",
    "leader_since",
    "live_runners",
    "outcome_counts",
    "pending_backfills",
    "write_heartbeat",
]

RUNNER_TABLES = ("RUNNER_HEARTBEAT", "RUNNER_REQUEUE")  # flightstate_pg migration 0005
_TABLE_EXISTS = "SELECT to_regclass(%s) IS NOT NULL"


@frozen
class InboxLag:
    """Rows after the cursor: how many, the head's id and age (seconds), the newest id."""

    lag: int
    head_id: int | None
    head_age_s: float | None
    last_id: int | None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)


class _Kept(threading.local):
    """This thread's open probe connections, while ``kept_connections()`` is active."""

    def __init__(self) -> None:
        self.active = False
        self.pg: dict[str, psycopg.Connection[Any]] = {}
        self.mysql: Any = None


_kept = _Kept()


@contextlib.contextmanager
def kept_connections() -> Iterator[None]:
    """Within: this thread's probes reuse their connections instead of connecting per call.

    Why: a connect per probe, every 2 s, cost the runner more CPU than everything else it did
    while idle, and PyMySQL's TLS-preferring connect loads the CA bundle while holding the
    interpreter lock (a pause of tens of ms for the pump and the dispatcher). A connection
    that failed is dropped and the next probe connects again."""
    _kept.active = True
    try:
        yield
    finally:
        _kept.active = False
        for conn in [*_kept.pg.values(), _kept.mysql]:
            if conn is not None:
                with contextlib.suppress(Exception):
                    conn.close()
        _kept.pg.clear()
        _kept.mysql = None


@contextlib.contextmanager
def _pg(dsn: str) -> Iterator[psycopg.Connection[Any]]:
    if not _kept.active:
        with psycopg.connect(dsn, autocommit=True, connect_timeout=10) as conn:
            yield conn
        return
    held = _kept.pg.get(dsn)
    if held is None or held.closed:
        held = _kept.pg[dsn] = psycopg.connect(dsn, autocommit=True, connect_timeout=10)
    try:
        yield held
    except psycopg.Error:
        _kept.pg.pop(dsn, None)
        with contextlib.suppress(Exception):
            held.close()
        raise


def _age(head: Sequence[Any] | None, inbox_tz: str) -> float | None:
    """The head's age in seconds: measured by the inbox server (its NOW minus the head's
    DATE_RECEIVED, one clock whatever its zone), or with a configured *inbox_tz*, from
    DATE_RECEIVED as wall time there (docs/design.md, "Operator view")."""
    if head is None or not isinstance(head[0], datetime):
        return None
    received: datetime = head[0]
    server_age = head[1]
    if inbox_tz:
        aware = received.replace(tzinfo=ZoneInfo(inbox_tz)) if received.tzinfo is None else received
        return max(0.0, (datetime.now(UTC) - aware).total_seconds())
    return None if server_age is None else max(0.0, float(server_age))


_LAG = "SELECT count(*), min(CMINMSGS_ID), max(CMINMSGS_ID) FROM {t} WHERE CMINMSGS_ID > %s"
# The head's DATE_RECEIVED and its age by the server's own clock (seconds).
_HEAD_MYSQL = (
    "SELECT CMINMSGS_DATE_RECEIVED, TIMESTAMPDIFF(MICROSECOND, CMINMSGS_DATE_RECEIVED, NOW(6))"
    " / 1000000 FROM {t} WHERE CMINMSGS_ID = %s"
)
_HEAD_PG = (
    "SELECT CMINMSGS_DATE_RECEIVED, extract(epoch FROM localtimestamp - CMINMSGS_DATE_RECEIVED)"
    " FROM {t} WHERE CMINMSGS_ID = %s"
)


def _mysql_lag(config: RunnerConfig, after: int) -> tuple[tuple[Any, ...], Any]:
    import pymysql  # noqa: PLC0415 - only with a MySQL inbox

    from flightstate_mysql import parse_mysql_dsn, translated  # noqa: PLC0415

    table = f"`{config.inbox_table}`"  # a plain name: validated by RunnerConfig
    with translated("inbox lag"):
        conn = _kept.mysql if _kept.active else None
        if conn is None:
            conn = pymysql.connect(autocommit=True, **parse_mysql_dsn(str(config.mysql_dsn)))
        keep = _kept.active
        try:
            with conn.cursor() as cur:
                cur.execute(_LAG.format(t=table), (after,))
                counted = cur.fetchone()
                cur.execute(_HEAD_MYSQL.format(t=table), (counted[1],))
                head = cur.fetchone()
        except Exception:
            keep = False
            raise
        finally:
            _kept.mysql = conn if keep else None
            if not keep:
                conn.close()
    return counted, head


def _pg_lag(config: RunnerConfig, pg_dsn: str, after: int) -> tuple[tuple[Any, ...], Any]:
    table = sql.Identifier(config.inbox_table.lower())
    with _pg(pg_dsn) as conn:
        try:
            found = conn.execute(sql.SQL(_LAG).format(t=table), (after,)).fetchone()
        except psycopg.errors.UndefinedTable as exc:
            raise PermanentError(
                f"inbox_table: no table {config.inbox_table} in the PostgreSQL database: "
                "run `flightstate inbox-init` (or set FLIGHTSTATE_INBOX_TABLE)"
            ) from exc
        counted = found or (0, None, None)
        head = conn.execute(sql.SQL(_HEAD_PG).format(t=table), (counted[1],)).fetchone()
    return counted, head


def inbox_lag(config: RunnerConfig, pg_dsn: str, cursor: int | None) -> InboxLag:
    """How far the inbox is ahead of *cursor* (rows with a greater CMINMSGS_ID)."""
    after = cursor or 0
    if config.mysql_dsn:
        counted, head_row = _mysql_lag(config, after)
    else:
        counted, head_row = _pg_lag(config, pg_dsn, after)
    count, head, last = counted
    return InboxLag(int(count), head, _age(head_row, config.inbox_tz), last)


# ---------------------------------------------------------------------- store side

_OUTCOMES = "SELECT STATUS, count(*) FROM PROC_STATE GROUP BY STATUS ORDER BY STATUS"
_DEAD = (
    "SELECT MESSAGE_ID, MSG_TYPE, MSG_STYP, REASON, ATTEMPTS, PROCESSED_AT FROM PROC_STATE "
    "WHERE STATUS = 'DEAD' ORDER BY MESSAGE_ID DESC LIMIT %s"
)
_BACKFILL = "SELECT count(*) FROM PROC_STATE WHERE BACKFILL_STATUS = 'PENDING'"


def outcome_counts(pg_dsn: str) -> dict[str, int]:
    """PROC_STATE rows by STATUS."""
    with _pg(pg_dsn) as conn:
        return {status: int(n) for status, n in conn.execute(_OUTCOMES).fetchall()}


def dead_messages(pg_dsn: str, limit: int = 50) -> list[dict[str, Any]]:
    """The newest DEAD messages (id, TYPE, STYP, reason, attempts, when)."""
    with _pg(pg_dsn) as conn:
        rows = conn.execute(_DEAD, (limit,)).fetchall()
    return [
        {"message_id": mid, "type": mtype, "styp": styp, "reason": reason,
         "attempts": attempts, "processed_at": at.isoformat() if at else None}
        for mid, mtype, styp, reason, attempts, at in rows
    ]  # fmt: skip


def pending_backfills(pg_dsn: str) -> int:
    """Committed messages whose outcome is not yet written back to the inbox."""
    with _pg(pg_dsn) as conn:
        row = conn.execute(_BACKFILL).fetchone()
    return int(row[0]) if row else 0


_BACKFILL_FAILING = (
    "SELECT count(*), max(BACKFILL_ATTEMPTS), "
    "(array_agg(BACKFILL_ERROR ORDER BY MESSAGE_ID DESC))[1] FROM PROC_STATE "
    "WHERE BACKFILL_STATUS = 'PENDING' AND BACKFILL_ERROR IS NOT NULL"
)


def failing_backfills(pg_dsn: str) -> dict[str, Any]:
    """Pending write-backs that failed at least once: how many, the most attempts, and the
    error of the newest (recorded in PROC_STATE by every failed attempt)."""
    with _pg(pg_dsn) as conn:
        row = conn.execute(_BACKFILL_FAILING).fetchone()
    count, attempts, error = row if row else (0, None, None)
    return {"failing": int(count), "max_attempts": attempts, "last_error": error}


# ---------------------------------------------------------------------- runner tables


def ensure_runner_tables(pg_dsn: str) -> None:
    """Check the runner's heartbeat and requeue-audit tables exist (migration 0005)."""
    with _pg(pg_dsn) as conn:
        missing = [
            table for table in RUNNER_TABLES
            if not conn.execute(_TABLE_EXISTS, (table.lower(),)).fetchone()[0]  # type: ignore[index]
        ]  # fmt: skip
    if missing:
        raise ConfigError(
            f"tables {', '.join(missing)} are missing: run `flightstate migrate` first"
        )


_BEAT = (
    "INSERT INTO RUNNER_HEARTBEAT (HOLDER, UPDATED_AT, IS_LEADER, LAST_ERROR, STATS) "
    "VALUES (%s, now(), %s, %s, %s) ON CONFLICT (HOLDER) DO UPDATE SET "
    "UPDATED_AT = now(), IS_LEADER = EXCLUDED.IS_LEADER, LAST_ERROR = EXCLUDED.LAST_ERROR, "
    "STATS = EXCLUDED.STATS"
)
_LAST_BEAT = (
    "SELECT HOLDER, UPDATED_AT, IS_LEADER, LAST_ERROR, STATS FROM RUNNER_HEARTBEAT "
    "ORDER BY UPDATED_AT DESC LIMIT 1"
)


def write_heartbeat(
    pg_dsn: str, holder: str, *, leader: bool, last_error: str | None, stats: dict[str, Any]
) -> None:
    """Record this process's state for ``status`` (best effort: the caller ignores errors)."""
    with _pg(pg_dsn) as conn:
        conn.execute(_BEAT, (holder, leader, last_error, json.dumps(stats, default=str)))


def last_heartbeat(pg_dsn: str) -> dict[str, Any] | None:
    """The most recent runner heartbeat, or None (no table yet, or no runner ever ran)."""
    with _pg(pg_dsn) as conn:
        try:
            row = conn.execute(_LAST_BEAT).fetchone()
        except psycopg.errors.UndefinedTable:
            return None
    if row is None:
        return None
    holder, at, leader, error, stats = row
    return {"holder": holder, "updated_at": at.isoformat(), "is_leader": leader,
            "last_error": error, "stats": json.loads(stats) if stats else None}  # fmt: skip


# A runner writes its heartbeat every 2 s; one silent for this long has stopped or hung.
HEARTBEAT_FRESH_S = 10.0
_RUNNERS = (
    "SELECT HOLDER, UPDATED_AT, IS_LEADER, STATS FROM RUNNER_HEARTBEAT "
    "WHERE UPDATED_AT > now() - make_interval(secs => %s) ORDER BY HOLDER"
)


def live_runners(pg_dsn: str, fresh_s: float = HEARTBEAT_FRESH_S) -> list[dict[str, Any]]:
    """Runner processes that reported within *fresh_s* and have not said they stopped:
    holder, last report, whether leading, epoch and since when (from their stats)."""
    with _pg(pg_dsn) as conn:
        try:
            rows = conn.execute(_RUNNERS, (fresh_s,)).fetchall()
        except psycopg.errors.UndefinedTable:
            return []
    found = []
    for holder, at, leader, stats_text in rows:
        stats = json.loads(stats_text) if stats_text else {}
        if stats.get("running") is False:
            continue
        found.append(
            {
                "holder": holder,
                "updated_at": at.isoformat(),
                "is_leader": leader,
                "epoch": stats.get("epoch"),
                "leader_since": stats.get("leader_since"),
            }
        )
    return found


_SINCE = "SELECT STATS FROM RUNNER_HEARTBEAT WHERE HOLDER = %s"


def leader_since(pg_dsn: str, holder: str, epoch: int) -> str | None:
    """When *holder* took the lease at *epoch* (ISO UTC), as its own heartbeat records it;
    None if it has not reported that epoch (yet), or is not a runner."""
    with _pg(pg_dsn) as conn:
        try:
            row = conn.execute(_SINCE, (holder,)).fetchone()
        except psycopg.errors.UndefinedTable:
            return None
    stats = json.loads(row[0]) if row and row[0] else {}
    return stats.get("leader_since") if stats.get("epoch") == epoch else None


_DEAD_REASONS = (
    "SELECT REASON, count(*), max(MESSAGE_ID) FROM PROC_STATE WHERE STATUS = 'DEAD' "
    "GROUP BY REASON ORDER BY count(*) DESC, REASON LIMIT %s"
)


def dead_by_reason(pg_dsn: str, limit: int = 20) -> list[dict[str, Any]]:
    """DEAD messages counted by reason, most frequent first (with the newest id of each)."""
    with _pg(pg_dsn) as conn:
        rows = conn.execute(_DEAD_REASONS, (limit,)).fetchall()
    return [{"reason": reason, "count": int(n), "newest_id": int(newest)}
            for reason, n, newest in rows]  # fmt: skip
