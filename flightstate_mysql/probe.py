"""Connections and the lag probe for callers that must not name the driver (the runner).

Why: the runner asks "how far is the inbox ahead of the cursor" every 2 s and sets up lab
tables; it keeps the connection these functions return as an opaque object, so PyMySQL is
imported only here (pyproject's import contract forbids it in the runner). Statements
bind their parameters; the table name is a validated plain name, quoted.
"""

from __future__ import annotations

import contextlib
from typing import Any, Final

import pymysql

from flightstate_core.ports import InboxLagRows
from flightstate_mysql._errors import translated
from flightstate_mysql.dsn import parse_mysql_dsn

__all__ = ["close_quietly", "connect", "inbox_lag"]

_LAG: Final = (
    "SELECT count(*), min(CMINMSGS_ID), max(CMINMSGS_ID) FROM `{t}` WHERE CMINMSGS_ID > %s"
)
# The head's DATE_RECEIVED and its age by the server's own clock (seconds).
_HEAD: Final = (
    "SELECT CMINMSGS_DATE_RECEIVED, TIMESTAMPDIFF(MICROSECOND, CMINMSGS_DATE_RECEIVED, NOW(6))"
    " / 1000000 FROM `{t}` WHERE CMINMSGS_ID = %s"
)


def connect(dsn: str, *, autocommit: bool = True) -> Any:
    """A connection on a ``mysql://`` DSN (core errors on failure)."""
    with translated("connecting to the MySQL inbox"):
        return pymysql.connect(autocommit=autocommit, **parse_mysql_dsn(dsn))


def close_quietly(conn: Any) -> None:
    """Close *conn*, ignoring a connection that is already broken."""
    with contextlib.suppress(Exception):
        conn.close()


def inbox_lag(conn: Any, table: str, after: int) -> InboxLagRows:
    """The inbox table past *after* on *conn* (a ``connect`` result)."""
    if "`" in table:
        raise ValueError(f"inbox table {table!r}: not a plain name")
    with translated("reading the MySQL inbox"), conn.cursor() as cur:
        cur.execute(_LAG.format(t=table), (after,))
        count, head, last = cur.fetchone() or (0, None, None)
        cur.execute(_HEAD.format(t=table), (head,))
        found = cur.fetchone()
    received, age = found if found else (None, None)
    return InboxLagRows(int(count), head, last, received, None if age is None else float(age))
