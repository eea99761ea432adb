"""Operator queries on Oracle 11g (``flightstate_core.ports.OperatorQueries``), twin of
``flightstate_pg.queries``: status probes, the runner's heartbeat (migration
0005_runner_tables), and the operator commands over ``lifecycle``/``requests``/``operator``.

Why on the shared pool: every call takes a pooled session and gives it back, so a query
object per thread costs no connection of its own. Statements are the registry's
(``_sql.runner``), checked by the 11g lint; rows are shaped exactly as PostgreSQL's twin
shapes them, so ``status`` reads one format.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any, Final

import oracledb

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.errors import ConfigError
from flightstate_core.engine.lifecycle import CleanupReport, RetentionPolicy
from flightstate_core.engine.requests import ReconcileReport, RequestStatusReport
from flightstate_core.ports import InboxLagRows, Outbound
from flightstate_oracle import _sql as sql
from flightstate_oracle import lifecycle, operator, requests
from flightstate_oracle._db import merge_many, query
from flightstate_oracle._errors import translated
from flightstate_oracle.store import OracleStore

__all__ = ["RUNNER_TABLES", "SCHEMA_TABLES", "OracleQueries"]

Rows = list[dict[str, object]]

#: The runner's tables (migration 0005_runner_tables).
RUNNER_TABLES: Final = ("RUNNER_HEARTBEAT", "RUNNER_REQUEUE")
#: Tables every store command reads; any one missing means `migrate` has not run.
SCHEMA_TABLES: Final = ("FLIGHT_SCHD", "PROC_STATE", "INBOX_CURSOR", "PIPELINE_LOCK")


def _utc(value: object) -> datetime:
    """A UTC time read back through SYS_EXTRACT_UTC (zone-less) as an aware datetime."""
    if not isinstance(value, datetime):
        raise TypeError(f"expected a time, got {type(value).__name__}")
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"expected a number, got {type(value).__name__}")
    return int(value)


def _text(value: object) -> str | None:
    return None if value is None else str(value)


class OracleQueries:
    """``OperatorQueries`` on a pool (``OracleStore.pool``)."""

    def __init__(self, pool: oracledb.ConnectionPool, config: CoreConfig, *,
                 inbox_name: str = "cminmsgs") -> None:  # fmt: skip
        self._pool = pool
        self._config = config
        self._store = OracleStore(pool, config, inbox_name=inbox_name)

    @contextmanager
    def _session(self) -> Iterator[oracledb.Connection]:
        """A pooled session for reads (rolled back: nothing is left open)."""
        with translated(), self._pool.acquire() as conn:
            yield conn
            conn.rollback()

    def _read(self, read: Callable[[oracledb.Connection], Rows]) -> Rows:
        """*read* on a pooled session (the registry's statements only: the lint sees them)."""
        with self._session() as conn:
            return read(conn)

    def _missing(self, tables: Sequence[str]) -> list[str]:
        missing = []
        with self._session() as conn:
            for table in tables:
                if _int(query(conn, sql.TABLE_PRESENT, {"TABLE_NAME": table})[0]["N"]) == 0:
                    missing.append(table)
        return missing

    def schema_missing(self) -> str | None:
        """The first flightstate table not in the schema (None: migrated)."""
        missing = self._missing(SCHEMA_TABLES)
        return missing[0] if missing else None

    def runner_tables_missing(self) -> list[str]:
        """RUNNER_HEARTBEAT / RUNNER_REQUEUE when absent (migration 0005)."""
        return self._missing(RUNNER_TABLES)

    def outcome_counts(self) -> dict[str, int]:
        """PROC_STATE rows by STATUS."""
        rows = self._read(lambda c: query(c, sql.OUTCOME_COUNTS))
        return {str(r["STATUS"]): _int(r["N"]) for r in rows}

    def dead_messages(self, limit: int) -> list[dict[str, Any]]:
        """The newest DEAD messages."""
        return [
            {"message_id": _int(r["MESSAGE_ID"]), "type": _text(r["MSG_TYPE"]),
             "styp": _text(r["MSG_STYP"]), "reason": _text(r["REASON"]),
             "attempts": _int(r["ATTEMPTS"]), "processed_at": _utc(r["PROCESSED_AT"]).isoformat()}
            for r in self._read(lambda c: query(c, sql.DEAD_NEWEST, {"MAX_ROWS": limit}))
        ]  # fmt: skip

    def dead_by_reason(self, limit: int) -> list[dict[str, Any]]:
        """DEAD counted by reason (its first 1000 characters), most frequent first."""
        rows = self._read(lambda c: query(c, sql.DEAD_BY_REASON, {"MAX_ROWS": limit}))
        return [{"reason": _text(r["REASON"]), "count": _int(r["N"]),
                 "newest_id": _int(r["NEWEST_ID"])} for r in rows]  # fmt: skip

    def pending_backfills(self) -> int:
        """PENDING write-backs."""
        return _int(self._read(lambda c: query(c, sql.BACKFILL_COUNT))[0]["N"])

    def failing_backfills(self) -> dict[str, Any]:
        """PENDING write-backs that failed at least once, with the newest one's error."""
        row = self._read(lambda c: query(c, sql.BACKFILL_FAILING))[0]
        newest, error = row["NEWEST"], None
        if newest is not None:
            params = {"MESSAGE_ID": _int(newest)}
            found = self._read(lambda c: query(c, sql.BACKFILL_LAST_ERROR, params))
            error = _text(found[0]["BACKFILL_ERROR"]) if found else None
        attempts = row["MAX_ATTEMPTS"]
        return {"failing": _int(row["N"]),
                "max_attempts": None if attempts is None else _int(attempts),
                "last_error": error}  # fmt: skip

    def outbox_counts(self) -> tuple[int, int]:
        """(MSG_EVENT rows, delivered rows)."""
        row = self._read(lambda c: query(c, sql.OUTBOX_COUNTS))[0]
        return _int(row["N"]), _int(row["DELIVERED"])

    def inbox_lag(self, table: str, after: int) -> InboxLagRows:
        """Refused: the Oracle store has no inbox table (the inbox is MySQL's cminmsgs)."""
        raise ConfigError(f"inbox_table: the Oracle store has no inbox table {table}: "
                          "set FLIGHTSTATE_MYSQL_DSN")  # fmt: skip

    def write_heartbeat(self, holder: str, *, leader: bool, last_error: str | None,
                        stats: dict[str, Any]) -> None:  # fmt: skip
        """Upsert this holder's heartbeat row (MERGE, retried on a concurrent insert)."""
        params = {
            "HOLDER": holder,
            "IS_LEADER": 1 if leader else 0,
            "LAST_ERROR": last_error or None,
            "STATS": json.dumps(stats, default=str),
        }
        with translated(), self._pool.acquire() as conn:
            merge_many(conn, sql.HEARTBEAT_MERGE, [params])
            conn.commit()

    def _beat(self, row: dict[str, object]) -> dict[str, Any]:
        stats = _text(row["STATS"])
        return {"holder": str(row["HOLDER"]), "updated_at": _utc(row["UPDATED_AT"]).isoformat(),
                "is_leader": bool(row["IS_LEADER"]), "last_error": _text(row.get("LAST_ERROR")),
                "stats": json.loads(stats) if stats else None}  # fmt: skip

    def last_heartbeat(self) -> dict[str, Any] | None:
        """The newest heartbeat (None: no table yet, or no runner ever ran)."""
        if self.runner_tables_missing():
            return None
        rows = self._read(lambda c: query(c, sql.HEARTBEAT_LAST, {"MAX_ROWS": 1}))
        return self._beat(rows[0]) if rows else None

    def live_runners(self, fresh_s: float) -> list[dict[str, Any]]:
        """Runners that reported within *fresh_s* and did not say they stopped."""
        if self.runner_tables_missing():
            return []
        found = []
        for row in self._read(lambda c: query(c, sql.HEARTBEAT_LIVE, {"FRESH_S": fresh_s})):
            beat = self._beat(row)
            stats = beat["stats"] or {}
            if stats.get("running") is not False:
                found.append({"holder": beat["holder"], "updated_at": beat["updated_at"],
                              "is_leader": beat["is_leader"], "epoch": stats.get("epoch"),
                              "leader_since": stats.get("leader_since")})  # fmt: skip
        return found

    def leader_since(self, holder: str, epoch: int) -> str | None:
        """When *holder* took the lease at *epoch*, from its heartbeat."""
        if self.runner_tables_missing():
            return None
        rows = self._read(lambda c: query(c, sql.HEARTBEAT_STATS, {"HOLDER": holder}))
        text = _text(rows[0]["STATS"]) if rows else None
        stats = json.loads(text) if text else {}
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
        """Nothing of its own: the pool belongs to the backend."""
