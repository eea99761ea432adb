"""AODB writers for the gap tests: one connection each, inserting into a real inbox table
(MariaDB ``cminmsgs`` or the PG-table inbox) inside a transaction they commit or roll back
when the test says, so ids are handed out before they become visible (out of id order)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg
import pymysql
from psycopg import sql

from flightstate_core.ports import Inbox
from flightstate_mysql import MySqlInbox, create_cminmsgs, parse_mysql_dsn
from flightstate_pg.inbox import PgInbox, create_inbox_table

_MYSQL_INSERT = (
    "INSERT INTO `{table}` (CMINMSGS_CLOB_MSG, CMINMSGS_DATE_RECEIVED, CMINMSGS_STATUS)"
    " VALUES (%s, %s, 'VALID')"
)
_PG_INSERT = (
    "INSERT INTO {table} (CMINMSGS_CLOB_MSG, CMINMSGS_DATE_RECEIVED, CMINMSGS_STATUS)"
    " VALUES (%s, %s, 'VALID') RETURNING CMINMSGS_ID"
)


class Writer:
    """One AODB writer connection; ``insert`` opens (or continues) its transaction."""

    def __init__(self, kind: str, dsn: str, table: str) -> None:
        self.kind, self.table = kind, table
        self._mysql: pymysql.connections.Connection[Any] | None = None
        self._pg: psycopg.Connection[Any] | None = None
        if kind == "mysql":
            self._mysql = pymysql.connect(autocommit=False, **parse_mysql_dsn(dsn))
        else:
            self._pg = psycopg.connect(dsn)

    def insert(self, raw: str) -> int:
        """Insert one row (uncommitted); its id."""
        now = datetime.now().replace(microsecond=0)
        if self._mysql is not None:
            with self._mysql.cursor() as cur:
                cur.execute(_MYSQL_INSERT.format(table=self.table), (raw, now))
                return int(cur.lastrowid)
        assert self._pg is not None
        query = sql.SQL(_PG_INSERT).format(table=sql.Identifier(self.table.lower()))
        row = self._pg.execute(query, (raw, now)).fetchone()
        assert row is not None
        return int(row[0])

    def commit(self) -> None:
        conn = self._mysql if self._mysql is not None else self._pg
        assert conn is not None
        conn.commit()

    def rollback(self) -> None:
        conn = self._mysql if self._mysql is not None else self._pg
        assert conn is not None
        conn.rollback()

    def close(self) -> None:
        for conn in (self._mysql, self._pg):
            if conn is not None:
                conn.close()


def create_table(kind: str, dsn: str, table: str) -> None:
    """The inbox table on MariaDB or PostgreSQL."""
    if kind == "mysql":
        conn = pymysql.connect(autocommit=True, **parse_mysql_dsn(dsn))
        try:
            create_cminmsgs(conn, table)
        finally:
            conn.close()
    else:
        with psycopg.connect(dsn) as pg:
            create_inbox_table(pg, table)


def open_inbox(kind: str, dsn: str, table: str) -> Inbox:
    """The pump's inbox adapter for this kind."""
    return MySqlInbox(dsn, table=table) if kind == "mysql" else PgInbox(dsn, table=table)


def unprocessed_ids(kind: str, dsn: str, table: str) -> list[int]:
    """Committed rows without DATE_PROCESSED (not backfilled)."""
    return _ids(kind, dsn, table, "WHERE CMINMSGS_DATE_PROCESSED IS NULL")


def committed_ids(kind: str, dsn: str, table: str) -> list[int]:
    """Every committed inbox id."""
    return _ids(kind, dsn, table, "")


def _ids(kind: str, dsn: str, table: str, where: str) -> list[int]:
    text = "SELECT CMINMSGS_ID FROM {t} " + where + " ORDER BY 1"
    if kind == "mysql":
        conn = pymysql.connect(autocommit=True, **parse_mysql_dsn(dsn))
        try:
            with conn.cursor() as cur:
                cur.execute(text.format(t=f"`{table}`"))
                return [int(r[0]) for r in cur.fetchall()]
        finally:
            conn.close()
    with psycopg.connect(dsn) as pg:
        query = sql.SQL(text).format(t=sql.Identifier(table.lower()))  # type: ignore[arg-type]
        return [int(r[0]) for r in pg.execute(query).fetchall()]
