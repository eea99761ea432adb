"""Deployment checks of the Oracle store (``flightstate check``), read-only; twin of
``flightstate_pg.preflight``.

Reachable (with Oracle Client loaded); the database character set and every grant the
backend needs (``grants.preflight``: USER_SYS_PRIVS, ROLE_SYS_PRIVS and the V$ grants the
takeover reads); the server's clock; the schema at exactly this code's migrations. The
session limits are the pool's own (``call_timeout``, the lock wait of each statement), set
by this code, so there is nothing on the server to compare them with.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import oracledb

from flightstate_core.domain.errors import FlightstateError
from flightstate_core.support.preflight import Check, failed, passed, schema_check, skew_check
from flightstate_oracle import _sql as sql
from flightstate_oracle._db import query
from flightstate_oracle._errors import translated
from flightstate_oracle._steps import load_migrations
from flightstate_oracle.grants import preflight
from flightstate_oracle.migrate import applied_on

__all__ = ["store_checks"]

_GRANTS_FIX = "grant them as flightstate_oracle/README.md lists (`grants.render_grants`)"


def store_checks(
    connect: Callable[[], oracledb.Connection],
    where: str,
    *,
    host_clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> list[Check]:
    """The store's checks on sessions from *connect*; *where* names the server (never the
    password). An unreachable server is one failed check."""
    try:
        with translated():
            conn = connect()
    except FlightstateError as exc:
        return [failed("store reachable", f"{where}: {_one_line(exc)}",
                       "check the store DSN, the network and Oracle Client 19+")]  # fmt: skip
    try:
        checks = [passed("store reachable", where), *_grant_checks(conn)]
        checks.append(_clock_check(conn, host_clock))
    finally:
        conn.close()
    with translated():
        applied = applied_on(connect)
    checks.append(schema_check(applied, [m.id for m in load_migrations()]))
    return checks


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]


def _grant_checks(conn: oracledb.Connection) -> list[Check]:
    problems = preflight(conn)
    missing = [p.removeprefix("missing grant: ") for p in problems if p.startswith("missing grant")]
    charset = [p for p in problems if not p.startswith("missing grant")]
    return [
        failed("store character set", charset[0], "the schema needs an AL32UTF8 database")
        if charset else passed("store character set", "AL32UTF8"),
        failed("store grants", f"missing {', '.join(missing)}", _GRANTS_FIX)
        if missing else passed("store grants", "every privilege the backend uses"),
    ]  # fmt: skip


def _clock_check(conn: oracledb.Connection, host_clock: Callable[[], datetime]) -> Check:
    before = host_clock()
    with translated():
        rows = query(conn, sql.SERVER_CLOCK_UTC)
        conn.rollback()
    after = host_clock()
    server = rows[0]["NOW_UTC"] if rows else None
    if not isinstance(server, datetime):
        return failed("store server clock", "not read", "check the session can SELECT FROM DUAL")
    return skew_check("store server", server.replace(tzinfo=UTC), before + (after - before) / 2)
