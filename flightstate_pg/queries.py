"""Operator queries on PostgreSQL (``flightstate_core.ports.OperatorQueries``): status
probes, the runner's heartbeat and requeue-audit tables (migration 0005), and the
operator commands over ``lifecycle``/``requests``/``operator``.

Why one object with one kept connection: the runner's monitor asks every 2 s, and a
connect per question cost more CPU than everything else an idle runner did. The connection
opens on first use and is reopened after a failure (``_pool.lazy_connection``); every
statement binds its parameters, table names are quoted identifiers.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, Final

from psycopg import sql

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.errors import PermanentError
from flightstate_core.engine.lifecycle import CleanupReport, RetentionPolicy
from flightstate_core.engine.requests import ReconcileReport, RequestStatusReport
from flightstate_core.ports import InboxLagRows, Outbound
from flightstate_pg import lifecycle, operator, requests
from flightstate_pg._errors import translated
from flightstate_pg._pool import lazy_connection
from flightstate_pg.store import PgStore

__all__ = ["RUNNER_TABLES", "SCHEMA_TABLES", "PgQueries"]

#: The runner's tables (migration 0005_runner_tables).
RUNNER_TABLES: Final = ("RUNNER_HEARTBEAT", "RUNNER_REQUEUE")
#: Tables every store command reads; any one missing means `migrate` has not run.
SCHEMA_TABLES: Final = ("flight_schd", "proc_state", "inbox_cursor", "pipeline_lock")

_TABLE_EXISTS: Final = "SELECT to_regclass(%s) IS NOT NULL"
_OUTCOMES: Final = "SELECT STATUS, count(*) FROM PROC_STATE GROUP BY STATUS ORDER BY STATUS"
_DEAD: Final = (
    "SELECT MESSAGE_ID, MSG_TYPE, MSG_STYP, REASON, ATTEMPTS, PROCESSED_AT FROM PROC_STATE "
    "WHERE STATUS = 'DEAD' ORDER BY MESSAGE_ID DESC LIMIT %s"
)
_DEAD_REASONS: Final = (
    "SELECT REASON, count(*), max(MESSAGE_ID) FROM PROC_STATE WHERE STATUS = 'DEAD' "
    "GROUP BY REASON ORDER BY count(*) DESC, REASON LIMIT %s"
)
_BACKFILL: Final = "SELECT count(*) FROM PROC_STATE WHERE BACKFILL_STATUS = 'PENDING'"
_BACKFILL_FAILING: Final = (
    "SELECT count(*), max(BACKFILL_ATTEMPTS), "
    "(array_agg(BACKFILL_ERROR ORDER BY MESSAGE_ID DESC))[1] FROM PROC_STATE "
    "WHERE BACKFILL_STATUS = 'PENDING' AND BACKFILL_ERROR IS NOT NULL"
)
# Delivered = at or below the dispatch watermark (migration 0004).
_OUTBOX_COUNTS: Final = (
    "SELECT count(*), count(*) FILTER (WHERE EVENT_ID <= (SELECT LAST_EVENT_ID "
    "FROM OUTBOX_WATERMARK WHERE OUTBOX_NAME = 'kafka')) FROM MSG_EVENT"
)
_LAG: Final = "SELECT count(*), min(CMINMSGS_ID), max(CMINMSGS_ID) FROM {t} WHERE CMINMSGS_ID > %s"
# The head's DATE_RECEIVED and its age by the server's own clock (seconds).
_HEAD: Final = (
    "SELECT CMINMSGS_DATE_RECEIVED, extract(epoch FROM localtimestamp - CMINMSGS_DATE_RECEIVED)"
    " FROM {t} WHERE CMINMSGS_ID = %s"
)
_BEAT: Final = (
    "INSERT INTO RUNNER_HEARTBEAT (HOLDER, UPDATED_AT, IS_LEADER, LAST_ERROR, STATS) "
    "VALUES (%s, now(), %s, %s, %s) ON CONFLICT (HOLDER) DO UPDATE SET "
    "UPDATED_AT = now(), IS_LEADER = EXCLUDED.IS_LEADER, LAST_ERROR = EXCLUDED.LAST_ERROR, "
    "STATS = EXCLUDED.STATS"
)
_LAST_BEAT: Final = (
    "SELECT HOLDER, UPDATED_AT, IS_LEADER, LAST_ERROR, STATS FROM RUNNER_HEARTBEAT "
    "ORDER BY UPDATED_AT DESC LIMIT 1"
)
_RUNNERS: Final = (
    "SELECT HOLDER, UPDATED_AT, IS_LEADER, STATS FROM RUNNER_HEARTBEAT "
    "WHERE UPDATED_AT > now() - make_interval(secs => %s) ORDER BY HOLDER"
)
_SINCE: Final = "SELECT STATS FROM RUNNER_HEARTBEAT WHERE HOLDER = %s"


def _heartbeat_entry(holder: str, at: datetime, leader: bool, error: str | None,
                    stats_text: str | None) -> dict[str, Any]:  # fmt: skip
    """One heartbeat row as ``status`` shows it."""
    stats = json.loads(stats_text) if stats_text else None
    return {"holder": holder, "updated_at": at.isoformat(), "is_leader": bool(leader),
            "last_error": error, "stats": stats}  # fmt: skip


def _live_entries(rows: Sequence[Sequence[Any]]) -> list[dict[str, Any]]:
    """Fresh heartbeat rows (holder, at, leader, stats) of runners that did not stop."""
    found = []
    for holder, at, leader, stats_text in rows:
        stats = json.loads(stats_text) if stats_text else {}
        if stats.get("running") is False:
            continue
        found.append(
            {
                "holder": holder,
                "updated_at": at.isoformat(),
                "is_leader": bool(leader),
                "epoch": stats.get("epoch"),
                "leader_since": stats.get("leader_since"),
            }
        )
    return found


def _dead_entries(rows: Sequence[Sequence[Any]]) -> list[dict[str, Any]]:
    """DEAD PROC_STATE rows as ``status`` lists them."""
    return [
        {"message_id": int(mid), "type": mtype, "styp": styp, "reason": reason,
         "attempts": attempts, "processed_at": at.isoformat() if at else None}
        for mid, mtype, styp, reason, attempts, at in rows
    ]  # fmt: skip


class PgQueries:
    """``OperatorQueries`` on one DSN: one kept autocommit connection for the probes, and
    a store (own small pool) for the operator commands."""

    def __init__(self, dsn: str, config: CoreConfig, *, inbox_name: str = "cminmsgs") -> None:
        self._db = lazy_connection(dsn, 10)
        self._config = config
        self._store = PgStore(dsn, config, inbox_name=inbox_name, state_cache_size=0)

    def _rows(self, query: str | sql.Composed, params: Sequence[Any] = ()) -> list[Any]:
        with translated(), self._db.use() as conn:
            return conn.execute(query, params).fetchall()

    def _missing(self, tables: Sequence[str]) -> list[str]:
        with translated(), self._db.use() as conn:
            found = [(t, conn.execute(_TABLE_EXISTS, (t.lower(),)).fetchone()) for t in tables]
        return [table for table, exists in found if exists == (False,)]

    def schema_missing(self) -> str | None:
        """The first flightstate table not in the database (None: migrated)."""
        missing = self._missing(SCHEMA_TABLES)
        return missing[0] if missing else None

    def runner_tables_missing(self) -> list[str]:
        """RUNNER_HEARTBEAT / RUNNER_REQUEUE when absent (migration 0005)."""
        return self._missing(RUNNER_TABLES)

    def outcome_counts(self) -> dict[str, int]:
        """PROC_STATE rows by STATUS."""
        return {status: int(n) for status, n in self._rows(_OUTCOMES)}

    def dead_messages(self, limit: int) -> list[dict[str, Any]]:
        """The newest DEAD messages."""
        return _dead_entries(self._rows(_DEAD, (limit,)))

    def dead_by_reason(self, limit: int) -> list[dict[str, Any]]:
        """DEAD counted by reason, most frequent first."""
        return [{"reason": reason, "count": int(n), "newest_id": int(newest)}
                for reason, n, newest in self._rows(_DEAD_REASONS, (limit,))]  # fmt: skip

    def pending_backfills(self) -> int:
        """PENDING write-backs."""
        rows = self._rows(_BACKFILL)
        return int(rows[0][0]) if rows else 0

    def failing_backfills(self) -> dict[str, Any]:
        """PENDING write-backs that failed at least once."""
        rows = self._rows(_BACKFILL_FAILING)
        count, attempts, error = rows[0] if rows else (0, None, None)
        return {"failing": int(count), "max_attempts": attempts, "last_error": error}

    def outbox_counts(self) -> tuple[int, int]:
        """(MSG_EVENT rows, delivered rows)."""
        rows = self._rows(_OUTBOX_COUNTS)
        total, delivered = rows[0] if rows else (0, 0)
        return int(total), int(delivered)

    def inbox_lag(self, table: str, after: int) -> InboxLagRows:
        """The PostgreSQL inbox table past *after*."""
        name = sql.Identifier(table.lower())
        if self._missing([table]):
            raise PermanentError(
                f"inbox_table: no table {table} in the PostgreSQL database: "
                "run `flightstate inbox-init` (or set FLIGHTSTATE_INBOX_TABLE)"
            )
        rows = self._rows(sql.SQL(_LAG).format(t=name), (after,))
        count, head, last = rows[0] if rows else (0, None, None)
        found = self._rows(sql.SQL(_HEAD).format(t=name), (head,)) if head is not None else []
        received, age = found[0] if found else (None, None)
        return InboxLagRows(int(count), head, last, received,
                            None if age is None else float(age))  # fmt: skip

    def write_heartbeat(self, holder: str, *, leader: bool, last_error: str | None,
                        stats: dict[str, Any]) -> None:  # fmt: skip
        """Upsert this holder's heartbeat row."""
        with translated(), self._db.use() as conn:
            conn.execute(_BEAT, (holder, leader, last_error, json.dumps(stats, default=str)))

    def last_heartbeat(self) -> dict[str, Any] | None:
        """The newest heartbeat (None: no table yet, or no runner ever ran)."""
        if self.runner_tables_missing():
            return None
        rows = self._rows(_LAST_BEAT)
        return _heartbeat_entry(*rows[0]) if rows else None

    def live_runners(self, fresh_s: float) -> list[dict[str, Any]]:
        """Runners that reported within *fresh_s* and did not say they stopped."""
        if self.runner_tables_missing():
            return []
        return _live_entries(self._rows(_RUNNERS, (fresh_s,)))

    def leader_since(self, holder: str, epoch: int) -> str | None:
        """When *holder* took the lease at *epoch*, from its heartbeat."""
        if self.runner_tables_missing():
            return None
        rows = self._rows(_SINCE, (holder,))
        stats = json.loads(rows[0][0]) if rows and rows[0][0] else {}
        return stats.get("leader_since") if stats.get("epoch") == epoch else None

    def run_cleanup(self, policy: RetentionPolicy, *, now: datetime, epoch: int | None = None,
                    limit: int | None = None) -> CleanupReport:  # fmt: skip
        """``lifecycle.run_cleanup`` on this store."""
        return lifecycle.run_cleanup(self._store, policy, self._config, now=now, epoch=epoch,
                                     limit=limit)  # fmt: skip

    def request_schedule(self, outbound: Outbound, start: datetime, end: datetime, *,
                         now: datetime) -> int:  # fmt: skip
        """``requests.request_schedule`` on this store."""
        return requests.request_schedule(self._store, outbound, start, end, now=now,
                                         config=self._config)  # fmt: skip

    def resend_due(self, outbound: Outbound, *, now: datetime, timeout: timedelta,
                   max_attempts: int) -> None:  # fmt: skip
        """``requests.resend_due`` on this store."""
        requests.resend_due(self._store, outbound, now=now, config=self._config,
                            timeout=timeout, max_attempts=max_attempts)  # fmt: skip

    def reconcile_responses(self, *, now: datetime) -> ReconcileReport:
        """``requests.reconcile_responses`` on this store."""
        return requests.reconcile_responses(self._store, self._config, now=now)

    def request_status(self, *, listed: int = 50) -> RequestStatusReport:
        """``requests.request_status`` on this store."""
        return requests.request_status(self._store, listed=listed)

    def republish(self, *, now: datetime, flids: Sequence[str] | None = None) -> int:
        """``operator.republish`` on this store."""
        return operator.republish(self._store, self._config, now=now,
                                  flids=list(flids) if flids else None)  # fmt: skip

    def flight_history(self, flid: str) -> list[dict[str, Any]]:
        """``operator.flight_history`` on this store."""
        return operator.flight_history(self._store, flid)

    def close(self) -> None:
        """End the kept connection and the store's pool."""
        self._db.close()
        self._store.close()
