"""Deployment checks of the PostgreSQL store (``flightstate check``), read-only.

Reachable; the schema at exactly the migrations this code carries (behind: run
``migrate``; ahead: this code is older than the database); the session limits in effect
on a session opened as the runner opens them (a connection pooler that drops startup
options would leave every wait unbounded); the server's clock; and who holds the lease.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Final

import psycopg
from psycopg.conninfo import conninfo_to_dict
from yoyo import read_migrations

from flightstate_core.domain.errors import FlightstateError
from flightstate_core.support.dsn import redact
from flightstate_core.support.preflight import (
    Check,
    failed,
    leader_check,
    passed,
    schema_check,
    skew_check,
)
from flightstate_pg.lease import PgLeaderLease
from flightstate_pg.migrate import MIGRATIONS_DIR, applied_migrations
from flightstate_pg.session import SessionLimits, with_session_limits

__all__ = ["store_checks"]

_LIMITS: Final = (
    "SELECT name, setting FROM pg_settings WHERE name IN "
    "('lock_timeout', 'idle_in_transaction_session_timeout', 'statement_timeout')"
)


def store_checks(
    dsn: str,
    limits: SessionLimits | None = None,
    *,
    connect_timeout: int = 5,
    host_clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> list[Check]:
    """The store's checks; an unreachable server is one failed check."""
    where = _where(dsn)
    session = dsn if limits is None else with_session_limits(dsn, limits)
    try:
        conn = psycopg.connect(session, autocommit=True, connect_timeout=connect_timeout)
    except psycopg.Error as exc:
        fix = "check the store DSN (host, port, user, password, database) and the network"
        return [failed("store reachable", f"{where}: {_one_line(exc)}", fix)]
    with conn:
        checks = [passed("store reachable", where)]
        if limits is not None:
            checks.append(_limits_check(conn, limits))
        checks.append(_clock_check(conn, host_clock))
    schema = _schema_check(dsn)
    checks.append(schema)
    if schema.ok:
        checks.append(_leader_check(dsn))
    return checks


def _where(dsn: str) -> str:
    """host:port/database, never the user or password."""
    params = conninfo_to_dict(dsn)
    host = params.get("host") or "localhost"
    return f"{host}:{params.get('port') or 5432}/{params.get('dbname', '')}"


def _one_line(exc: BaseException) -> str:
    return str(redact(" ".join(str(exc).split())))[:300]


def _expected_ms(limits: SessionLimits) -> dict[str, int]:
    def ms(seconds: float) -> int:
        return max(1, round(seconds * 1000)) if seconds else 0

    return {
        "lock_timeout": ms(limits.lock_timeout),
        "idle_in_transaction_session_timeout": ms(limits.idle_in_transaction),
        "statement_timeout": ms(limits.statement_timeout),
    }


def _limits_check(conn: psycopg.Connection[Any], limits: SessionLimits) -> Check:
    found = {str(name): int(value) for name, value in conn.execute(_LIMITS).fetchall()}
    expected = _expected_ms(limits)
    text = ", ".join(f"{name}={found.get(name)} ms" for name in expected)
    wrong = [name for name, value in expected.items() if found.get(name) != value]
    if not wrong:
        return passed("store session limits", text)
    return failed("store session limits", text,
                  f"{', '.join(wrong)} differ from the configured limits: connect directly, "
                  "or through a pooler that passes startup options")  # fmt: skip


def _clock_check(conn: psycopg.Connection[Any], host_clock: Callable[[], datetime]) -> Check:
    before = host_clock()
    row = conn.execute("SELECT clock_timestamp()").fetchone()
    after = host_clock()
    server = row[0] if row is not None else before
    return skew_check("store server", server.astimezone(UTC), before + (after - before) / 2)


def _schema_check(dsn: str) -> Check:
    expected = [migration.id for migration in read_migrations(str(MIGRATIONS_DIR))]
    try:
        applied = applied_migrations(dsn)
    except FlightstateError as exc:
        return failed("store schema", _one_line(exc), "run `flightstate migrate`")
    return schema_check(applied, expected)


def _leader_check(dsn: str) -> Check:
    lease = PgLeaderLease(dsn)
    try:
        return leader_check(lease.status())
    finally:
        lease.close()
