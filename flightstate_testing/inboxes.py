"""A test inbox: the pump's ``Inbox`` adapter plus a way to put messages into it.

``TestInbox.add(raws)`` inserts raw SIS texts in order (``DATE_RECEIVED`` now, by the
server's clock, as the AODB stamps it) and returns their CMINMSGS_IDs; ``adapter`` is what
the pump reads (``MySqlInbox`` or ``PgInbox``). The table is created on construction.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import psycopg
import pymysql
from attrs import define

from flightstate_core.ports import Inbox
from flightstate_mysql import MySqlInbox, create_cminmsgs, parse_mysql_dsn
from flightstate_mysql import insert_messages as insert_mysql
from flightstate_pg.inbox import PgInbox, create_inbox_table
from flightstate_pg.inbox import insert_messages as insert_pg

__all__ = ["TestInbox", "mariadb_inbox", "pg_table_inbox"]

ZONE = "Asia/Shanghai"


@define
class TestInbox:
    """One inbox table of a test: ``kind`` is ``"mariadb"`` or ``"postgres"``."""

    __test__ = False  # not a test class, whatever pytest's collection patterns say

    kind: str
    dsn: str
    table: str
    adapter: Inbox
    _insert: Callable[[Sequence[str]], list[int]]

    def add(self, raws: Sequence[str]) -> list[int]:
        """Insert *raws* in order; their ids (ascending)."""
        return self._insert(list(raws))

    def close(self) -> None:
        """Close the adapter's connections."""
        close = getattr(self.adapter, "close", None)
        if close is not None:
            close()


def mariadb_inbox(dsn: str, table: str = "cminmsgs", zone: str = ZONE) -> TestInbox:
    """``cminmsgs``-shaped *table* in the MariaDB/MySQL database *dsn* names."""

    def insert(raws: Sequence[str]) -> list[int]:
        conn = pymysql.connect(autocommit=False, **parse_mysql_dsn(dsn))
        try:
            return insert_mysql(conn, raws, table=table)
        finally:
            conn.close()

    conn = pymysql.connect(**parse_mysql_dsn(dsn))
    try:
        create_cminmsgs(conn, table)
    finally:
        conn.close()
    return TestInbox("mariadb", dsn, table, MySqlInbox(dsn, table=table, local_tz=zone), insert)


def pg_table_inbox(dsn: str, table: str = "cminmsgs", zone: str = ZONE) -> TestInbox:
    """The PostgreSQL table of the same shape, in the database *dsn* names."""

    def insert(raws: Sequence[str]) -> list[int]:
        with psycopg.connect(dsn) as conn:
            return insert_pg(conn, raws, table=table)

    with psycopg.connect(dsn) as conn:
        create_inbox_table(conn, table)
    return TestInbox("postgres", dsn, table, PgInbox(dsn, table=table, local_tz=zone), insert)
