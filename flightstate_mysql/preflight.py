"""Deployment checks of the AODB inbox (``flightstate check``), read-only.

Everything is learned by reading the server: the table's columns from
``information_schema.COLUMNS``, the account's privileges from the four
``information_schema.*_PRIVILEGES`` views, the server's clock and zone from ``NOW(6)`` and
``UTC_TIMESTAMP(6)``. Nothing is written to the AODB's table to find out whether a write
would be allowed: the table belongs to the AODB interface, and a test write there is a
message the interface would see.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Final
from zoneinfo import ZoneInfo

import pymysql

from flightstate_core.support.dsn import redact
from flightstate_core.support.preflight import (
    Check,
    failed,
    passed,
    skew_check,
    zone_offset_check,
)
from flightstate_mysql.dsn import parse_mysql_dsn

__all__ = ["READ_COLUMNS", "WRITTEN_COLUMNS", "inbox_checks"]

#: What the pump reads (flightstate_mysql.inbox: sizes, texts, received times, gap reads).
READ_COLUMNS: Final = (
    "CMINMSGS_ID", "CMINMSGS_CLOB_MSG", "CMINMSGS_DATE_RECEIVED", "CMINMSGS_DATE_PROCESSED",
)  # fmt: skip
#: What the backfill writes (one UPDATE per chunk of finished messages).
WRITTEN_COLUMNS: Final = (
    "CMINMSGS_DATE_PROCESSED", "CMINMSGS_STATUS", "CMINMSGS_SUBSYSTEM_NAME",
    "CMINMSGS_SUBSYSTEM_SEQUENCE", "CMINMSGS_SUBSYSTEM_DATE_SENT", "CMINMSGS_SUBSYSTEM_TYPE",
    "CMINMSGS_SUBSYSTEM_SUBTYPE",
)  # fmt: skip

_COLUMNS: Final = (
    "SELECT UPPER(COLUMN_NAME) FROM information_schema.COLUMNS "
    "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = %s"
)
# (privilege, column or NULL for the whole table) of the account, from every level a grant
# can be made at; ALL PRIVILEGES appears here as its single privileges.
_PRIVILEGES: Final = (
    "SELECT PRIVILEGE_TYPE, NULL FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = %s "
    "UNION ALL SELECT PRIVILEGE_TYPE, NULL FROM information_schema.SCHEMA_PRIVILEGES "
    "WHERE GRANTEE = %s AND TABLE_SCHEMA = DATABASE() "
    "UNION ALL SELECT PRIVILEGE_TYPE, NULL FROM information_schema.TABLE_PRIVILEGES "
    "WHERE GRANTEE = %s AND TABLE_SCHEMA = DATABASE() AND TABLE_NAME = %s "
    "UNION ALL SELECT PRIVILEGE_TYPE, UPPER(COLUMN_NAME) "
    "FROM information_schema.COLUMN_PRIVILEGES "
    "WHERE GRANTEE = %s AND TABLE_SCHEMA = DATABASE() AND TABLE_NAME = %s"
)
_CLOCK: Final = "SELECT UTC_TIMESTAMP(6), TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(6), NOW(6))"

Connection = Any  # pymysql.connections.Connection: its stubs are generic over the cursor


def inbox_checks(
    dsn: str,
    table: str,
    *,
    airport_tz: str,
    inbox_tz: str | None = None,
    connect_timeout: int = 5,
    host_clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> list[Check]:
    """The inbox's checks: reachable, table and columns, grants, clock and zone. An
    unreachable server is one failed check (the others cannot be read)."""
    where = _where(dsn)
    try:
        conn = pymysql.connect(connect_timeout=connect_timeout, autocommit=True,
                               **parse_mysql_dsn(dsn))  # fmt: skip
    except (pymysql.Error, ValueError) as exc:
        fix = "check FLIGHTSTATE_MYSQL_DSN (host, port, user, password, database)"
        return [failed("inbox reachable", f"{where}: {_one_line(exc)}", fix)]
    try:
        checks = [passed("inbox reachable", where)]
        columns = _columns(conn, table)
        checks.append(_table_check(table, columns))
        if columns:
            checks.append(_grants_check(conn, table))
        checks += _clock_checks(conn, airport_tz, inbox_tz, host_clock)
        return checks
    finally:
        conn.close()


def _where(dsn: str) -> str:
    """host:port/database, never the user or password."""
    try:
        kwargs = parse_mysql_dsn(dsn)
    except ValueError:
        return "the configured DSN"
    return f"{kwargs.get('host', '?')}:{kwargs.get('port', 3306)}/{kwargs.get('database', '')}"


def _one_line(exc: BaseException) -> str:
    return str(redact(" ".join(str(exc).split())))[:300]


def _columns(conn: Connection, table: str) -> set[str]:
    with conn.cursor() as cur:
        cur.execute(_COLUMNS, (table,))
        return {str(row[0]) for row in cur.fetchall()}


def _table_check(table: str, columns: set[str]) -> Check:
    name = f"inbox table {table}"
    if not columns:
        return failed(name, "not found in the DSN's database",
                      "point FLIGHTSTATE_MYSQL_DSN at the AODB's database, or set "
                      "FLIGHTSTATE_INBOX_TABLE")  # fmt: skip
    missing = [c for c in dict.fromkeys((*READ_COLUMNS, *WRITTEN_COLUMNS)) if c not in columns]
    if missing:
        # information_schema shows an account only the columns it holds a privilege on, so
        # a column may be missing or merely invisible: the grants line tells which.
        return failed(name, f"missing or not visible to this account: {', '.join(missing)}",
                      "the table must have the inbox layout the AODB interface writes, and "
                      "the account the grants below")  # fmt: skip
    return passed(name, f"{len(columns)} columns, the pump's all present")


def _account(conn: Connection) -> str:
    with conn.cursor() as cur:
        cur.execute("SELECT CURRENT_USER()")
        row = cur.fetchone()
    user, _, host = str(row[0]).rpartition("@")
    return f"'{user}'@'{host}'"


def _privileges(conn: Connection, table: str, grantee: str) -> set[tuple[str, str | None]]:
    with conn.cursor() as cur:
        cur.execute(_PRIVILEGES, (grantee, grantee, grantee, table, grantee, table))
        return {(str(kind).upper(), column) for kind, column in cur.fetchall()}


def _lacking(held: set[tuple[str, str | None]], kind: str, columns: Sequence[str]) -> list[str]:
    if (kind, None) in held:
        return []
    return [column for column in columns if (kind, column) not in held]


def _grants_check(conn: Connection, table: str) -> Check:
    grantee = _account(conn)
    held = _privileges(conn, table, grantee)
    lacking = [f"SELECT ({c})" for c in _lacking(held, "SELECT", READ_COLUMNS)]
    lacking += [f"UPDATE ({c})" for c in _lacking(held, "UPDATE", WRITTEN_COLUMNS)]
    name = f"grants of {grantee} on {table}"
    if not lacking:
        return passed(name, "SELECT and UPDATE on the columns the pump uses")
    grant = (f"GRANT SELECT ({', '.join(READ_COLUMNS)}), "
             f"UPDATE ({', '.join(WRITTEN_COLUMNS)}) ON {table} TO {grantee}")  # fmt: skip
    return failed(name, f"missing {', '.join(lacking)}", grant)


def _clock_checks(
    conn: Connection, airport_tz: str, inbox_tz: str | None, host_clock: Callable[[], datetime]
) -> list[Check]:
    with conn.cursor() as cur:
        before = host_clock()
        cur.execute(_CLOCK)
        after = host_clock()
        server_utc, offset_s = cur.fetchone()
    host_utc = before + (after - before) / 2
    offset = timedelta(seconds=int(offset_s))
    if inbox_tz:  # the inbox's times are read as wall time there: it must be the server's
        zone = ZoneInfo(inbox_tz)
        described = f"FLIGHTSTATE_INBOX_TZ={inbox_tz}"
        fix = "set FLIGHTSTATE_INBOX_TZ to the zone of the inbox server's clock"
    else:  # the backfill writes airport time beside the server's DATE_RECEIVED
        zone = ZoneInfo(airport_tz)
        described = f"FLIGHTSTATE_AIRPORT_TZ={airport_tz}"
        fix = (f"run the inbox server (its time_zone) on {airport_tz}, as the AODB's times "
               "are; or, if the AODB stamps its times in the server's zone, set "
               "FLIGHTSTATE_INBOX_TZ to that zone")  # fmt: skip
    return [
        skew_check("inbox server", server_utc.replace(tzinfo=UTC), host_utc),
        zone_offset_check(
            "inbox time zone", offset, zone, described=described, fix=fix, at=host_utc
        ),
    ]
