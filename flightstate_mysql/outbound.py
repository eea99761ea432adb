"""Outbound requests into the shared ``coutmsgs`` table (spec §2, §9).

A transport outside flightstate sends what we insert; we only ever INSERT a row (CLOB,
DATE_INSERTED, ROUTINGID; every flag column keeps its default 0) and never update or
delete one. Quirks: ``datetime`` has no zone, so DATE_INSERTED is written as airport-local
wall time (like the AODB's own columns); ROUTINGID is varchar(23). Each insert commits on
its own (autocommit); a failed call drops the connection and the next one reconnects.
"""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import Any, Final
from zoneinfo import ZoneInfo

import pymysql

from flightstate_mysql._errors import mysql_errors
from flightstate_mysql.dsn import parse_mysql_dsn

__all__ = ["ROUTING_RQFD", "ROUTING_RQRD", "MySqlOutbound"]

ROUTING_RQFD: Final = "VIEWRQFD"  # daily-schedule request
ROUTING_RQRD: Final = "VIEWRQRD"  # reference-data request
_ROUTING_WIDTH: Final = 23
_INSERT: Final = (
    "INSERT INTO `{table}` (COUTMSGS_CLOB_MSG, COUTMSGS_DATE_INSERTED, ROUTINGID)"
    " VALUES (%s, %s, %s)"
)


class MySqlOutbound:
    """Inserts outbound messages into ``coutmsgs`` (one row, one commit, per ``send``)."""

    def __init__(
        self,
        dsn: str,
        *,
        table: str = "coutmsgs",
        local_tz: ZoneInfo | str = "Asia/Shanghai",
        connect_timeout: int = 5,
        read_timeout: int = 30,
    ) -> None:
        if not table.replace("_", "").isalnum():
            raise ValueError(f"not a plain table name: {table!r}")
        self._kwargs: dict[str, Any] = parse_mysql_dsn(dsn)
        self._kwargs.setdefault("connect_timeout", connect_timeout)
        self._kwargs.setdefault("read_timeout", read_timeout)
        self._kwargs.setdefault("write_timeout", read_timeout)
        self._tz = local_tz if isinstance(local_tz, ZoneInfo) else ZoneInfo(local_tz)
        self._insert = _INSERT.format(table=table)
        self._conn: pymysql.connections.Connection[Any] | None = None

    def send(self, raw: str, routing_id: str, *, at: datetime) -> int:
        """Insert one message for the transport; return its COUTMSGS_ID (committed)."""
        if not routing_id or len(routing_id) > _ROUTING_WIDTH:
            raise ValueError(f"ROUTINGID must be 1..{_ROUTING_WIDTH} characters: {routing_id!r}")
        inserted = self._local(at)
        with mysql_errors("insert coutmsgs"):
            try:
                conn = self._connection()
                with conn.cursor() as cur:
                    cur.execute(self._insert, (raw, inserted, routing_id))
                    return int(cur.lastrowid)
            except BaseException:
                self._drop()
                raise

    def close(self) -> None:
        """Close the connection (a later call reconnects)."""
        self._drop()

    def _local(self, at: datetime) -> datetime:
        if at.tzinfo is not None:
            at = at.astimezone(self._tz).replace(tzinfo=None)
        return at.replace(microsecond=0)

    def _connection(self) -> pymysql.connections.Connection[Any]:
        if self._conn is None:
            self._conn = pymysql.connect(autocommit=True, **self._kwargs)
        return self._conn

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):  # already broken; closing is best effort
                conn.close()
